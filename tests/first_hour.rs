//! The rough edges a new user meets in the first hour, each fixed and held here on the real
//! binary: explaining codes, misspelt keywords, cascades, examples, failing tests, call JSON,
//! `delegate`, what `compile` shows and `~` in shell paths.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::path::PathBuf;

use support::cli::sluice;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A policy file in a directory of its own.
fn policy(name: &str, source: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-first-hour-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.sluice"));
    std::fs::write(&path, source).expect("write");
    path
}

#[allow(dead_code)] // used by later tests of this file
fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[test]
fn explain_prints_a_codes_page_from_the_binary() {
    for spelling in ["E0007", "e0007", "sluice::E0007"] {
        let out = sluice(&["explain", spelling], b"");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let page = text(&out.stdout);
        assert!(page.starts_with("## E0007\n"), "{page}");
        assert!(page.contains("(unknown-field)"), "{page}");
        assert!(page.contains("Fails:") && page.contains("Fixed:"), "{page}");
        assert!(!page.contains("## E0008"), "one code's page only: {page}");
    }
    let last = text(&sluice(&["explain", "W0005"], b"").stdout);
    assert!(
        last.contains("empty-match-guard") && last.contains("Fixed:"),
        "{last}"
    );

    let out = sluice(&["explain", "E0070"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("`E0070` is not a diagnostic code"), "{err}");
    assert!(err.contains("did you mean `E0007`?"), "{err}");
}

#[test]
fn misspelt_effects_rule_kinds_and_keywords_are_named_with_a_suggestion() {
    let tool = "tool bash { command: string }\n\n";
    for (name, rule, message, suggestion) in [
        (
            "effect",
            "precheck r on bash\n  when args.command.contains(\"rm\")\n  => deney \"no\"\n",
            "unknown effect `deney`",
            "did you mean `deny`?",
        ),
        (
            "bare-effect",
            "gate r on bash\n  when args.command.contains(\"rm\")\n  => alow\n",
            "unknown effect `alow`",
            "did you mean `allow`?",
        ),
        (
            "kind",
            "prechek r on bash when args.command.contains(\"rm\") => deny \"no\"\n",
            "unknown rule kind `prechek`",
            "did you mean `precheck`?",
        ),
        (
            "keyword",
            "precheck r on bash\n  wen args.command.contains(\"rm\")\n  => deny \"no\"\n",
            "unknown keyword `wen`",
            "did you mean `when`?",
        ),
        (
            "examples",
            "precheck r on bash when args.command == \"x\" => deny \"no\"\n  exampels { deny: [] }\n",
            "unknown keyword `exampels`",
            "did you mean `examples`?",
        ),
    ] {
        let file = policy(&format!("misspelt-{name}"), &format!("{tool}{rule}"));
        let out = sluice(&["check", path(&file)], b"");
        let report = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{report}");
        assert!(report.contains("sluice::E0027"), "{name}: {report}");
        assert!(report.contains(message), "{name}: {report}");
        assert!(report.contains(suggestion), "{name}: {report}");
        assert!(
            report.contains("1 error, 0 warnings"),
            "{name}: one diagnostic: {report}"
        );
    }
}

#[test]
fn a_rule_that_does_not_parse_brings_no_lint_warnings() {
    // `bash` is used only by the broken rule, and the glob only matches a tool whose declaration
    // is broken: neither is worth a warning while the syntax error stands.
    let file = policy(
        "cascade",
        "tool bash { command: string }\ntool fetch { url: strin }\ntool read { path: string }\n\n\
         precheck r on bash\n  when\n  => deny \"no\"\n\n\
         precheck f on fetch*, read\n  when args.path == \"x\"\n  => deny \"no\"\n",
    );
    let out = sluice(&["check", path(&file)], b"");
    let report = text(&out.stdout);
    assert!(report.contains("sluice::E0001"), "{report}");
    assert!(
        !report.contains("W0003") && !report.contains("W0004"),
        "{report}"
    );
    assert!(report.contains("2 errors, 0 warnings"), "{report}");
}

#[test]
fn a_misspelt_key_in_examples_is_named_with_a_suggestion() {
    let file = policy(
        "example-typo",
        "context { workspace: string }\ntool bash { command: string }\n\n\
         precheck r on bash when args.command == \"x\" => deny \"no\"\n  \
         examples { deny: [{ comand: \"x\" }], pass: [{ command: \"y\" }] }\n\n\
         precheck q on bash when args.command == context.workspace => deny \"no\"\n  \
         examples { context: { worksapce: \"/w\" }, agent: { lables: [] }, dney: [{ command: \"/w\" }] }\n\n\
         postcheck p on bash when result.content.contains(\"k\") => replace content \"x\"\n  \
         examples { match: [{ contnet: \"k\" }] }\n",
    );
    let out = sluice(&["check", path(&file)], b"");
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    for expected in [
        "invalid example `bash` arguments: unknown field `comand` (did you mean `command`?)",
        "invalid example context fields: unknown field `worksapce` (did you mean `workspace`?)",
        "invalid example agent fields: unknown field `lables` (did you mean `labels`?)",
        "unknown example key `dney` (did you mean `deny`?)",
        "invalid example result fields: unknown field `contnet` (did you mean `content`?)",
    ] {
        assert!(report.contains(expected), "{expected}: {report}");
    }
    // The misspelt field is named where it is, not reported as the field the rule missed.
    assert!(!report.contains("is missing"), "{report}");
    assert!(report.contains("5 errors, 0 warnings"), "{report}");
}

#[test]
fn a_failing_test_prints_the_policy_error_that_decided_it() {
    let file = policy(
        "failed-closed",
        "context { workspace: string }\ntool write_file { path: string, content: string }\n\n\
         precheck deny_outside on write_file\n  when not path(args.path).under(context.workspace)\n  \
         => deny \"outside the workspace\"\n\n\
         test \"a write in the workspace is allowed\" {\n  \
         call write_file { path: \"/w/a.txt\", content: \"\" }\n  expect allow\n}\n",
    );
    let out = sluice(&["test", path(&file)], b"");
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("expected allow, got deny"), "{report}");
    assert!(
        report.contains(
            "reason: policy error in rule `deny_outside`: `context.workspace` is missing"
        ),
        "{report}"
    );
    assert!(
        report.contains("evaluation error: precheck `deny_outside` (")
            && report.contains("failed-closed.sluice:4): `context.workspace` is missing"),
        "{report}"
    );
}

