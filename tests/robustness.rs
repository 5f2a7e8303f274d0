//! Robustness: random and mutated policy text never panics or hangs the compiler; random and
//! hostile calls never panic the interpreter.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use proptest::prelude::*;
use sluice::compiler::call::Call;
use sluice::{Database, Evaluator};

/// The shipped sets by their paths, so that their imports resolve.
const SHIPPED: &[(&str, &str)] = &[
    (
        "policies/coding-agent/coding-agent.sluice",
        include_str!("../policies/coding-agent/coding-agent.sluice"),
    ),
    (
        "policies/readonly/readonly.sluice",
        include_str!("../policies/readonly/readonly.sluice"),
    ),
    (
        "policies/secrets-redaction/secrets-redaction.sluice",
        include_str!("../policies/secrets-redaction/secrets-redaction.sluice"),
    ),
    (
        "policies/network/network.sluice",
        include_str!("../policies/network/network.sluice"),
    ),
    (
        "policies/shell-safety/shell-safety.sluice",
        include_str!("../policies/shell-safety/shell-safety.sluice"),
    ),
    (
        "policies/git-guard/git-guard.sluice",
        include_str!("../policies/git-guard/git-guard.sluice"),
    ),
    (
        "tests/fixtures/tour.sluice",
        include_str!("fixtures/tour.sluice"),
    ),
];

/// Compiles text through the whole front end: parse, check, lower, lint, examples, tests.
fn compile(text: &str) {
    let mut db = Database::default();
    let compiled = db.compile_texts("fuzz", vec![("fuzz.sluice".into(), text.to_string())]);
    if let Some(program) = &compiled.program {
        let interpreter = Evaluator::interpreted(program);
        let _ = sluice::compiler::testing::run_tests(&compiled.checked, &|call| {
            interpreter.evaluate(call)
        });
    }
    // Whatever parses formats idempotently, and formatting never changes the syntax tree.
    if let Ok(formatted) = sluice::compiler::format::format_source("fuzz.sluice", text) {
        let again = sluice::compiler::format::format_source("fuzz.sluice", &formatted)
            .expect("formatted text parses");
        assert_eq!(
            formatted, again,
            "formatting is not idempotent for {text:?}"
        );
        let (before, _) = sluice::compiler::parser::parse_file("a", text);
        let (after, _) = sluice::compiler::parser::parse_file("b", &formatted);
        assert_eq!(before, after, "formatting changed the meaning of {text:?}");
    }
}

/// Tokens the grammar knows, so random text gets past the first character often.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "tool",
            "context",
            "precheck",
            "gate",
            "postcheck",
            "test",
            "policy",
            "on",
            "when",
            "=>",
            "allow",
            "deny",
            "ask",
            "accept",
            "replace",
            "content",
            "value",
            "fail",
            "with",
            "attach",
            "examples",
            "call",
            "expect",
            "result",
            "agent",
            "args",
            "tool",
            "any",
            "all",
            "path",
            "url",
            "len",
            "redact",
            "and",
            "or",
            "not",
            "in",
            "matches",
            "glob",
            "??",
            "==",
            "!=",
            "<",
            ">",
            "+",
            "(",
            ")",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            ".",
            "?",
            "*",
            "|",
            "string",
            "int",
            "list<",
            "bool",
            "\"",
            "r\"",
            "#",
            "\n",
            " ",
            "x",
            "bash",
            "command",
            "1",
            "-2",
            "3.5",
            "true",
            "null",
        ])
        .prop_map(str::to_string),
        "[a-z_]{1,8}",
        "\"[^\"\\\\]{0,8}\"",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_token_soup_never_panics(tokens in prop::collection::vec(token(), 0..60)) {
        compile(&tokens.join(" "));
    }

    #[test]
    fn random_bytes_never_panic(text in "\\PC{0,200}") {
        compile(&text);
    }

    #[test]
    fn mutated_policies_never_panic(
        which in 0..SHIPPED.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, token()), 1..8),
    ) {
        let mut text = SHIPPED[which].1.to_string();
        for (at, kind, insert) in edits {
            let mut at = at.index(text.len().max(1)).min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match kind {
                0 => text.insert_str(at, &insert),
                1 => {
                    let end = (at + insert.len()).min(text.len());
                    let end = (end..=text.len()).find(|e| text.is_char_boundary(*e)).unwrap_or(text.len());
                    text.replace_range(at..end, "");
                }
                _ => {
                    let end = (at + 1..=text.len()).find(|e| text.is_char_boundary(*e)).unwrap_or(text.len());
                    text.replace_range(at..end, &insert);
                }
            }
        }
        compile(&text);
    }

    #[test]
    fn random_calls_never_panic(
        which in 0..SHIPPED.len(),
        tool in prop::sample::select(vec!["bash", "read_file", "write_file", "fetch", "http_request", "other"]),
        args in arbitrary_json(3),
        context in arbitrary_json(2),
        labels in prop::collection::vec("[a-z:]{0,10}", 0..4),
        content in "\\PC{0,64}",
    ) {
        let mut db = Database::default();
        let compiled = db.compile_texts("p", vec![(SHIPPED[which].0.into(), SHIPPED[which].1.to_string())]);
        let program = compiled.program.expect("shipped policies compile");
        let mut call = Call::new(tool, args);
        if !call.args.is_object() {
            call.args = serde_json::json!({ "command": call.args, "path": call.args, "url": call.args });
        }
        call.context = if context.is_object() { context } else { serde_json::json!({ "workspace": context }) };
        call.agent.labels = labels;
        call.result = Some(sluice::ToolResult::ok(content));
        let outcome = Evaluator::interpreted(&program).evaluate(&call);
        // Whatever the input, an evaluation error must fail closed.
        if !outcome.errors.is_empty() {
            prop_assert!(outcome.decision == sluice::Decision::Deny || outcome.postcheck.as_ref().is_some_and(|p| p.failure.is_some()));
        }
    }
}

