//! Who may ask: loopback by default, a bearer token or mutual TLS for anything else.

use std::path::Path;
use std::process::Command;

use crate::project;
use crate::support::server::Server;

#[test]
fn listening_beyond_loopback_without_authentication_is_refused() {
    let dir = project("open", &[]);
    let output = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--config"])
        .arg(dir.join("sluice.toml"))
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{stderr}"
    );
    assert!(stderr.contains("--token-file"), "{stderr}");
}

#[test]
fn a_token_guards_every_deciding_endpoint_and_is_checked_whole() {
    let dir = project("token", &[("token", "s3cr3t-token-0123456789abcdef\n")]);
    let token_file = dir.join("token");
    let server = Server::start(&dir, &["--token-file", token_file.to_str().unwrap()]);
    let call = br#"{"tool":"bash","args":{"command":"ls"}}"#;
    let good = "Bearer s3cr3t-token-0123456789abcdef";
    for (path, method) in [
        ("/v1/decide", "POST"),
        ("/v1/hooks/claude-code", "POST"),
        ("/access/v1/evaluation", "POST"),
        ("/metrics", "GET"),
    ] {
        let none = server.request(method, path, &[], call);
        assert_eq!(none.status, 401, "{path}");
        assert_eq!(none.json()["error"]["code"], "unauthorized");
        assert_eq!(none.header("www-authenticate"), Some("Bearer"));
        for wrong in [
            "Bearer s3cr3t-token-0123456789abcdeX",
            "Bearer s3cr3t",
            "Basic abc",
            "Bearer ",
        ] {
            let answer = server.request(method, path, &[("authorization", wrong)], call);
            assert_eq!(answer.status, 401, "{path} {wrong}");
        }
    }
    let answer = server.request("POST", "/v1/decide", &[("authorization", good)], call);
    assert_eq!(answer.status, 200, "{}", answer.body);
    // Health checks and the AuthZEN metadata need no token.
    assert_eq!(server.get("/healthz").status, 200);
    assert_eq!(server.get("/readyz").status, 200);
    assert_eq!(server.get("/.well-known/authzen-configuration").status, 200);

    let short = project("short-token", &[("token", "abc")]);
    let refused = Server::try_start(
        &short,
        &["--token-file", short.join("token").to_str().unwrap()],
    );
    let Err(printed) = refused else {
        panic!("a short token was taken")
    };
    assert!(printed.contains("shorter than 16"), "{printed}");
}

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .status()
        .expect("openssl runs");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, both signed by the CA.
fn certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=test-ca",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
    .unwrap();
    for who in ["server", "client"] {
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{who}.key"),
                "-out",
                &format!("{who}.csr"),
                "-subj",
                &format!("/CN={who}"),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{who}.csr"),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &format!("{who}.pem"),
                "-days",
                "2",
                "-extfile",
                &format!("{who}.ext"),
            ],
        );
    }
}

#[test]
fn mutual_tls_lets_a_server_listen_beyond_loopback_and_admits_only_signed_clients() {
    let dir = project("mtls", &[]);
    certificates(&dir);
    let path = |name: &str| dir.join(name).display().to_string();
    let server = Server::start(
        &dir,
        &[
            "--listen",
            "0.0.0.0:0",
            "--tls-cert",
            &path("server.pem"),
            "--tls-key",
            &path("server.key"),
            "--client-ca",
            &path("ca.pem"),
        ],
    );
    let url = format!("https://127.0.0.1:{}/v1/decide", server.addr.port());
    let curl = |extra: &[&str]| {
        Command::new("curl")
            .args([
                "-sS",
                "--cacert",
                &path("ca.pem"),
                "-d",
                r#"{"tool":"bash","args":{"command":"rm -rf /"}}"#,
            ])
            .args(extra)
            .arg(&url)
            .output()
            .unwrap()
    };
    let admitted = curl(&["--cert", &path("client.pem"), "--key", &path("client.key")]);
    let body = String::from_utf8_lossy(&admitted.stdout);
    assert!(
        admitted.status.success(),
        "{}",
        String::from_utf8_lossy(&admitted.stderr)
    );
    assert!(body.contains(r#""decision":"deny""#), "{body}");
    let refused = curl(&[]);
    assert!(
        !refused.status.success(),
        "a client without a certificate got in"
    );
    assert!(refused.stdout.is_empty());
}
