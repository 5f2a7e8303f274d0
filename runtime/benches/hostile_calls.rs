//! Hostile calls at the size limit of a call (1 MiB of JSON): the shapes that once made a
//! decision super-linear or merely long, each filled out to the limit. Shared by the `hostile`
//! bench, which times each through the default chain, and by `tests/bounds.rs`, which checks
//! that none of them is allowed or delegated and that each ends within its budget.

use serde_json::json;
use sluice_compiler::call::{Call, Status, ToolResult};

/// The room a shape has inside a call of at most 1 MiB of JSON: its envelope and escapes are
/// well under the rest.
const ROOM: usize = (1 << 20) - 4096;

/// `unit` repeated to `bytes` bytes (cut on a character boundary).
fn fill(unit: &str, bytes: usize) -> String {
    let mut text = unit.repeat(bytes / unit.len().max(1) + 1);
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

/// Units of command lines that, repeated, once cost super-linear time or much time per byte.
/// Those with quotes or backslashes are sized so that their JSON escapes still fit.
const LINES: &[(&str, &str, &str)] = &[
    ("pipes", "", "a|"),
    ("pipes_then_command", "", "a|"),
    ("substitutions_quoted", "", "\"$("),
    ("substitutions_assigned", "", "x=$("),
    ("and_lists", "", "a && "),
    ("statements", "", "a;"),
    ("words", "", "a "),
    ("delete_operands", "rm -rf ", "/x "),
    ("open_quotes", "", "a \""),
    ("backquotes", "", "`"),
    ("heredocs", "", "a <<E\n"),
    ("braces", "", "{a,b}"),
    ("arithmetic", "", "$(("),
    ("interpreter_code", "python -c '", "os.system(\"x\");"),
    ("nested_bash_c", "", "bash -c '"),
    ("ansi_c_escapes", "$'", "\\u0041"),
    ("system_globs", "", "/???/"),
    ("lines", "", "ls\n"),
    ("variables", "", "$a"),
    ("redirections", "", "a >b "),
    ("parentheses", "", "("),
    ("sed_scripts", "sed ", "-e s/a/b/ "),
    ("find_exec", "find . ", "-exec rm {} ; "),
    ("git_options", "git ", "-c a=b "),
    ("wrappers_xargs", "", "xargs "),
    ("wrappers_env", "", "env "),
    ("wrappers_sudo", "", "sudo "),
    ("cd_chain", "", "cd a && "),
    ("line_continuations", "", "a\\\n"),
];

/// Outputs whose scanning for secrets once cost much time per byte.
const OUTPUTS: &[(&str, &str)] = &[
    ("key_ids", "AKIA0123456789ABCDEF ghp_"),
    ("pem_headers", "-----BEGIN RSA PRIVATE KEY-----\n"),
    ("jwt_prefixes", "eyJhbGciOiJIUzI1NiJ9.eyJ"),
    ("password_assignments", "password="),
    ("hex", "0123456789abcdef"),
    ("base64", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo"),
    ("url_credentials", "https://u:p@"),
    ("exported_secrets", "export AWS_SECRET_ACCESS_KEY="),
    ("bearer_headers", "Authorization: Bearer "),
];

/// The bytes a unit's JSON string takes for each of its own bytes, at most.
fn escaped(unit: &str) -> usize {
    let plain = unit.len().max(1);
    let json = serde_json::to_string(unit).map_or(plain * 6, |s| s.len() - 2);
    json.div_ceil(plain).max(1)
}

/// Every hostile call, named, each at most 1 MiB of JSON.
pub fn hostile_calls() -> Vec<(String, Call)> {
    let bash = |command: String| {
        let mut call = Call::new("bash", json!({ "command": command, "cwd": "/w" }));
        call.context = json!({ "workspace": "/w", "home": "/home/me", "cwd": "/w" });
        call
    };
    let mut calls = Vec::new();
    for (name, head, unit) in LINES {
        let room = ROOM / escaped(unit) - head.len() - 8;
        let mut line = format!("{head}{}", fill(unit, room));
        if *name == "pipes_then_command" {
            line.push('b');
        }
        calls.push((format!("bash/{name}"), bash(line)));
    }
    for (name, unit) in OUTPUTS {
        let text = fill(unit, ROOM / escaped(unit) / 2);
        let mut content = bash("cat notes.txt".into());
        content.result = Some(ToolResult {
            status: Status::Ok,
            content: text.clone(),
            value: serde_json::Value::Null,
            error: None,
        });
        calls.push((format!("output/{name}"), content));
        let mut value = bash("cat notes.json".into());
        value.result = Some(ToolResult {
            status: Status::Ok,
            content: String::new(),
            value: json!({ "text": text }),
            error: None,
        });
        calls.push((format!("value/{name}"), value));
    }
    let mut files = vec![
        (
            "fetch/long_url",
            Call::new(
                "fetch",
                json!({ "url": format!("https://x.example/{}", fill("a/", ROOM)) }),
            ),
        ),
        (
            "write_file/long_path",
            Call::new(
                "write_file",
                json!({ "path": fill("a/", ROOM), "content": "x" }),
            ),
        ),
        (
            "write_file/dot_dot_path",
            Call::new(
                "write_file",
                json!({ "path": fill("../", ROOM), "content": "x" }),
            ),
        ),
        (
            "write_file/secret_content",
            Call::new(
                "write_file",
                json!({ "path": "a", "content": fill("AKIA0123456789ABCDEF ", ROOM) }),
            ),
        ),
    ];
    for (_, call) in &mut files {
        call.context = json!({ "workspace": "/w", "home": "/home/me", "cwd": "/w" });
    }
    calls.extend(files.into_iter().map(|(n, c)| (n.to_string(), c)));
    calls
}
