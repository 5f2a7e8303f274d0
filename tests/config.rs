//! The project configuration and the chain of sets, through the real `sluice` binary (and the
//! runtime's builder, which reads the same file).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::cli::sluice_in;
use support::{call_as, noop, registry_with, temp_dir, with_context};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn outcome(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} / {}", text(&out.stdout), text(&out.stderr)))
}

/// A project directory holding `sluice.toml` with this text, and the given policy files.
fn project(name: &str, config: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = temp_dir(name);
    std::fs::write(dir.join("sluice.toml"), config).expect("write config");
    for (path, body) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, body).expect("write policy");
    }
    dir
}

const ALLOW_ALL: &str = "policy allow_all\n\nprecheck allow_everything on * => allow\n";

#[test]
fn init_writes_a_starter_that_guards_with_the_built_in_sets() {
    let dir = temp_dir("init");
    let out = sluice_in(&dir, &["init"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let again = sluice_in(&dir, &["init"], b"");
    assert_eq!(again.status.code(), Some(2), "init does not overwrite");
    assert!(text(&again.stderr).contains("--force"));

    let deny = sluice_in(&dir, &["eval", "--command", "rm -rf /", "--exit-code"], b"");
    assert_eq!(deny.status.code(), Some(4), "{}", text(&deny.stderr));
    let deny = outcome(&deny);
    assert_eq!(deny["decision"], "deny");
    assert_eq!(deny["decided_by"], "builtin:shell-safety");
    assert_eq!(deny["sets"].as_array().map(Vec::len), Some(4));

    let ask = sluice_in(
        &dir,
        &[
            "eval",
            "--command",
            "git push -f origin main",
            "--exit-code",
        ],
        b"",
    );
    assert_eq!(ask.status.code(), Some(3));
    assert_eq!(outcome(&ask)["decided_by"], "builtin:git-guard");

    let plain = sluice_in(
        &dir,
        &["eval", "--command", "git status", "--exit-code"],
        b"",
    );
    assert_eq!(plain.status.code(), Some(0));
    // Without --exit-code a decision is never an error status.
    let quiet = sluice_in(&dir, &["eval", "--command", "rm -rf /"], b"");
    assert_eq!(quiet.status.code(), Some(0));

    let named = sluice_in(
        &dir,
        &["test", "--policy", "builtin:git-guard", "builtin:network"],
        b"",
    );
    assert!(named.status.success(), "{}", text(&named.stdout));
    assert!(
        text(&named.stdout).contains("builtin:network/network.sluice"),
        "{}",
        text(&named.stdout)
    );
    // The starter's sets' own tests run from the configuration.
    let tests = sluice_in(&dir, &["test", "--config", "sluice.toml"], b"");
    assert!(tests.status.success(), "{}", text(&tests.stdout));
    assert!(
        text(&tests.stdout).contains("builtin:git-guard"),
        "{}",
        text(&tests.stdout)
    );
}

#[test]
fn the_configuration_is_found_from_a_subdirectory_or_named() {
    let dir = project("found", "[[policy]]\nset = \"builtin:git-guard\"\n", &[]);
    let nested = dir.join("src/deep");
    std::fs::create_dir_all(&nested).expect("mkdir");
    let out = sluice_in(&nested, &["eval", "--command", "git push --force"], b"");
    assert_eq!(outcome(&out)["decision"], "ask");

    let elsewhere = temp_dir("elsewhere");
    let none = sluice_in(&elsewhere, &["eval", "--command", "ls"], b"");
    assert_eq!(none.status.code(), Some(2));
    assert!(
        text(&none.stderr).contains("no `sluice.toml`"),
        "{}",
        text(&none.stderr)
    );
    let config = dir.join("sluice.toml");
    let named = sluice_in(
        &elsewhere,
        &[
            "eval",
            "--config",
            config.to_str().unwrap(),
            "--command",
            "git push --force",
        ],
        b"",
    );
    assert_eq!(outcome(&named)["decision"], "ask");
}

#[test]
fn a_malformed_configuration_is_a_diagnostic_with_a_code_a_span_and_help() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "[[polcy]]\nset = \"builtin:git-guard\"\n",
            "E0031",
            &[
                "unknown key `polcy`",
                "did you mean `policy`?",
                "sluice.toml:1:",
            ],
        ),
        (
            "[[policy]]\nsett = \"builtin:git-guard\"\n",
            "E0031",
            &["unknown key `sett`", "did you mean `set`?"],
        ),
        (
            "[[policy]]\nset = \"builtin:git-gaurd\"\n",
            "E0032",
            &[
                "no built-in policy set `git-gaurd`",
                "did you mean `builtin:git-guard`?",
            ],
        ),
        (
            "[[policy]]\nset = \"builtin:git-guard\"\nscope = \"team:x\"\n",
            "E0032",
            &["`team:x` is not a scope", "preset:NAME"],
        ),
        (
            "[[policy]]\nset = \"nowhere\"\n",
            "E0032",
            &["does not exist", "paths are relative to"],
        ),
        (
            "[[policy]]\nset = 3\n",
            "E0032",
            &["`set` must be a string, not a integer"],
        ),
        (
            "[[policy]]\nset = \"builtin:git-guard\"\n[context]\nhome = \"$hmoe\"\n",
            "E0032",
            &["not a context source", "did you mean `$home`?"],
        ),
        ("[[policy]\nset = 1\n", "E0030", &["not valid TOML"]),
        (
            "[context]\nhome = \"$home\"\n",
            "E0032",
            &["names no policy set"],
        ),
    ];
    for (config, code, needles) in cases {
        let dir = project("bad-config", config, &[]);
        let out = sluice_in(&dir, &["eval", "--command", "ls"], b"");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config}: {err}");
        assert!(err.contains(&format!("sluice::{code}")), "{config}: {err}");
        for needle in *needles {
            assert!(
                err.contains(needle),
                "{config}: expected {needle:?} in {err}"
            );
        }
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn sets_combine_in_chain_order_and_report_each_verdict() {
    let dir = project(
        "order",
        "[[policy]]\nset = \"builtin:git-guard\"\n",
        &[("allow.sluice", ALLOW_ALL)],
    );
    let allow_first = sluice_in(
        &dir,
        &[
            "eval",
            "--policy",
            "allow.sluice",
            "--policy",
            "builtin:git-guard",
            "--command",
            "git push --force",
        ],
        b"",
    );
    let allow_first = outcome(&allow_first);
    assert_eq!(allow_first["decision"], "allow");
    assert_eq!(allow_first["decided_by"], "allow.sluice");
    assert_eq!(
        allow_first["sets"][1]["precheck"], "ask",
        "the later set was still asked"
    );

    let guard_first = sluice_in(
        &dir,
        &[
            "eval",
            "--policy",
            "builtin:git-guard",
            "--policy",
            "allow.sluice",
            "--command",
            "git push --force",
        ],
        b"",
    );
    let guard_first = outcome(&guard_first);
    assert_eq!(guard_first["decision"], "ask");
    assert_eq!(guard_first["decided_by"], "builtin:git-guard");
    assert_eq!(guard_first["sets"][0]["rule"], "ask_force_push");

    let explained = sluice_in(
        &dir,
        &[
            "eval",
            "--policy",
            "allow.sluice",
            "--policy",
            "builtin:git-guard",
            "--command",
            "git push --force",
            "--explain",
        ],
        b"",
    );
    let explained = text(&explained.stdout);
    assert!(
        explained.contains("decided by: allow.sluice"),
        "{explained}"
    );
    assert!(
        explained.contains("builtin:git-guard  =>  ask by ask_force_push"),
        "{explained}"
    );
}