#[test]
fn a_call_that_is_not_one_is_explained_in_a_calls_terms_with_its_line_and_column() {
    let tour = "tests/fixtures/tour.sluice";
    for (call, expected) in [
        (
            "[]",
            "invalid call: line 1, column 1: a call is a JSON object (`{\"tool\": \"bash\", \"args\": {…}}`), not a list",
        ),
        (
            r#"{"tool":"bash","tol":1}"#,
            "invalid call: line 1, column 16: unknown field `tol` in a call: did you mean `tool`?",
        ),
        (
            r#"{"tool":"bash","zzz":1}"#,
            "unknown field `zzz` in a call: a call has `tool`, `args`, `agent`, `context`, `result` and `session`",
        ),
        (
            "{\n  \"tool\": \"bash\",\n  \"args\": {\"command\": \"ls\"},\n  \"agent\": {\"lables\": []}\n}",
            "invalid call: line 4, column 13: unknown field `lables` in `agent`: did you mean `labels`?",
        ),
        (
            r#"{"tool": }"#,
            "invalid call: line 1, column 10: not valid JSON: expected value",
        ),
        (
            r#"{"args": {}}"#,
            "invalid call: line 1, column 1: the call has no `tool`",
        ),
        (
            r#"{"tool": "bash", "args": []}"#,
            "invalid call: line 1, column 26: `args` is an object of the tool's arguments, not a list",
        ),
        (
            r#"{"tool":"bash","result":{"status":"okay"}}"#,
            "line 1, column 35: `result.status` is one of `ok`, `error`, `denied`, `aborted` or `timeout`, not `okay`",
        ),
        (
            r#"{"tool":"bash","agent":{"labels":["a",1]}}"#,
            "line 1, column 39: `agent.labels` must be a list of strings; item 2 is a number",
        ),
    ] {
        let out = sluice(&["eval", "--policy", tour], call.as_bytes());
        assert_eq!(out.status.code(), Some(2), "{call}");
        let err = text(&out.stderr);
        assert!(err.contains(expected), "{call}: {err}");
        assert!(
            !err.contains("invalid JSON") && !err.contains("struct Call"),
            "no serde wording: {err}"
        );
    }
    // In a stream, each bad line says where in that line.
    let out = sluice(
        &["eval", "--policy", tour, "--jsonl"],
        b"{\"tool\":\"bash\",\"args\":{\"command\":\"ls\"}}\n{\"tool\":\"bash\",\"argz\":{}}\n",
    );
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(
        lines[1]["error"],
        "invalid call: line 1, column 16: unknown field `argz` in a call: did you mean `args`?"
    );
}

