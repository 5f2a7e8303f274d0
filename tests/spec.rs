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

/// The built-in effect table in `lang-spec/shell.md`, rendered from the data the compiler embeds.
fn effect_table_markdown() -> String {
    let data = std::fs::read_to_string("compiler/src/shell/effects.json").expect("effect table");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&data).expect("a list of rows");
    let names = |value: &serde_json::Value| match value {
        serde_json::Value::String(one) => format!("`{one}`"),
        serde_json::Value::Array(many) => many
            .iter()
            .map(|v| format!("`{}`", v.as_str().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    let text = |row: &serde_json::Value, key: &str| {
        row.get(key)
            .and_then(|v| v.as_str())
            .map_or(String::new(), str::to_string)
    };
    let flag = |row: &serde_json::Value, key: &str| {
        if row.get(key).and_then(serde_json::Value::as_bool) == Some(true) {
            "yes".to_string()
        } else {
            String::new()
        }
    };
    let mut out = String::from(
        "| command | subcommand | with flag | with operand | reads | writes | deletes | network | executes | destroys | system | read-only |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            names(&row["command"]),
            row.get("subcommand").map_or(String::new(), names),
            row.get("flags").map_or(String::new(), names),
            row.get("operand").map_or(String::new(), names),
            text(row, "reads"),
            text(row, "writes"),
            text(row, "deletes"),
            flag(row, "network"),
            flag(row, "executes"),
            flag(row, "destroys"),
            flag(row, "system"),
            flag(row, "read_only"),
        ));
    }
    out
}

#[test]
fn effect_table_is_documented_from_its_data() {
    let page = page("shell.md");
    let start = page.find("<!-- effect-table:start").expect("start marker");
    let start = start + page[start..].find("-->\n").expect("end of marker") + 4;
    let end = page.find("<!-- effect-table:end -->").expect("end marker");
    let expected = effect_table_markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{}{}", &page[..start], expected, &page[end..]);
        std::fs::write("lang-spec/shell.md", updated).expect("write shell.md");
        return;
    }
    assert_eq!(
        &page[start..end],
        expected,
        "lang-spec/shell.md's effect table is stale: run `UPDATE_DOCS=1 cargo test --test spec`"
    );
}

#[test]
fn every_row_of_the_effect_table_loads() {
    let data = std::fs::read_to_string("compiler/src/shell/effects.json").expect("effect table");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&data).expect("a list of rows");
    for row in &rows {
        sluice::compiler::shell::EffectRow::from_json(row)
            .unwrap_or_else(|error| panic!("row {row} does not load: {error}"));
    }
    assert_eq!(
        sluice::compiler::shell::EffectTable::built_in()
            .rows()
            .count(),
        rows.len(),
        "the built-in table dropped rows"
    );
}
