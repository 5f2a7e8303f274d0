//! The shipped secrets-redaction set as a whole: secrets anywhere in any channel never survive,
//! the text around them does, and redacting again changes nothing (property tests); and the
//! labelled corpus in `tests/secrets_suite/`, written without reading the rules, measured per
//! family against floors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use sluice::compiler::call::{Call, Status, ToolResult};
use sluice::compiler::decision::PostcheckOutcome;
use sluice::compiler::ir::Program;
use sluice::compiler::jit::{self, JitOptions, NativeCode};
use sluice::compiler::load::discover;
use sluice::{Database, Evaluator};

struct Shipped {
    program: Program,
    native: NativeCode,
}

fn shipped() -> &'static Shipped {
    static SHIPPED: OnceLock<Shipped> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let sets = discover(&[PathBuf::from("policies/secrets-redaction")]).expect("the set");
        let mut db = Database::default();
        let compiled = db.load(&sets[0]).expect("loads");
        assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
        let program = compiled.program.as_ref().expect("program").as_ref().clone();
        let native = jit::compile(&program, JitOptions::default()).expect("compiles");
        Shipped { program, native }
    })
}

fn redact(result: &ToolResult) -> PostcheckOutcome {
    let shipped = shipped();
    let call = Call::new("bash", json!({ "command": "cat out.txt" }));
    Evaluator::new(&shipped.program, Some(&shipped.native)).postcheck(&call, result)
}

fn result_of(content: &str, value: Value, error: Option<&str>) -> ToolResult {
    let mut result = ToolResult::ok(content);
    result.status = if error.is_some() {
        Status::Error
    } else {
        Status::Ok
    };
    result.value = value;
    result.error = error.map(str::to_string);
    result
}

fn again(outcome: &PostcheckOutcome) -> ToolResult {
    let mut result = result_of(&outcome.content, outcome.value.clone(), None);
    result.status = outcome.status;
    result.error = outcome.error.clone();
    result
}

/// One bare secret of each of a spread of families; none is the whole of a line's value, so the
/// text on either side is checked to survive.
const SECRETS: &[&str] = &[
    "AKIAQ3EGRV7WXJ5MZ2KD",
    "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "github_pat_11ABCDEFG0123456789abc_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456",
    "glpat-Xy7Qw9Er3Tz1Ui5Op2As",
    "xoxb-20481234-40961234-Zq8Rt2Yx6Wv4",
    "npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc9X2b",
    "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",
    "hf_VmQpRsTuWxYzAbCdEfGhIjKlMnOpQrStUv",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "AIzaSyD3x9QwErTy7UiOp1AsDfGh2JkLzXcVbNm",
    "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
];

/// Ordinary output: nothing here is a secret, and all of it must come through.
const FILLER: &[&str] = &[
    "Compiling sluice v0.1.0",
    "test result: ok. 12 passed",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "id 4b1e2c9a-7d3f-4e8b-9a6c-1f2e3d4c5b6a",
    "warning: unused variable",
    "-rw-r--r-- 1 root root 4096 README.md",
    "digest sha256:9b2a1c3d4e5f60718293a4b5c6d7e8f9",
    "héllo wörld ✓",
    "{\"ok\": true, \"count\": 3}",
];

#[derive(Clone, Debug)]
enum Piece {
    Filler(usize),
    Secret(usize),
}

fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0..FILLER.len()).prop_map(Piece::Filler),
            1 => (0..SECRETS.len()).prop_map(Piece::Secret),
        ],
        0..12,
    )
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just(" "), Just("\n"), Just("\t"), Just(" = "), Just(": ")]
}

fn text(pieces: &[Piece], seps: &[&str]) -> String {
    let mut out = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            out.push_str(seps.get(i % seps.len().max(1)).copied().unwrap_or(" "));
        }
        out.push_str(match piece {
            Piece::Filler(f) => FILLER[*f],
            Piece::Secret(s) => SECRETS[*s],
        });
    }
    out
}

