//! `lang-spec/` describes the language exactly: these tests fail when the compiler grows
//! something the specification does not mention.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use sluice::compiler::check::Builtin;
use sluice::{Call, Database, Evaluator, ToolResult};

fn page(name: &str) -> String {
    std::fs::read_to_string(format!("lang-spec/{name}")).expect("spec page")
}

#[test]
fn every_builtin_is_documented() {
    let builtins = page("builtins.md");
    for builtin in Builtin::ALL {
        let name = builtin.name();
        assert!(
            builtins.contains(&format!("`{name}(")) || builtins.contains(&format!("`.{name}")),
            "lang-spec/builtins.md does not document `{name}`"
        );
    }
}

#[test]
fn every_outcome_field_is_documented() {
    let text = "tool t { x: string }\npostcheck p on t when result.content == \"a\" => replace content \"b\"\n";
    let compiled = Database::default().compile_texts("p", vec![("p.sluice".into(), text.into())]);
    let program = compiled.program.expect("compiles");
    let mut call = Call::new("t", serde_json::json!({ "x": "y" }));
    call.result = Some(ToolResult::ok("a"));
    let outcome =
        serde_json::to_value(Evaluator::interpreted(&program).evaluate(&call)).expect("json");
    let doc = page("eval-json.md");
    let mut fields: Vec<String> = outcome
        .as_object()
        .expect("object")
        .keys()
        .cloned()
        .collect();
    fields.extend(
        outcome["postcheck"]
            .as_object()
            .expect("postcheck")
            .keys()
            .cloned(),
    );
    for field in fields {
        assert!(
            doc.contains(&format!("`{field}`")),
            "lang-spec/eval-json.md does not document `{field}`"
        );
    }
}

#[test]
fn grammar_page_links_the_one_grammar_and_copies_none_of_it() {
    let grammar = page("grammar.md");
    assert!(grammar.contains("../compiler/src/parser/sluice.pest"));
    let pest = std::fs::read_to_string("compiler/src/parser/sluice.pest").expect("grammar");
    for line in pest
        .lines()
        .filter(|l| l.contains(" = ") && l.contains('{'))
    {
        assert!(!grammar.contains(line.trim()), "grammar.md copies `{line}`");
    }
}