#[test]
fn a_gate_holds_whichever_set_comes_first() {
    let guard = "policy guard\n\ntool bash { command: string }\n\ngate never_root on bash when args.command == \"rm -rf /\" => \"never\"\n";
    let dir = project(
        "gate",
        "[[policy]]\nset = \"allow.sluice\"\n[[policy]]\nset = \"guard.sluice\"\n",
        &[("allow.sluice", ALLOW_ALL), ("guard.sluice", guard)],
    );
    let out = outcome(&sluice_in(&dir, &["eval", "--command", "rm -rf /"], b""));
    assert_eq!(out["precheck"], "allow");
    assert_eq!(out["decision"], "deny");
    assert_eq!(out["decided_by"], "guard.sluice");
    assert_eq!(out["gates"][0]["set"], "guard.sluice");
}

#[test]
fn the_network_sets_allow_list_comes_from_the_configuration() {
    let config = "[[policy]]\nset = \"builtin:network\"\n\n[context]\nallowed_hosts = [\"example.com\", \".example.org\"]\n";
    let dir = project("network", config, &[]);
    let fetch = |url: &str| {
        let call = json!({ "tool": "fetch", "args": { "url": url } });
        outcome(&sluice_in(&dir, &["eval"], call.to_string().as_bytes()))["decision"].clone()
    };
    assert_eq!(fetch("https://example.com/a"), "allow");
    assert_eq!(fetch("https://docs.example.org/a"), "allow");
    assert_eq!(fetch("https://example.org.evil.test/"), "deny");
    assert_eq!(
        fetch("https://github.com/"),
        "deny",
        "only the configured hosts"
    );
}