/// Pieces of configuration text, right and wrong, for the configuration's property test.
fn config_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "[[policy]]\n",
            "[policy]\n",
            "[[polcy]]\n",
            "[context]\n",
            "set = \"builtin:git-guard\"\n",
            "set = \"builtin:nope\"\n",
            "set = 3\n",
            "scope = \"agent:a\"\n",
            "scope = \"x:\"\n",
            "home = \"$home\"\n",
            "w = \"$bogus\"\n",
            "d = 1979-05-27\n",
            "l = [1, [2, {a = 3}]]\n",
            "\"quoted key\" = true\n",
            "= =\n",
            "[[\n",
            "x = inf\n",
            "f = 1.5e3\n",
        ])
        .prop_map(str::to_string),
        "\\PC{0,20}",
    ]
}

/// Every shipped set, as one chain.
fn shipped_chain() -> sluice::runtime::chain::Chain {
    let mut chain = sluice::runtime::chain::Chain::new();
    for set in sluice::compiler::builtin::SETS {
        let policy = sluice::runtime::config::load_set(
            &set.source(),
            sluice::compiler::jit::Backend::Interp,
        )
        .expect("shipped sets compile");
        chain.push(
            sluice::runtime::registry::Scope::Global,
            std::sync::Arc::new(policy),
        );
    }
    chain
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_configuration_text_is_a_config_or_coded_diagnostics(pieces in prop::collection::vec(config_piece(), 0..12)) {
        let text = pieces.concat();
        match sluice::runtime::config::Config::parse(std::path::Path::new("sluice.toml"), text) {
            Ok(config) => prop_assert!(!config.sets.is_empty()),
            Err(sluice::runtime::config::ConfigError::Invalid { diagnostics, .. }) => {
                prop_assert!(!diagnostics.is_empty());
                for d in diagnostics {
                    prop_assert!(matches!(d.code.short(), "E0030" | "E0031" | "E0032"), "{:?}", d);
                    prop_assert!(!d.help.is_empty());
                }
            }
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }

    #[test]
    fn random_calls_through_the_whole_shipped_chain_never_panic(
        tool in prop::sample::select(vec!["bash", "read_file", "write_file", "fetch", "mcp__x__y", "other"]),
        args in arbitrary_json(3),
        context in arbitrary_json(2),
        content in "\\PC{0,64}",
    ) {
        thread_local! { static CHAIN: sluice::runtime::chain::Chain = shipped_chain(); }
        let mut call = Call::new(tool, args);
        if !call.args.is_object() {
            call.args = serde_json::json!({ "command": call.args, "path": call.args, "url": call.args });
        }
        call.context = if context.is_object() { context } else { serde_json::json!({ "workspace": context }) };
        call.result = Some(sluice::ToolResult::ok(content));
        let outcome = CHAIN.with(|chain| chain.evaluate(&call));
        prop_assert_eq!(outcome.sets.len(), sluice::compiler::builtin::SETS.len());
        // An evaluation error in the set that decided fails closed.
        if let Some(decider) = &outcome.decided_by && outcome.errors.iter().any(|e| &e.set == decider) {
            prop_assert!(outcome.decision == sluice::Decision::Deny || outcome.gates.iter().any(|g| &g.set == decider));
        }
    }
}

fn arbitrary_json(depth: u32) -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        "\\PC{0,40}".prop_map(serde_json::Value::String),
        prop::sample::select(vec![
            "rm -rf /",
            "/home/me/.ssh/id_rsa",
            "https://evil.com@github.com",
            "../../etc",
            ".env"
        ])
        .prop_map(|s| serde_json::Value::String(s.to_string())),
    ];
    leaf.prop_recursive(depth, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "command",
                    "path",
                    "url",
                    "workspace",
                    "home",
                    "method",
                    "x"
                ])
                .prop_map(str::to_string),
                inner,
                0..4
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn huge_arguments_are_handled() {
    let mut db = Database::default();
    let compiled = db.compile_texts("p", vec![(SHIPPED[0].0.into(), SHIPPED[0].1.to_string())]);
    let program = compiled.program.expect("compiles");
    let huge = "rm -rf ./x ".repeat(100_000);
    let mut call = Call::new("bash", serde_json::json!({ "command": huge }));
    call.context = serde_json::json!({ "workspace": "/w", "home": "/h" });
    let outcome = Evaluator::interpreted(&program).evaluate(&call);
    // Past 1,024 words a command is unresolved, so it is asked about, not judged on a part.
    assert_eq!(outcome.decision, sluice::Decision::Ask);
}

