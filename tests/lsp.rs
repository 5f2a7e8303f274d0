//! The language server, driven as an editor drives it: spawn `sluice lsp`, speak JSON-RPC over
//! its stdin and stdout, and check the replies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications the server sent while the client waited for a response.
    notifications: Vec<Value>,
    /// Every message the server sent, as text.
    log: std::cell::RefCell<Vec<String>>,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("sluice lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = value.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                stdout.read_exact(&mut body).expect("a whole message");
                if sender
                    .send(serde_json::from_slice(&body).expect("JSON"))
                    .is_err()
                {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
            next_id: 1,
            notifications: Vec::new(),
            log: std::cell::RefCell::new(Vec::new()),
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn receive(&self) -> Value {
        let message = self
            .messages
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers within 20 s");
        self.log.borrow_mut().push(message.to_string());
        message
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
            self.notifications.push(message);
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The next diagnostics the server publishes.
    fn diagnostics(&mut self) -> Vec<Value> {
        if let Some(at) = self
            .notifications
            .iter()
            .position(|m| m["method"] == "textDocument/publishDiagnostics")
        {
            let message = self.notifications.remove(at);
            return message["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap();
        }
        loop {
            let message = self.receive();
            if message["method"] == "textDocument/publishDiagnostics" {
                return message["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap();
            }
        }
    }
}

const BROKEN: &str = "tool bash { command: string, cwd: string? }\n\nprecheck no_rm on bash\n  when args.comand.contains(\"rm\")\n  => deny \"no rm\"\n";
const FIXED: &str = "tool bash { command: string, cwd: string? }\n\nprecheck no_rm on bash\n  when args.command.contains(\"rm\")\n  => deny \"no rm\"\n";

fn position_of(text: &str, needle: &str, within: usize) -> Value {
    let offset = text.find(needle).expect("needle") + within;
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let character = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": character })
}

#[test]
fn an_editor_session() {
    let dir = std::env::temp_dir().join(format!("sluice-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("guard.sluice");
    std::fs::write(&path, BROKEN).unwrap();
    let uri = url::Url::from_file_path(&path).unwrap().to_string();
    let document = json!({ "uri": uri });

    let mut client = Client::start();
    let init = client.request(
        "initialize",
        json!({ "processId": null, "rootUri": null, "capabilities": {} }),
    );
    let capabilities = &init["capabilities"];
    assert_eq!(capabilities["hoverProvider"], true);
    assert_eq!(capabilities["definitionProvider"], true);
    assert_eq!(capabilities["documentFormattingProvider"], true);
    assert_eq!(
        capabilities["completionProvider"]["triggerCharacters"],
        json!(["."])
    );
    client.notify("initialized", json!({}));

    // Diagnostics on open: the code, its docs page, the span and the help.
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "sluice", "version": 1, "text": BROKEN } }),
    );
    let diagnostics = client.diagnostics();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let unknown = &diagnostics[0];
    assert_eq!(unknown["code"], "E0007");
    assert_eq!(unknown["severity"], 1);
    assert_eq!(unknown["source"], "sluice");
    // No link: a page on the machine that built the binary would not exist on the user's.
    assert!(unknown.get("codeDescription").is_none(), "{unknown}");
    assert_eq!(unknown["range"]["start"], position_of(BROKEN, "comand", 0));
    assert_eq!(unknown["range"]["end"], position_of(BROKEN, "comand", 6));
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `command`?"),
        "{unknown}"
    );

    // The quick fix for "did you mean".
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": document, "range": unknown["range"], "context": { "diagnostics": [unknown] } }),
    );
    assert_eq!(actions[0]["title"], "replace with `command`");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(
        actions[0]["edit"]["changes"][uri.as_str()][0]["newText"],
        "command"
    );

    // Hovering over the diagnostic explains its code: the page `sluice explain` prints.
    let explained = client.request(
        "textDocument/hover",
        json!({ "textDocument": document, "position": position_of(BROKEN, "comand", 2) }),
    );
    let text = explained["contents"]["value"].as_str().unwrap_or("");
    assert!(
        text.contains("**sluice::E0007** (unknown-field): no field `comand`"),
        "{explained}"
    );
    assert!(text.contains("Fails:") && text.contains("Fixed:"), "{text}");

    // Diagnostics on change: the fix clears them.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": FIXED }] }),
    );
    assert_eq!(client.diagnostics(), Vec::<Value>::new());

    // Hover on a field, a builtin, a tool.
    let hover = |client: &mut Client, needle: &str, within: usize| {
        let reply = client.request(
            "textDocument/hover",
            json!({ "textDocument": document, "position": position_of(FIXED, needle, within) }),
        );
        reply["contents"]["value"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let field = hover(&mut client, "args.command", 7);
    assert!(
        field.contains("`args.command`: `string`") && field.contains("`bash`"),
        "{field}"
    );
    let builtin = hover(&mut client, "contains(", 2);
    assert!(builtin.contains(".contains(s)"), "{builtin}");
    let tool = hover(&mut client, "on bash", 4);
    assert!(
        tool.contains("tool `bash` { command: string, cwd: string? }"),
        "{tool}"
    );

    // Completion after `args.` offers the tool's fields, with their types.
    let items = client.request(
        "textDocument/completion",
        json!({ "textDocument": document, "position": position_of(FIXED, "args.", 5) }),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["command", "cwd"]);
    assert_eq!(items[1]["detail"], "string?");

    // Go to the tool's declaration.
    let location = client.request(
        "textDocument/definition",
        json!({ "textDocument": document, "position": position_of(FIXED, "on bash", 4) }),
    );
    assert_eq!(location["uri"], uri.as_str());
    assert_eq!(location["range"]["start"]["line"], 0);

    // Formatting through the formatter.
    let messy = "tool   bash {command:string,cwd:string?}\n";
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 3 }, "contentChanges": [{ "text": messy }] }),
    );
    let _ = client.diagnostics();
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": document, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(
        edits[0]["newText"],
        "tool bash { command: string, cwd: string? }\n"
    );

    // Unknown methods get an error, not a crash.
    client.send(json!({ "jsonrpc": "2.0", "id": 99, "method": "workspace/symbol", "params": { "query": "" } }));
    loop {
        let message = client.receive();
        if message["id"] == 99 {
            assert_eq!(message["error"]["code"], -32601);
            break;
        }
    }

    // Nothing the server said names the directory the binary was built in.
    let build_dir = env!("CARGO_MANIFEST_DIR");
    for message in client.log.borrow().iter() {
        assert!(!message.contains(build_dir), "{message}");
    }

    assert_eq!(client.request("shutdown", Value::Null), Value::Null);
    client.notify("exit", Value::Null);
    let status = client.child.wait().expect("the server exits");
    assert!(status.success(), "{status}");
    std::fs::remove_dir_all(&dir).ok();
}