#[test]
fn scopes_limit_a_set_to_its_agents() {
    let config = "[[policy]]\nset = \"builtin:git-guard\"\nscope = \"agent:reviewer\"\n";
    let dir = project("scope", config, &[]);
    let other = outcome(&sluice_in(
        &dir,
        &["eval", "--command", "git push --force", "--agent", "coder"],
        b"",
    ));
    assert_eq!(other["decision"], "delegate");
    assert_eq!(other["sets"][0]["applies"], false);
    let reviewer = outcome(&sluice_in(
        &dir,
        &[
            "eval",
            "--command",
            "git push --force",
            "--agent",
            "reviewer",
        ],
        b"",
    ));
    assert_eq!(reviewer["decision"], "ask");
    let preset = "[[policy]]\nset = \"builtin:git-guard\"\nscope = \"preset:careful\"\n";
    let dir = project("preset", preset, &[]);
    let call =
        br#"{"tool":"bash","args":{"command":"git push --force"},"agent":{"presets":["careful"]}}"#;
    assert_eq!(
        outcome(&sluice_in(&dir, &["eval"], call))["decision"],
        "ask"
    );
}

#[test]
fn the_configuration_fills_the_context_the_host_did_not_send() {
    let set = r#"policy inside

context { workspace: string, hosts: list<string>, who: string }

tool write_file { path: string, content: string }
tool fetch { url: string }

precheck deny_outside on write_file
  when not path(args.path).under(context.workspace)
  => deny "outside {context.workspace}"

precheck allow_listed on fetch when url(args.url).host in context.hosts => allow

precheck deny_strangers on fetch when context.who == "stranger" => deny "who?"
"#;
    let config = "[[policy]]\nset = \"inside.sluice\"\n\n[context]\nworkspace = \"$project\"\nhosts = [\"a.example\"]\nwho = \"$env:SLUICE_TEST_WHO\"\n";
    let dir = project("context", config, &[("inside.sluice", set)]);
    let dir = dir.canonicalize().expect("canonical");
    let inside =
        json!({ "tool": "write_file", "args": { "path": dir.join("src/a.rs"), "content": "" } });
    let out = outcome(&sluice_in(&dir, &["eval"], inside.to_string().as_bytes()));
    assert_eq!(out["decision"], "delegate", "{out}");
    assert!(out["errors"].as_array().is_some_and(Vec::is_empty), "{out}");
    let outside = json!({ "tool": "write_file", "args": { "path": "/etc/passwd", "content": "" } });
    let out = outcome(&sluice_in(&dir, &["eval"], outside.to_string().as_bytes()));
    assert_eq!(out["decision"], "deny");
    assert_eq!(out["reason"], format!("outside {}", dir.display()));
    // What the host sends wins over the configuration, and --context over both.
    let sent = json!({ "tool": "write_file", "args": { "path": "/etc/passwd", "content": "" }, "context": { "workspace": "/etc" } });
    assert_eq!(
        outcome(&sluice_in(&dir, &["eval"], sent.to_string().as_bytes()))["decision"],
        "delegate"
    );
    let overridden = sluice_in(
        &dir,
        &["eval", "--context", "workspace=/srv"],
        sent.to_string().as_bytes(),
    );
    assert_eq!(outcome(&overridden)["reason"], "outside /srv");
    let fetch = br#"{"tool":"fetch","args":{"url":"https://a.example/x"}}"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"));
    child
        .current_dir(&dir)
        .env("SLUICE_TEST_WHO", "friend")
        .args(["eval", "--call", "-"]);
    let out = child
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs");
    out.stdin
        .as_ref()
        .expect("stdin")
        .write_all(fetch)
        .expect("write");
    let out = out.wait_with_output().expect("done");
    assert_eq!(outcome(&out)["decision"], "allow");
    let listed = sluice_in(
        &dir,
        &[
            "eval",
            "--context",
            r#"hosts=["b.example"]"#,
            "--context",
            "who=stranger",
        ],
        fetch,
    );
    assert_eq!(
        outcome(&listed)["decision"],
        "deny",
        "a JSON value and a string"
    );
}

#[test]
fn a_tool_no_set_declares_is_judged_by_open_rules_and_otherwise_delegated() {
    let mcp = "policy mcp\n\nprecheck ask_github_writes on mcp__github__* when args.title != null => ask \"writes to GitHub\"\n";
    let dir = project(
        "undeclared",
        "[[policy]]\nset = \"builtin:git-guard\"\n[[policy]]\nset = \"mcp.sluice\"\n",
        &[("mcp.sluice", mcp)],
    );
    let unknown = sluice_in(
        &dir,
        &["eval", "--exit-code"],
        br#"{"tool":"mcp__other__x","args":{}}"#,
    );
    assert_eq!(unknown.status.code(), Some(0), "{}", text(&unknown.stderr));
    let unknown = outcome(&unknown);
    assert_eq!(unknown["decision"], "delegate");
    assert_eq!(unknown["undeclared"], true);
    let github = outcome(&sluice_in(
        &dir,
        &["eval"],
        br#"{"tool":"mcp__github__create_issue","args":{"title":"t"}}"#,
    ));
    assert_eq!(github["decision"], "ask");
    assert_eq!(github["undeclared"], true);
    assert_eq!(github["decided_by"], "mcp.sluice");
}