/// Each rule `compile --emit` names, with what it says of the rule's condition.
fn emitted(emit: &str, set: &str) -> Vec<(String, String)> {
    let out = sluice(&["compile", "--emit", emit, set], b"");
    assert!(out.status.success(), "{set}: {}", text(&out.stderr));
    let report = text(&out.stdout);
    let mut rules = Vec::new();
    for line in report.lines() {
        let entry = match emit {
            "clif" => line.strip_prefix("; rule `"),
            _ => line
                .strip_prefix("  settled      ")
                .or(line.strip_prefix("  interpreted  ")),
        };
        if let Some(entry) = entry {
            let (name, what) = entry.split_once(['`', ':']).expect("a rule's name");
            let what = what.trim_start_matches(['`', ':', ' ']);
            rules.push((name.to_string(), what.to_string()));
        }
    }
    if emit == "stats" {
        let conditions = report
            .lines()
            .find_map(|l| l.strip_prefix("  conditions   "))
            .expect("a conditions line");
        let native: usize = conditions
            .split(": ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a native count");
        rules.push(("(native)".into(), native.to_string()));
    } else {
        let functions = report.matches("\nfunction ").count();
        rules.retain(|(_, what)| !what.is_empty());
        rules.push(("(native)".into(), functions.to_string()));
    }
    rules
}

#[test]
fn compile_clif_and_stats_say_the_same_of_every_condition() {
    let guard = policy(
        "tour-guard",
        "policy guard \"Keeps an agent away from the root directory\"\n\ntool bash { command: string }\n\n\
         precheck deny_root_delete on bash\n  when args.command matches r\"\\brm\\s+-(rf|fr)\\s+/(\\s|$)\"\n  \
         => deny \"deleting / is never allowed\"\n",
    );
    let clif = text(&sluice(&["compile", "--emit", "clif", path(&guard)], b"").stdout);
    assert!(
        clif.contains("; rule `deny_root_delete`: no function: its condition is one test of `args.command` that the field scan settles both ways"),
        "{clif}"
    );
    let stats = text(&sluice(&["compile", "--emit", "stats", path(&guard)], b"").stdout);
    assert!(
        stats.contains("conditions   1: 0 native, 1 settled by field scans, 0 interpreted"),
        "{stats}"
    );
    let mut sets = vec![
        path(&guard).to_string(),
        "tests/fixtures/tour.sluice".into(),
    ];
    for entry in std::fs::read_dir("policies").expect("policies") {
        let dir = entry.expect("entry").path();
        if dir.file_name().is_some_and(|n| n != "vocabulary") {
            sets.push(dir.to_str().expect("UTF-8").to_string());
        }
    }
    for set in &sets {
        assert_eq!(emitted("clif", set), emitted("stats", set), "{set}");
    }
    // Per-part rules (`for cmd in shell(…)`) are compiled like any other: shell-safety's 49
    // conditions, most of them per-part, all have native code.
    let shell = text(
        &sluice(
            &["compile", "--emit", "stats", "policies/shell-safety"],
            b"",
        )
        .stdout,
    );
    assert!(
        shell.contains("conditions   49: 49 native, 0 settled by field scans, 0 interpreted"),
        "{shell}"
    );
}

#[test]
fn a_misspelt_import_is_named_and_import_itself_is_never_a_misspelling() {
    let file = policy(
        "misspelt-import",
        "imprt \"../vocabulary/tools.sluice\"\n\nprecheck r on bash when args.command == \"x\" => deny \"no\"\n",
    );
    let out = sluice(&["check", path(&file)], b"");
    let report = text(&out.stdout);
    assert!(report.contains("sluice::E0027"), "{report}");
    assert!(report.contains("unknown keyword `imprt`"), "{report}");
    assert!(report.contains("did you mean `import`?"), "{report}");
    // The tools the import would have declared are not reported as unknown on top of it.
    assert!(!report.contains("E0006"), "{report}");
    assert!(report.contains("1 error, 0 warnings"), "{report}");
}