fn all_strings(outcome: &PostcheckOutcome) -> Vec<String> {
    let mut out = vec![outcome.content.clone()];
    out.extend(outcome.error.clone());
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    walk(&outcome.value, &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn no_secret_survives_in_any_channel_and_redacting_again_changes_nothing(
        content in pieces(),
        in_value in pieces(),
        in_error in pieces(),
        seps in prop::collection::vec(separator(), 1..4),
    ) {
        let value = json!({ "out": text(&in_value, &seps), "nested": [{ "line": text(&in_value, &seps) }], "n": 1 });
        let error = text(&in_error, &seps);
        let result = result_of(&text(&content, &seps), value, (!error.is_empty()).then_some(error.as_str()));
        let once = redact(&result);
        prop_assert!(once.failure.is_none(), "{:?}", once.failure);
        for channel in all_strings(&once) {
            for secret in SECRETS {
                prop_assert!(!channel.contains(secret), "{secret} survived in {channel:?}");
            }
        }
        for piece in content.iter() {
            if let Piece::Filler(f) = piece {
                prop_assert!(once.content.contains(FILLER[*f]), "{:?} lost from {:?}", FILLER[*f], once.content);
            }
        }
        let twice = redact(&again(&once));
        prop_assert_eq!(&twice.content, &once.content);
        prop_assert_eq!(&twice.value, &once.value);
        prop_assert_eq!(&twice.error, &once.error);
    }
}

#[test]
fn a_family_found_in_every_channel_is_named_in_each() {
    let secret = SECRETS[1];
    let outcome = redact(&result_of(
        &format!("token {secret} end"),
        json!({ "a": [format!("x {secret}")], "b": { "c": secret } }),
        Some(&format!("failed: {secret}")),
    ));
    assert_eq!(outcome.content, "token [REDACTED github-pat] end");
    assert_eq!(
        outcome.value,
        json!({ "a": ["x [REDACTED github-pat]"], "b": { "c": "[REDACTED github-pat]" } })
    );
    assert_eq!(
        outcome.error.as_deref(),
        Some("failed: [REDACTED github-pat]")
    );
    assert_eq!(outcome.status, Status::Error);
}

/// A secret the labelled corpus says must go, and the family it belongs to.
#[derive(serde::Deserialize)]
struct SecretCase {
    family: String,
    text: String,
    secret: String,
}

#[derive(serde::Deserialize)]
struct NonSecretCase {
    kind: String,
    text: String,
}

fn lines<T: serde::de::DeserializeOwned>(file: &str) -> Vec<T> {
    let path = PathBuf::from("tests/secrets_suite").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}: {e}: {l}")))
        .collect()
}

/// The floors the corpus is held to; raise them as the set improves, never lower them.
const RECALL_FLOOR: f64 = 0.99;
const ALTERED_CEILING: f64 = 0.01;

#[test]
fn the_labelled_corpus_is_redacted_above_its_floors() {
    let secrets: Vec<SecretCase> = lines("secrets.jsonl");
    let non_secrets: Vec<NonSecretCase> = lines("non_secrets.jsonl");
    let mut per_family: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for case in &secrets {
        let outcome = redact(&result_of(&case.text, Value::Null, None));
        let entry = per_family.entry(&case.family).or_default();
        entry.1 += 1;
        if outcome.content.contains(&case.secret) {
            missed.push(format!("{}: {:?}", case.family, case.text));
        } else {
            entry.0 += 1;
        }
    }
    let mut altered = Vec::new();
    for case in &non_secrets {
        let outcome = redact(&result_of(&case.text, Value::Null, None));
        if outcome.content != case.text {
            altered.push(format!(
                "{}: {:?} -> {:?}",
                case.kind, case.text, outcome.content
            ));
        }
    }
    let redacted: usize = per_family.values().map(|(ok, _)| ok).sum();
    let recall = redacted as f64 / secrets.len().max(1) as f64;
    let altered_share = altered.len() as f64 / non_secrets.len().max(1) as f64;
    let mut report = format!(
        "secrets redacted: {redacted}/{} ({:.1}%)\nnon-secrets altered: {}/{} ({:.1}%)\n\nper family:\n",
        secrets.len(),
        recall * 100.0,
        altered.len(),
        non_secrets.len(),
        altered_share * 100.0
    );
    for (family, (ok, all)) in &per_family {
        report.push_str(&format!("  {family}: {ok}/{all}\n"));
    }
    report.push_str("\nmissed:\n");
    for m in &missed {
        report.push_str(&format!("  {m}\n"));
    }
    report.push_str("\naltered:\n");
    for a in &altered {
        report.push_str(&format!("  {a}\n"));
    }
    std::fs::create_dir_all("target").ok();
    std::fs::write("target/secrets-suite-report.txt", &report).ok();
    println!("{report}");
    assert!(
        recall >= RECALL_FLOOR,
        "recall {:.1}% is below the floor {:.0}%: see target/secrets-suite-report.txt",
        recall * 100.0,
        RECALL_FLOOR * 100.0
    );
    assert!(
        altered_share <= ALTERED_CEILING,
        "{:.1}% of non-secrets altered, above the ceiling {:.0}%: see target/secrets-suite-report.txt",
        altered_share * 100.0,
        ALTERED_CEILING * 100.0
    );
}

#[test]
fn a_rule_that_fails_after_a_run_of_redactions_fails_a_redacted_result() {
    let source = r#"
policy p "a redaction, then a rule that fails"

postcheck redact_tokens on *
  => redact r"ghp_[A-Za-z0-9]{36}" as "github-pat"

postcheck fails_on_marker on *
  => redact r"MARKER" as "marker",
     attach context "value was {result.value.x.y}"
"#;
    let compiled = Database::default().compile_texts("p", vec![("p.sluice".into(), source.into())]);
    assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
    let program = compiled.program.as_ref().expect("program");
    let call = Call::new("bash", json!({ "command": "x" }));
    let secret = SECRETS[1];
    let outcome = Evaluator::interpreted(program).postcheck(
        &call,
        &result_of(&format!("{secret} MARKER"), Value::Null, None),
    );
    assert!(outcome.failure.is_some(), "{outcome:?}");
    assert!(!outcome.content.contains(secret), "{}", outcome.content);
    assert!(
        outcome.content.contains("[REDACTED github-pat]"),
        "{}",
        outcome.content
    );
}