#[test]
fn a_repeated_key_or_a_lone_surrogate_is_refused_never_guessed() {
    let dir = project(
        "strict",
        "[[policy]]\nset = \"builtin:shell-safety\"\n",
        &[],
    );
    let twice = br#"{"tool":"bash","args":{"command":"rm -rf /","command":"ls"}}"#;
    let out = sluice_in(&dir, &["eval"], twice);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the key `command` appears twice"),
        "{}",
        text(&out.stderr)
    );
    let lines = b"{\"tool\":\"bash\",\"args\":{\"command\":\"ls\",\"command\":\"rm -rf /\"}}\n{\"tool\":\"bash\",\"args\":{\"command\":\"\\ud800\"}}\n{\"tool\":\"bash\",\"args\":{\"command\":\"ls\"}}\n";
    let out = sluice_in(&dir, &["eval", "--jsonl"], lines);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("appears twice")),
        "{}",
        lines[0]
    );
    assert!(
        lines[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("hex escape") || e.contains("surrogate")),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["tool"], "bash");
    for (array, what) in [
        (
            &br#"["bash", {"command": "rm -rf /"}]"#[..],
            "line 1, column 1: a call is a JSON object",
        ),
        (
            &br#"{"tool": "bash", "args": {"command": "ls"}, "agent": ["a", [], []]}"#[..],
            "`agent` is an object of the agent's `id`, `labels` and `presets`, not a list",
        ),
    ] {
        let out = sluice_in(&dir, &["eval"], array);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(what), "{}", text(&out.stderr));
    }
}

#[test]
fn a_test_that_passes_only_because_a_rule_failed_closed_fails() {
    let set = r#"policy wrong_reason

context { workspace: string }
tool write_file { path: string, content: string }

precheck deny_outside on write_file
  when not path(args.path).under(context.workspace)
  => deny "outside the workspace"

test "no context given" {
  call write_file { path: "/etc/passwd", content: "" }
  expect deny
}

test "the policy error is what the test expects" {
  call write_file { path: "/etc/passwd", content: "" }
  expect deny
  expect reason "policy error in rule `deny_outside`: `context.workspace` is missing"
}

test "context given" {
  context { workspace: "/w" }
  call write_file { path: "/etc/passwd", content: "" }
  expect deny
}
"#;
    let dir = project(
        "wrong-reason",
        "[[policy]]\nset = \"set.sluice\"\n",
        &[("set.sluice", set)],
    );
    let out = sluice_in(&dir, &["test", "set.sluice"], b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL  set.sluice:10  no context given"),
        "{stdout}"
    );
    assert!(
        stdout.contains("only because rule `deny_outside` failed to evaluate"),
        "{stdout}"
    );
    assert!(stdout.contains("2 passed, 1 failed"), "{stdout}");
}

#[tokio::test]
async fn the_runtime_builds_the_same_chain_from_the_configuration() {
    use sluice_runtime::RuntimeBuilder;
    use sluice_runtime::config::Config;

    let config = "[[policy]]\nset = \"allow.sluice\"\nscope = \"agent:trusted\"\n[[policy]]\nset = \"builtin:git-guard\"\n";
    let dir = project("runtime", config, &[("allow.sluice", ALLOW_ALL)]);
    let config = Config::load(&dir.join("sluice.toml")).expect("config");
    let (builder, handles) = RuntimeBuilder::new(registry_with(vec![noop("bash")]))
        .from_config(&config, sluice::compiler::jit::Backend::Jit)
        .expect("loads");
    assert_eq!(handles.len(), 2);
    let runtime = builder.build();
    let push = |agent: &str| call_as(agent, "bash", json!({ "command": "git push --force" }));
    let trusted = runtime
        .execute(push("trusted"), tokio_util::sync::CancellationToken::new())
        .await;
    assert_eq!(
        trusted.status(),
        sluice::Status::Ok,
        "the trusted agent's set allows first"
    );
    let other = runtime
        .execute(
            with_context(&push("other"), json!({})),
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
    assert_eq!(
        other.status(),
        sluice::Status::Denied,
        "git-guard asks, and no approver means deny"
    );
}
