//! A real `sluice serve` on a loopback port, and a plain HTTP/1.1 client for it: bytes on a TCP
//! socket, so a test can send what no well-behaved client would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// A running server; killed when dropped.
pub struct Server {
    pub addr: SocketAddr,
    child: Child,
    /// What the server printed on stderr after its first line, as it comes.
    pub log: mpsc::Receiver<String>,
}

impl Server {
    /// `sluice serve --config DIR/sluice.toml --listen 127.0.0.1:0 EXTRA`, once it listens.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        Server::try_start(dir, extra).unwrap_or_else(|error| panic!("the server starts: {error}"))
    }

    /// The server, or what it printed before it exited.
    pub fn try_start(dir: &Path, extra: &[&str]) -> Result<Server, String> {
        let config = dir.join("sluice.toml");
        let mut defaults = vec!["--watch-ms", "100"];
        if !extra.contains(&"--listen") {
            defaults.extend(["--listen", "127.0.0.1:0"]);
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .args(if extra.contains(&"--watch-ms") {
                &defaults[2..]
            } else {
                &defaults[..]
            })
            .args(extra)
            .current_dir(dir)
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sluice serve runs");
        let stderr = child.stderr.take().expect("stderr");
        let (lines, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut printed = Vec::new();
        loop {
            match log.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix("sluice serve: listening on ") {
                        let addr = rest
                            .split_whitespace()
                            .next()
                            .and_then(|url| url.split("://").nth(1))
                            .and_then(|a| a.parse().ok())
                            .expect("an address");
                        return Ok(Server { addr, child, log });
                    }
                    printed.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(printed.join("\n"));
                }
            }
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[], b"")
    }

    pub fn post(&self, path: &str, body: &str) -> Response {
        self.request(
            "POST",
            path,
            &[("content-type", "application/json")],
            body.as_bytes(),
        )
    }

    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.raw(&bytes)
    }

    /// Sends `bytes` as they are and reads the answer to its end.
    pub fn raw(&self, bytes: &[u8]) -> Response {
        let mut stream = self.connect();
        stream.write_all(bytes).expect("send");
        read_response(&mut stream)
    }

    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        stream
    }

    /// Sends a signal to the server (`TERM`, `HUP`).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits for the server to exit, and says how.
    pub fn wait(mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The next stderr line that contains `text`, within `within`.
    pub fn wait_for_log(&self, text: &str, within: Duration) -> Option<String> {
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(std::time::Instant::now())?;
            match self.log.recv_timeout(left) {
                Ok(line) if line.contains(text) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("the body is JSON ({e}): {:?} ({})", self.body, self.status))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 response, read to the connection's end (chunked bodies are joined).
pub fn read_response(stream: &mut TcpStream) -> Response {
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_response(&bytes)
}

pub fn parse_response(bytes: &[u8]) -> Response {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}