#[test]
fn hostile_regexes_are_refused_at_compile_time() {
    let text = "tool bash { command: string }\ngate g on bash when args.command matches r\"(a{1000}){1000}\" => \"x\"\n";
    let mut db = Database::default();
    let compiled = db.compile_texts("p", vec![("p.sluice".into(), text.to_string())]);
    assert!(compiled.program.is_none());
    assert!(
        compiled
            .diagnostics
            .iter()
            .any(|d| d.code == sluice::compiler::diagnostics::Code::InvalidRegex),
        "{:#?}",
        compiled.diagnostics
    );
}

#[test]
fn huge_policy_text_compiles_in_bounded_work() {
    let mut text = String::from("tool bash { command: string }\n");
    for i in 0..2_000 {
        text.push_str(&format!("precheck r{i} on bash\n  when args.command.contains(\"x{i}\")\n  => deny \"no {i}\"\n\n"));
    }
    let mut db = Database::default();
    let compiled = db.compile_texts("p", vec![("p.sluice".into(), text)]);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:#?}",
        compiled.diagnostics.first()
    );
    assert_eq!(compiled.program.expect("compiles").rules.len(), 2_000);
}

#[test]
fn operator_chains_are_refused_before_they_can_overflow_the_stack() {
    let chain = |operand: &str, op: &str, n: usize| vec![operand; n].join(op);
    for condition in [
        format!("{}true", "not ".repeat(20_000)),
        format!("{} > 0", chain("1", " + ", 20_000)),
        chain("true", " or ", 20_000),
        format!("args{} > 0", ".a".repeat(20_000)),
    ] {
        let text = format!("tool x {{ a: int }}\ngate g on x when {condition} => \"r\"\n");
        let mut db = Database::default();
        let compiled = db.compile_texts("p", vec![("p.sluice".into(), text)]);
        assert!(compiled.program.is_none());
        assert!(
            compiled
                .diagnostics
                .iter()
                .any(|d| d.code == sluice::compiler::diagnostics::Code::ParserLimit),
            "{:#?}",
            compiled.diagnostics
        );
    }
}

#[test]
fn the_deepest_expression_the_limits_allow_compiles_on_a_test_threads_stack() {
    let chain = |operand: &str, op: &str, n: usize| vec![operand; n].join(op);
    let deepest = format!("{}args.a{}", "(".repeat(63), ")".repeat(63));
    for condition in [
        format!("{} > 0", chain("1", " + ", 100)),
        format!("{} > 0", chain(&deepest, " + ", 50)),
    ] {
        let text = format!(
            "tool x {{ a: int }}\ngate g on x when {condition} => \"r\"\ntest \"t\" {{ call x {{ a: 1 }} expect gate g }}\n"
        );
        let compiled =
            Database::default().compile_texts("p", vec![("p.sluice".into(), text.clone())]);
        assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
        compile(&text);
    }
}

#[test]
fn a_rule_the_parser_refuses_leaves_no_program() {
    // The builder refuses the deny rule (comparisons do not chain) and drops it; the rest of the
    // set is fine, and loading it alone would allow what the dropped rule denies.
    let text = "tool bash { command: string, n: int }\nprecheck big on bash when args.n > 1 == true => deny \"no\"\nprecheck ok on bash when args.command == \"x\" => allow\n";
    let compiled = Database::default().compile_texts("p", vec![("p.sluice".into(), text.into())]);
    assert!(compiled.has_errors(), "{:#?}", compiled.diagnostics);
    assert!(compiled.program.is_none());
}