#[test]
fn a_broken_declaration_brings_no_unknown_tool_errors_until_the_set_parses() {
    let broken = policy(
        "broken-declaration",
        "tol bash { command: string }\n\nprecheck r on bash when args.command == \"x\" => deny \"no\"\n",
    );
    let report = text(&sluice(&["check", path(&broken)], b"").stdout);
    assert!(report.contains("unknown keyword `tol`"), "{report}");
    assert!(!report.contains("E0006"), "{report}");
    assert!(report.contains("1 error, 0 warnings"), "{report}");
    // Once it parses, a tool nothing declares is reported again.
    let parsed = policy(
        "undeclared-tool",
        "tool bash { command: string }\n\nprecheck r on bsh when args.command == \"x\" => deny \"no\"\n",
    );
    let report = text(&sluice(&["check", path(&parsed)], b"").stdout);
    assert!(
        report.contains("sluice::E0006") && report.contains("did you mean `bash`?"),
        "{report}"
    );
}

#[test]
fn home_in_shell_paths_is_the_calls_home_directory() {
    let judge = |line: &str| {
        let out = sluice(
            &[
                "eval",
                "--policy",
                "builtin:shell-safety",
                "--context",
                "workspace=/home/me/project",
                "--context",
                "home=/home/me",
                "--command",
                line,
            ],
            b"",
        );
        let outcome: serde_json::Value =
            serde_json::from_str(&text(&out.stdout)).expect("an outcome");
        (
            outcome["decision"].as_str().unwrap_or("").to_string(),
            outcome["rule"]["name"].as_str().unwrap_or("").to_string(),
        )
    };
    // Inside the workspace however the home is spelt: nothing to ask (`~/project/build` was
    // compared as the relative-looking `~/project/build` before).
    assert_eq!(judge("rm -rf ~/project/build").0, "delegate");
    assert_eq!(judge("rm -rf $HOME/project/dist").0, "delegate");
    assert_eq!(
        judge("rm -rf $HOME/x"),
        ("ask".into(), "ask_deleting_outside_workspace".into())
    );
    for line in [
        "rm -rf ~",
        "rm -rf $HOME",
        "rm -rf \"${HOME}/\"",
        "cd ~/project && rm -rf ..",
    ] {
        assert_eq!(
            judge(line),
            ("deny".into(), "deny_deleting_roots".into()),
            "{line}"
        );
    }

    let out = sluice(
        &[
            "shell",
            "--home",
            "/home/me",
            "--format",
            "json",
            "cat ~/.aws/credentials && cd && ls > ~root/x",
        ],
        b"",
    );
    let parts: serde_json::Value = serde_json::from_str(&text(&out.stdout)).expect("parts");
    assert_eq!(parts[0]["paths"][0], "/home/me/.aws/credentials");
    assert_eq!(parts[2]["cwd"], "/home/me");
    assert_eq!(parts[2]["writes"][0], "~root/x");
}

#[test]
fn explain_says_what_delegate_means_for_one_set_and_for_a_chain() {
    let guard = policy(
        "delegate",
        "tool bash { command: string }\n\nprecheck r on bash when args.command == \"rm -rf /\" => deny \"no\"\n",
    );
    let one = text(
        &sluice(
            &[
                "eval",
                "--policy",
                path(&guard),
                "--explain",
                "--command",
                "ls",
            ],
            b"",
        )
        .stdout,
    );
    assert!(one.starts_with("decision: delegate\n"), "{one}");
    assert!(
        one.contains("no rule matched: the set has no opinion on this call, so it delegates."),
        "{one}"
    );
    assert!(!one.contains("chain"), "one set is no chain: {one}");
    assert!(one.contains("runs the call when no link is left"), "{one}");
    assert!(
        one.contains("delegate: Sluice leaves the call to whoever asked.")
            && one.contains("`sluice eval --exit-code` exits 0 as for allow"),
        "{one}"
    );
    let two = text(
        &sluice(
            &[
                "eval",
                "--policy",
                path(&guard),
                "--policy",
                "builtin:git-guard",
                "--explain",
                "--command",
                "ls",
            ],
            b"",
        )
        .stdout,
    );
    assert!(
        two.contains("none of the 2 sets has an opinion on this call, so the chain delegates."),
        "{two}"
    );
    let out = sluice(
        &[
            "eval",
            "--policy",
            path(&guard),
            "--exit-code",
            "--command",
            "ls",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "delegate exits as allow does");
}
