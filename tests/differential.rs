//! Differential tests: the JIT against the reference interpreter.
//!
//! Random well-typed policy sets (every condition form, every rule kind) are compiled by both
//! backends and run on random calls and results, including calls that do not fit their
//! declarations. The two must return identical outcomes, and rule by rule the native condition
//! must answer exactly when the interpreter does (and with the same truth), so a test cannot pass
//! by silently falling back to the interpreter. Failures shrink to a minimal policy.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value as Json, json};

use sluice::compiler::call::{Agent, Call, Session, Status, ToolResult};
use sluice::compiler::check::VarId;
use sluice::compiler::interp::{CallJson, Evaluation, Facts};
use sluice::compiler::ir::{NodeId, Program, RuleIr};
use sluice::compiler::jit::{self, JitOptions, NativeFrame};
use sluice::compiler::scan::ScanFrame;
use sluice::{Database, Evaluator};

#[path = "differential/part_guards.rs"]
mod part_guards;

const DECLARATIONS: &str = r#"
context { workspace: string, level: int?, mode: "plan" | "auto" }
tool t { s: string, p: string?, n: int, m: int?, f: float, b: bool, tags: list<string>, nums: list<int>, e: "a" | "b", url: string }
label admin
label web
"#;

fn leaf_string() -> BoxedStrategy<String> {
    prop_oneof![
        Just(r#""a""#.to_string()),
        Just(r#""/w/x""#.to_string()),
        Just(r#""""#.to_string()),
        Just("args.s".to_string()),
        Just(r#"(args.p ?? "dflt")"#.to_string()),
        Just("context.workspace".to_string()),
        Just("args.e".to_string()),
        Just("tool".to_string()),
        Just("agent.id".to_string()),
    ]
    .boxed()
}

fn string_expr(depth: u32) -> BoxedStrategy<String> {
    if depth == 0 {
        return leaf_string();
    }
    let inner = string_expr(depth - 1);
    prop_oneof![
        3 => leaf_string(),
        1 => inner.clone().prop_map(|s| format!("{s}.lower()")),
        1 => inner.clone().prop_map(|s| format!("{s}.trim()")),
        1 => inner.clone().prop_map(|s| format!("string(path({s}))")),
        1 => inner.clone().prop_map(|s| format!("string(path({s}, \"/w\"))")),
        1 => inner.clone().prop_map(|s| format!("string(path({s}).parent)")),
        1 => inner.clone().prop_map(|s| format!("string(path({s}).name)")),
        1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
        1 => int_expr(depth - 1).prop_map(|n| format!("\"n={{{n}}}\"")),
        1 => inner.clone().prop_map(|s| format!("redact({s}, r\"[0-9]+\", \"#\")")),
        1 => Just("url(args.url).host".to_string()),
        1 => Just("string(args.tags)".to_string()),
    ]
    .boxed()
}

fn int_expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        (-3i64..4).prop_map(|n| n.to_string()),
        Just("9223372036854775807".to_string()),
        Just("args.n".to_string()),
        Just("(args.m ?? 2)".to_string()),
        Just("(context.level ?? 0)".to_string()),
        Just("len(args.tags)".to_string()),
        Just("url(args.url).port".to_string()),
        Just("(session.calls.t ?? 0)".to_string()),
        Just("len(session.labels)".to_string()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        3 => leaf,
        1 => string_expr(depth - 1).prop_map(|s| format!("len({s})")),
        1 => (int_expr(depth - 1), int_expr(depth - 1)).prop_map(|(a, b)| format!("({a} + {b})")),
    ]
    .boxed()
}

fn bool_expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("true".to_string()),
        Just("false".to_string()),
        Just("args.b".to_string()),
        Just("args.p == null".to_string()),
        Just("args.f < 1.5".to_string()),
        Just("args.f >= args.n".to_string()),
        Just(r#"args.e == "a""#.to_string()),
        Just(r#"context.mode != "plan""#.to_string()),
        Just(r#""admin" in agent.labels"#.to_string()),
        Just(r#""web" in session.labels"#.to_string()),
        Just(r#""admin" not in session.labels"#.to_string()),
        Just("args.nums[0] == 1".to_string()),
        Just("args.nums[1] != 0".to_string()),
        Just("(args.nums[2] ?? 9) > 1".to_string()),
        Just("args.n in args.nums".to_string()),
        Just("args.nums.contains(3)".to_string()),
        // Tests that field scans answer for rules that start with them.
        Just(r#"args.s.starts_with("/w")"#.to_string()),
        Just(r#"args.s.ends_with("2")"#.to_string()),
        Just(r#"args.s.contains("a")"#.to_string()),
        Just(r#"args.e.contains("a")"#.to_string()),
        Just(r#"args.s matches r"^[a-z]+\d*$""#.to_string()),
        Just(r#"tool.starts_with("t")"#.to_string()),
        Just(r#"path(args.s).under("/w")"#.to_string()),
        Just(r#"path(args.s).under("/")"#.to_string()),
        Just(r#"path(args.s).under("/etc/")"#.to_string()),
        Just(r#"path(args.s).under("rel")"#.to_string()),
        Just(r#"path(args.s).under("..")"#.to_string()),
        Just(r#"path(args.s).under(".")"#.to_string()),
    ];
    let leaf = leaf.prop_map(|x| format!("({x})"));
    if depth == 0 {
        return leaf.boxed();
    }
    let s = string_expr(depth - 1);
    let n = int_expr(depth - 1);
    let b = bool_expr(depth - 1);
    prop_oneof![
        4 => leaf,
        2 => (b.clone(), b.clone()).prop_map(|(x, y)| format!("({x} and {y})")),
        2 => (b.clone(), b.clone()).prop_map(|(x, y)| format!("({x} or {y})")),
        1 => b.clone().prop_map(|x| format!("not {x}")),
        1 => (b.clone(), b.clone()).prop_map(|(x, y)| format!("({x} == {y})")),
        2 => (n.clone(), n.clone(), 0..6usize).prop_map(|(x, y, op)| {
            format!("{x} {} {y}", ["<", "<=", ">", ">=", "==", "!="][op])
        }),
        1 => (s.clone(), s.clone(), 0..4usize).prop_map(|(x, y, op)| {
            format!("{x} {} {y}", ["==", "!=", "<", ">="][op])
        }),
        1 => (s.clone(), s.clone(), 0..3usize).prop_map(|(x, y, m)| {
            format!("{x}.{}({y})", ["starts_with", "ends_with", "contains"][m])
        }),
        1 => s.clone().prop_map(|x| format!("{x} matches r\"^/w|[0-9]{{2}}\"")),
        1 => s.clone().prop_map(|x| format!("{x} glob \"/w/**\"")),
        1 => s.clone().prop_map(|x| format!("{x} in [\"a\", \"/w/x\", \"\"]")),
        1 => s.clone().prop_map(|x| format!("{x} not in args.tags")),
        1 => s.clone().prop_map(|x| format!("path({x}).under(context.workspace)")),
        // A directory normalized as the call runs: a string, or one joined to a literal suffix
        // (normal or not, so both the direct answer and the normalizing one are compared).
        1 => (s.clone(), s.clone(), 0..4usize).prop_map(|(x, y, suffix)| {
            let suffix = ["", "/x", "/..", "x/"][suffix];
            if suffix.is_empty() {
                format!("path({x}).under({y})")
            } else {
                format!("path({x}).under({y} + \"{suffix}\")")
            }
        }),
        1 => b.clone().prop_map(|x| format!("any(tag in args.tags, tag.starts_with(\"a\") or {x})")),
        1 => b.clone().prop_map(|x| format!("all(k in args.nums, k > 0 and {x})")),
        1 => Just("any(k in [1, 2, args.n], k == (args.m ?? 5))".to_string()),
        1 => Just("all(tag in args.tags, any(l in agent.labels, l == tag))".to_string()),
        1 => Just("url(args.url).scheme == \"https\"".to_string()),
        1 => Just("(args.p ?? args.s).contains(\"x\")".to_string()),
        1 => Just(r#"args.tags ~ ["a", .., "/w/x" | _]"#.to_string()),
        1 => Just(r#"args.tags ~ [.., "admin", ..]"#.to_string()),
        1 => s.clone().prop_map(|x| format!("len(shell({x})) > 1")),
        1 => s.clone().prop_map(|x| {
            format!(r#"any(c in shell({x}, context.workspace), c.argv ~ ["rm", .., "-rf" | "-f", ..] or "-r" in c.flags)"#)
        }),
        1 => s.clone().prop_map(|x| {
            format!("any(c in shell({x}), any(p in c.deletes, p.under(context.workspace)) or c.unresolved != null)")
        }),
        // `~` and `$HOME` against a home directory that is sometimes missing or not a string.
        1 => (s.clone(), s.clone()).prop_map(|(x, home)| {
            format!("any(c in shell({x}, context.workspace, {home}), any(p in c.paths, p.under(\"/w/x\")) or any(p in c.deletes, p.under(\"/w\")) or c.cwd == \"/w/x\")")
        }),
    ]
    // Comparisons do not chain: every condition is parenthesized.
    .prop_map(|x| format!("({x})"))
    .boxed()
}

/// A test of one part of a per-part rule (`cmd`): the command model's fields, argv patterns,
/// quantifiers over its lists, and indexing that may fault.
fn part_expr() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just(r#"cmd.name == "rm""#.to_string()),
        Just(r#"cmd.name in ["git", "rm", "curl", "sh"]"#.to_string()),
        Just(r#"cmd.name.starts_with("g")"#.to_string()),
        Just("cmd.network".to_string()),
        Just("cmd.unresolved != null".to_string()),
        Just(r#"cmd.text.contains("/w")"#.to_string()),
        Just(r#"cmd.argv ~ ["git", "push", .., "--force" | "-f", ..]"#.to_string()),
        Just(r#"cmd.argv ~ ["rm", .., "-rf" | "-f", ..]"#.to_string()),
        Just("cmd.argv ~ [_, _, ..]".to_string()),
        Just(r#""-r" in cmd.flags"#.to_string()),
        Just(r#""sudo" in cmd.wrappers"#.to_string()),
        Just(r#"any(p in cmd.deletes, p.under(context.workspace))"#.to_string()),
        Just(r#"any(p in cmd.paths, p.under(context.workspace + "/x"))"#.to_string()),
        Just(r#"any(p in cmd.paths, p.under((cmd.cwd ?? "") + "/.."))"#.to_string()),
        Just(r#"any(p in cmd.paths, p.under(cmd.cwd ?? "w"))"#.to_string()),
        Just(r#"any(p in cmd.paths, p.under("/w") and not p.under("/w/x"))"#.to_string()),
        Just(r#"all(w in cmd.argv, len(w) < 4)"#.to_string()),
        Just("len(cmd.argv) > 2".to_string()),
        Just(r#"cmd.argv[1] == "push""#.to_string()),
        Just(r#"(cmd.argv[2] ?? "") == "/w/x""#.to_string()),
        Just(r#"cmd.cwd == context.workspace"#.to_string()),
        Just(r#"string(cmd.argv).contains("x")"#.to_string()),
    ];
    let b = bool_expr(1);
    prop_oneof![
        4 => leaf.clone(),
        2 => (leaf.clone(), leaf.clone()).prop_map(|(x, y)| format!("(({x}) and ({y}))")),
        2 => (leaf.clone(), b.clone()).prop_map(|(x, y)| format!("(({x}) or {y})")),
        1 => (b, leaf.clone()).prop_map(|(x, y)| format!("({x} and ({y}))")),
        1 => leaf.prop_map(|x| format!("not ({x})")),
    ]
    .boxed()
}

/// One rule of a random kind with a random condition (sometimes none).
fn rule(index: usize) -> BoxedStrategy<String> {
    let condition = prop_oneof![
        1 => Just(String::new()),
        6 => bool_expr(3).prop_map(|c| format!("\n  when {c}")),
        3 => (bool_expr(0), bool_expr(2)).prop_map(|(first, rest)| format!("\n  when {first} and {rest}")),
    ];
    let part_condition = prop_oneof![
        1 => Just(String::new()),
        6 => part_expr().prop_map(|c| format!("\n  when {c}")),
    ];
    (condition, part_condition, 0..10usize, string_expr(1))
        .prop_map(move |(when, part_when, kind, message)| {
            let name = format!("r{index}");
            match kind {
                0 => format!("precheck {name} on t{when}\n  => allow"),
                1 => format!("precheck {name} on t{when}\n  => deny \"{{{message}}}\""),
                2 => format!("precheck {name} on t{when}\n  => ask \"why {{args.n}}\""),
                3 => format!("gate {name} on t{when}\n  => \"veto {{{message}}}\""),
                4 => format!("postcheck {name} on t{when}\n  => replace content {message}"),
                5 => format!(
                    "postcheck {name} on t{when}\n  => fail \"no\" with context \"ctx {{result.content}}\""
                ),
                6 if index.is_multiple_of(2) => format!("postcheck {name} on t{when}\n  => attach context \"seen {{args.s}}\""),
                6 => format!("postcheck {name} on t{when}\n  => label session \"web\" for 2 calls, attach context \"labelled\""),
                7 => {
                    // A per-part rule: its verdict on each command of `args.s`.
                    let effect = ["allow", "deny \"{cmd.text}\"", "ask \"{cmd.name}\""][index % 3];
                    let part = if index.is_multiple_of(3) && !when.is_empty() { format!("{when} or cmd.network") } else { part_when };
                    format!("precheck {name} on t\n  for cmd in shell(args.s, context.workspace){part}\n  => {effect}")
                }
                8 => {
                    // A per-part gate: it vetoes when some command of `args.s` holds, with
                    // that command's message.
                    let part = if index.is_multiple_of(3) && !when.is_empty() { format!("{when} or cmd.network") } else { part_when };
                    format!("gate {name} on t\n  for cmd in shell(args.s, context.workspace){part}\n  => \"veto {{cmd.text}} {{{message}}}\"")
                }
                _ => format!("concurrency {name} on t{when}\n  => safe"),
            }
        })
        .boxed()
}

fn policy() -> BoxedStrategy<String> {
    (1..9usize)
        .prop_flat_map(|count| (0..count).map(rule).collect::<Vec<_>>())
        .prop_map(|rules| format!("{DECLARATIONS}\n{}\n", rules.join("\n\n")))
        .boxed()
}

/// A field's value: usually of its declared type, sometimes missing, null or of another type.
fn field(typical: BoxedStrategy<Json>) -> BoxedStrategy<Option<Json>> {
    prop_oneof![
        8 => typical.prop_map(Some),
        1 => Just(None),
        1 => Just(Some(Json::Null)),
        1 => prop_oneof![Just(json!(7)), Just(json!("x")), Just(json!([1])), Just(json!(true))]
            .prop_map(Some),
    ]
    .boxed()
}

fn text() -> BoxedStrategy<Json> {
    prop_oneof![
        Just(json!("a")),
        Just(json!("/w/x")),
        Just(json!("/w/../etc/passwd")),
        Just(json!("/w2/../etcetera")),
        Just(json!("relx/./y")),
        Just(json!("rel/a1b22")),
        Just(json!("rm -rf /w/x && curl -s u | sh")),
        Just(json!("cd /w; ls 'a b' | xargs rm -f")),
        Just(json!("$(x) -r y; echo 'unbalanced")),
        Just(json!("rm -rf ~ $HOME/y ~/../x; cd && cat ~/a > ${HOME}/b")),
        Just(json!(
            "sudo git push -f origin main; git -C /w/x status | grep x"
        )),
        Just(json!("bash -c 'rm -r /w/x/y' && env X=1 curl -s http://h/")),
        Just(json!("  Mixed Case  ")),
        Just(json!("")),
        "[a-z/0-9.]{0,8}".prop_map(Json::from),
    ]
    .boxed()
}

fn call() -> BoxedStrategy<Call> {
    let args = (
        (
            field(text()),
            field(text()),
            field((-2i64..5).prop_map(Json::from).boxed()),
        ),
        (
            field((-2i64..5).prop_map(Json::from).boxed()),
            field(prop_oneof![Just(json!(0.5)), Just(json!(2)), Just(json!(-1.25))].boxed()),
            field(any::<bool>().prop_map(Json::from).boxed()),
        ),
        (
            field(
                prop::collection::vec(text(), 0..3)
                    .prop_map(Json::from)
                    .boxed(),
            ),
            field(
                prop::collection::vec(-1i64..4, 0..3)
                    .prop_map(Json::from)
                    .boxed(),
            ),
            field(prop_oneof![Just(json!("a")), Just(json!("b")), Just(json!("c"))].boxed()),
            field(
                prop_oneof![
                    Just(json!("https://u:p@Example.com:8443/x?q=1")),
                    Just(json!("http://h/")),
                    Just(json!("not a url")),
                ]
                .boxed(),
            ),
        ),
    );
    let context = (
        field(text()),
        field((0i64..3).prop_map(Json::from).boxed()),
        field(prop_oneof![Just(json!("plan")), Just(json!("auto"))].boxed()),
    );
    let labels = prop::collection::vec(prop_oneof![Just("admin"), Just("a"), Just("/w/x")], 0..3);
    let result = prop::option::of((text(), 0..3usize));
    // No session (the rules that read one fail closed), or one with some labels and counts.
    let session = prop::option::of((
        prop::collection::vec(prop_oneof![Just("admin"), Just("web")], 0..3),
        prop::option::of(0u64..4),
    ));
    (args, context, labels, result, session)
        .prop_map(
            |(
                ((s, p, n), (m, f, b), (tags, nums, e, url)),
                (ws, level, mode),
                labels,
                result,
                session,
            )| {
                let mut object = serde_json::Map::new();
                for (name, value) in [
                    ("s", s),
                    ("p", p),
                    ("n", n),
                    ("m", m),
                    ("f", f),
                    ("b", b),
                    ("tags", tags),
                    ("nums", nums),
                    ("e", e),
                    ("url", url),
                ] {
                    if let Some(value) = value {
                        object.insert(name.into(), value);
                    }
                }
                let mut context = serde_json::Map::new();
                for (name, value) in [("workspace", ws), ("level", level), ("mode", mode)] {
                    if let Some(value) = value {
                        context.insert(name.into(), value);
                    }
                }
                let mut call = Call::new("t", Json::Object(object));
                call.context = Json::Object(context);
                call.agent = Agent {
                    id: "agent-7".into(),
                    labels: labels.into_iter().map(String::from).collect(),
                    presets: Vec::new(),
                };
                call.result = result.map(|(content, status)| ToolResult {
                    status: [Status::Ok, Status::Error, Status::Timeout][status],
                    content: content.as_str().unwrap_or_default().to_string(),
                    value: json!({ "k": 1 }),
                    error: None,
                });
                call.session = session.map(|(labels, count)| Session {
                    labels: labels.into_iter().map(String::from).collect(),
                    calls: count.map_or(json!({}), |n| json!({ "t": n })),
                });
                call
            },
        )
        .boxed()
}

fn check_agreement(policy: &str, calls: &[Call]) -> Result<(), TestCaseError> {
    // Both backends judge every call in full, however long a debug build takes.
    let _untimed = sluice::compiler::budget::unbounded();
    let mut db = Database::default();
    let compiled = db.compile_texts("generated", vec![("gen.sluice".into(), policy.into())]);
    let errors = compiled.errors();
    prop_assert!(
        errors.is_empty(),
        "generated policy does not compile: {errors:#?}\n{policy}"
    );
    let program = compiled.program.as_ref().expect("program");
    let native = jit::compile(
        program,
        JitOptions {
            verify: true,
            keep_clif: false,
        },
    )
    .expect("compiles to native code");
    prop_assert!(
        native.stats().untranslated.is_empty(),
        "{:?}",
        native.stats()
    );
    let reference = Evaluator::interpreted(program);
    let jitted = Evaluator::new(program, Some(&native));
    let indexed = Evaluator::indexed(program, native.scans());
    for call in calls {
        let expected = reference.evaluate(call);
        prop_assert_eq!(jitted.evaluate(call), expected.clone(), "call {:?}", call);
        prop_assert_eq!(
            indexed.evaluate(call),
            expected,
            "scans alone, call {:?}",
            call
        );
        // The runtime's entry: pre-checks, then gates unless they deny.
        let staged = reference.precheck_and_gates(call);
        prop_assert_eq!(
            jitted.precheck_and_gates(call),
            staged.clone(),
            "call {:?}",
            call
        );
        prop_assert_eq!(indexed.precheck_and_gates(call), staged, "call {:?}", call);
        let json = CallJson::of(call);
        let roots = json.roots(call);
        let facts = Facts::fill(program, &call.tool, &roots);
        let mut frame = native.frame(program, &facts).expect("same program");
        let mut scan = ScanFrame::new(native.scans());
        for rule in program.rules.iter() {
            if let Some((var, list)) = rule.per_part {
                check_parts(program, rule, (var, list), &facts, &mut frame)?;
                continue;
            }
            let interpreted = Evaluation::new(program, rule, &facts).condition_holds();
            let scanned = scan.decided(rule, &facts);
            let native_answer = frame.holds(rule, &facts);
            match interpreted {
                Ok(holds) => {
                    // A rule its scan decides has no code; every other rule has.
                    prop_assert_eq!(
                        scanned.or(native_answer),
                        Some(holds),
                        "rule {}",
                        rule.meta.name
                    );
                    prop_assert!(
                        native_answer.is_none_or(|n| n == holds),
                        "rule {}",
                        rule.meta.name
                    );
                }
                Err(error) => prop_assert_eq!(
                    (scanned, native_answer),
                    (None, None),
                    "rule {} faults in the interpreter ({}) but not natively or in its scan",
                    rule.meta.name,
                    error.message
                ),
            }
        }
    }
    Ok(())
}

/// A per-part rule, part by part: its native code answers exactly when the interpreter does,
/// with the part bound, and with the same truth.
fn check_parts(
    program: &Program,
    rule: &RuleIr,
    (var, list): (VarId, NodeId),
    facts: &Facts<'_>,
    frame: &mut NativeFrame<'_>,
) -> Result<(), TestCaseError> {
    let mut evaluation = Evaluation::new(program, rule, facts);
    let Ok(parts) = evaluation.eval(list) else {
        return Ok(());
    };
    for part in parts.elements().unwrap_or_default() {
        let native_answer = frame.holds_part(rule, facts, &part);
        evaluation.bind(var, part.clone());
        match evaluation.condition_holds() {
            Ok(holds) => prop_assert_eq!(
                native_answer,
                Some(holds),
                "rule {} on part {:?}",
                rule.meta.name,
                part
            ),
            Err(error) => prop_assert_eq!(
                native_answer,
                None,
                "rule {} faults in the interpreter on part {:?} ({}) but not natively",
                rule.meta.name,
                part,
                error.message
            ),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn jit_agrees_with_the_interpreter(
        policy in policy(),
        calls in prop::collection::vec(call(), 1..6),
    ) {
        check_agreement(&policy, &calls)?;
    }
}

/// Rules that each start with a path-prefix test of one field: their scan reads the field's
/// normalized path, and must answer exactly as `under` does, component boundaries included.
fn path_prefix_policy() -> BoxedStrategy<String> {
    let dir = prop_oneof![
        Just("/"),
        Just("/w"),
        Just("/w/"),
        Just("/etc"),
        Just("rel"),
        Just(".."),
        Just("."),
        Just("~/.ssh"),
        Just("/w/x/../y"),
    ];
    prop::collection::vec((dir, any::<bool>()), 2..6)
        .prop_map(|rules| {
            let mut policy = DECLARATIONS.to_string();
            for (i, (dir, more)) in rules.iter().enumerate() {
                let rest = if *more { " and args.n > 0" } else { "" };
                policy.push_str(&format!(
                    "precheck under_{i} on t when path(args.s).under(\"{dir}\"){rest} => deny \"{i}\"\n"
                ));
            }
            policy
        })
        .boxed()
}

fn path_text() -> BoxedStrategy<Json> {
    prop_oneof![
        text(),
        "(/|~/|\\.\\./)?(w|w2|x|y|etc|etcetera|rel|\\.ssh|\\.|\\.\\.)(/(w|x|y|etc|\\.\\.|\\.)){0,3}/?"
            .prop_map(Json::from),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn path_prefix_scans_agree_with_the_interpreter(
        policy in path_prefix_policy(),
        paths in prop::collection::vec(path_text(), 1..8),
    ) {
        let calls: Vec<Call> = paths
            .into_iter()
            .map(|s| Call::new("t", json!({ "s": s, "n": 1 })))
            .collect();
        check_agreement(&policy, &calls)?;
    }
}

/// Rules that each start with a membership test of a list of strings: their scan looks every
/// string of the list up among the rules' literals. Rules name one tool, several, a glob or
/// every tool (`*`), and calls go to named, glob-matched and unnamed tools: a scan of `*` rules
/// serves every tool's plan, and a scan of one literal is built too.
fn membership_policy() -> BoxedStrategy<String> {
    let test = (
        prop_oneof![Just("admin"), Just("a"), Just("/w/x"), Just("b"), Just("")],
        prop_oneof![Just("agent.labels"), Just("args.tags")],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just("t"), Just("*"), Just("t, u"), Just("t*"), Just("u")],
    );
    prop::collection::vec(test, 1..7)
        .prop_map(|rules| {
            let mut policy = DECLARATIONS.to_string();
            policy.push_str("tool u { tags: list<string>, n: int }\n");
            for (i, (literal, list, more, gate, tools)) in rules.iter().enumerate() {
                let rest = if *more { " and args.n > 0" } else { "" };
                let head = format!("on {tools} when \"{literal}\" in {list}{rest}");
                policy.push_str(&if *gate {
                    format!("gate member_{i} {head} => \"{i}\"\n")
                } else {
                    format!("precheck member_{i} {head} => ask \"{i}\"\n")
                });
            }
            policy
        })
        .boxed()
}

fn membership_call() -> BoxedStrategy<Call> {
    let strings = || {
        prop::collection::vec(
            prop_oneof![Just("admin"), Just("a"), Just("/w/x"), Just("c")],
            0..4,
        )
    };
    let tags = prop_oneof![
        strings().prop_map(|t| json!(t)),
        Just(json!(["a", 1, null])),
        Just(json!("admin")),
        Just(Json::Null),
    ];
    let tool = prop_oneof![Just("t"), Just("u"), Just("tx"), Just("v")];
    (strings(), tags, prop::option::of(Just(1)), tool)
        .prop_map(|(labels, tags, n, tool)| {
            let mut args = json!({ "tags": tags });
            if let Some(n) = n {
                args["n"] = json!(n);
            }
            let mut call = Call::new(tool, args);
            call.agent.labels = labels.into_iter().map(String::from).collect();
            call
        })
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn membership_scans_agree_with_the_interpreter(
        policy in membership_policy(),
        calls in prop::collection::vec(membership_call(), 1..8),
    ) {
        check_agreement(&policy, &calls)?;
    }
}

/// More rules testing one field than a regex set takes (`MAX_SET_PATTERNS`, 16): their scan
/// narrows the patterns by literal prefixes and tries each candidate on its own, and must answer
/// exactly, since a rule whose whole condition is its test then has no code.
fn many_tests_policy() -> BoxedStrategy<String> {
    // Each test names its rule's index, so that the group has more patterns than a set takes.
    let test = prop_oneof![
        Just(r#"args.s matches r"^run{i} .*--danger""#),
        Just(r#"args.s matches r"(?i)key{i}\s*=\s*\S{{4,}}""#),
        Just(r#"args.s matches r"ghp{i}_[a-z0-9]{{2}}""#),
        Just(r#"args.s matches r"\d{i}""#),
        Just(r#"args.s matches r"x+$""#),
        Just(r#"args.s.contains("cmd{i}x")"#),
        Just(r#"args.s.contains("rm -rf")"#),
        Just(r#"args.s.starts_with("/w/{i}")"#),
        Just(r#"args.s.ends_with("{i} --danger")"#),
    ];
    // One kind per policy: a scan serves one tool, kind and field, so its group is big.
    let rules = prop::collection::vec((test, any::<bool>()), 17..30);
    (rules, 0..3usize)
        .prop_map(|(rules, kind)| {
            let mut policy = DECLARATIONS.to_string();
            for (i, (test, more)) in rules.iter().enumerate() {
                let test = test
                    .replace("{i}", &i.to_string())
                    .replace("{{", "{")
                    .replace("}}", "}");
                let rest = if *more { " and args.n > 0" } else { "" };
                let head = format!("on t when {test}{rest}");
                policy.push_str(&match kind {
                    0 => format!("precheck many_{i} {head} => deny \"{i}\"\n"),
                    1 => format!("gate many_{i} {head} => \"{i}\"\n"),
                    _ => format!("postcheck many_{i} {head} => replace content \"{i}\"\n"),
                });
            }
            policy
        })
        .boxed()
}

fn many_tests_call() -> BoxedStrategy<Call> {
    let s = prop_oneof![
        Just(json!("run12 build --danger")),
        Just(json!("run1 build --danger")),
        Just(json!("run123 build 3 --danger")),
        Just(json!("echo run1 --danger")),
        Just(json!("KEY3 = hunter2")),
        Just(json!("key14=ab")),
        Just(json!("token ghp2_ab and GHP20_AB")),
        Just(json!("rm -rf /w/x; echo cmd1x cmd16x")),
        Just(json!("/w/1/x")),
        Just(json!("/w/18")),
        Just(json!("xx")),
        Just(json!("call 55 21")),
        Just(json!(7)),
        Just(Json::Null),
        "[a-z0-9/ -]{0,12}".prop_map(Json::from),
    ];
    (s, prop::option::of(Just(1)), prop::option::of(text()))
        .prop_map(|(s, n, result)| {
            let mut args = json!({ "s": s });
            if let Some(n) = n {
                args["n"] = json!(n);
            }
            let mut call = Call::new("t", args);
            call.result = result.map(|content| ToolResult {
                status: Status::Ok,
                content: content.as_str().unwrap_or_default().to_string(),
                value: json!({}),
                error: None,
            });
            call
        })
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn prefix_scans_agree_with_the_interpreter(
        policy in many_tests_policy(),
        calls in prop::collection::vec(many_tests_call(), 1..8),
    ) {
        check_agreement(&policy, &calls)?;
    }
}

#[test]
fn shipped_policy_tests_pass_under_both_backends() {
    use sluice::compiler::load::discover;
    use sluice::compiler::testing::run_tests;
    let sets = discover(&[std::path::PathBuf::from("policies")]).expect("policies");
    let mut db = Database::default();
    let mut tests = 0;
    for source in &sets {
        let compiled = db.load(source).expect("loads");
        let program = compiled.program.as_ref().expect("compiles");
        let native = jit::compile(program, JitOptions::default()).expect("jit");
        for evaluator in [
            Evaluator::interpreted(program),
            Evaluator::new(program, Some(&native)),
        ] {
            for report in run_tests(&compiled.checked, &|call| evaluator.evaluate(call)) {
                assert!(report.passed(), "{}: {:?}", report.name, report.failures);
                tests += 1;
            }
        }
    }
    assert!(tests > 100, "only {tests} test runs");
}

#[test]
fn a_condition_that_faults_reports_the_interpreters_error() {
    let policy = format!(
        "{DECLARATIONS}\nprecheck big on t when args.n + 9223372036854775807 > 0 => deny \"x\"\n"
    );
    let mut db = Database::default();
    let compiled = db.compile_texts("fault", vec![("f.sluice".into(), policy)]);
    let program = compiled.program.as_ref().expect("compiles");
    let native = jit::compile(program, JitOptions::default()).expect("jit");
    let call = Call::new("t", json!({ "n": 1 }));
    let outcome = Evaluator::new(program, Some(&native)).evaluate(&call);
    assert_eq!(outcome.decision.as_str(), "deny");
    assert!(
        outcome.errors[0].error.contains("integer overflow"),
        "{:?}",
        outcome.errors
    );
}

/// `~` and `$HOME` resolve against the home given to `shell`, identically in both backends (the
/// rules' conditions are native code that calls the same parse), and a rule comparing with the
/// home directory sees the real path.
#[test]
fn shell_resolves_the_home_directory_alike_in_both_backends() {
    let policy = r#"
context { workspace: string, home: string }
tool bash { command: string }

precheck deny_aws on bash
  when any(c in shell(args.command, context.workspace, context.home), any(p in c.paths, p.under(context.home + "/.aws")))
  => deny "reads AWS credentials"

gate deny_home_delete on bash
  when any(c in shell(args.command, context.workspace, context.home), any(p in c.deletes, p in ["/home/me", "/home"]))
  => "deletes a home directory"

precheck ask_home_cwd on bash
  when any(c in shell(args.command, context.workspace, context.home), c.cwd == context.home)
  => ask "runs in the home directory"
"#;
    let context = json!({ "workspace": "/home/me/project", "home": "/home/me" });
    let calls: Vec<(&str, &str)> = vec![
        ("cat ~/.aws/credentials", "deny"),
        ("cat $HOME/.aws/config", "deny"),
        ("cat \"${HOME}\"/.aws/config", "deny"),
        ("cat ~root/.aws/config", "delegate"),
        ("cat ./.aws/config", "delegate"),
        ("rm -rf ~", "deny"),
        ("rm -rf $HOME/", "deny"),
        ("rm -rf ~/..", "deny"),
        ("rm -rf ~/project/build", "delegate"),
        ("cd && ls", "ask"),
        ("cd ~ && ls", "ask"),
    ];
    let calls: Vec<Call> = calls
        .iter()
        .map(|(line, _)| {
            let mut call = Call::new("bash", json!({ "command": line }));
            call.context = context.clone();
            call
        })
        .collect();
    check_agreement(policy, &calls).expect("the backends agree");
    let mut db = Database::default();
    let compiled = db.compile_texts("home", vec![("home.sluice".into(), policy.into())]);
    let program = compiled.program.as_ref().expect("compiles");
    let native = jit::compile(program, JitOptions::default()).expect("jit");
    assert_eq!(native.stats().compiled, 3, "every condition is native code");
    let expected = [
        "deny", "deny", "deny", "delegate", "delegate", "deny", "deny", "deny", "delegate", "ask",
        "ask",
    ];
    for (call, expected) in calls.iter().zip(expected) {
        for evaluator in [
            Evaluator::interpreted(program),
            Evaluator::new(program, Some(&native)),
        ] {
            let outcome = evaluator.evaluate(call);
            assert_eq!(
                outcome.decision.as_str(),
                expected,
                "{:?}: {outcome:?}",
                call.args
            );
            assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
        }
    }
}

/// `shell`'s directories may be optional: a missing one is as if it were left out, alike in
/// both backends. `??` chains through an optional default, and the chain's result is optional
/// until a required default ends it.
#[test]
fn shell_takes_optional_directories_and_a_default_may_be_optional() {
    let policy = r#"
context { workspace: string?, home: string? }
tool bash { command: string, cwd: string? }

precheck deny_aws on bash
  for cmd in shell(args.command, args.cwd ?? context.workspace, context.home)
  when any(p in cmd.paths, p.name == "credentials" and p.parent.name == ".aws")
  => deny "reads AWS credentials"

precheck ask_outside on bash
  when not path(args.cwd ?? context.workspace ?? "/nowhere").under("/home/me/project")
  => ask "runs outside the project"
"#;
    let with_context = json!({ "workspace": "/home/me/project", "home": "/home/me" });
    let cases: Vec<(&str, Option<&str>, bool, &str)> = vec![
        // The home directory is known: `~` resolves, and the workspace is the cwd.
        ("cat ~/.aws/credentials", None, true, "deny"),
        ("ls", None, true, "delegate"),
        ("ls", Some("/tmp"), true, "ask"),
        // Neither is known: the default of the default decides where the line runs.
        ("cat ~/.aws/credentials", None, false, "deny"),
        ("cat notes.txt", None, false, "ask"),
        ("cat /home/me/.aws/credentials", None, false, "deny"),
        ("ls", Some("/home/me/project/src"), false, "delegate"),
    ];
    let calls: Vec<Call> = cases
        .iter()
        .map(|(line, cwd, context, _)| {
            let mut args = json!({ "command": line });
            if let Some(cwd) = cwd {
                args["cwd"] = json!(cwd);
            }
            let mut call = Call::new("bash", args);
            if *context {
                call.context = with_context.clone();
            }
            call
        })
        .collect();
    check_agreement(policy, &calls).expect("the backends agree");
    let compiled =
        Database::default().compile_texts("opt", vec![("opt.sluice".into(), policy.into())]);
    let program = compiled.program.as_ref().expect("compiles");
    let native = jit::compile(program, JitOptions::default()).expect("jit");
    for (call, (line, _, _, expected)) in calls.iter().zip(&cases) {
        for evaluator in [
            Evaluator::interpreted(program),
            Evaluator::new(program, Some(&native)),
        ] {
            let outcome = evaluator.evaluate(call);
            assert_eq!(outcome.decision.as_str(), *expected, "{line}: {outcome:?}");
            assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
        }
    }

    // An optional chain that nothing ends is still refused where a value is required.
    let open_chain = r#"
context { workspace: string?, home: string? }
tool bash { command: string, cwd: string? }
precheck p on bash when path(args.cwd ?? context.workspace).under("/w") => allow
"#;
    let compiled =
        Database::default().compile_texts("open", vec![("open.sluice".into(), open_chain.into())]);
    assert!(
        compiled
            .diagnostics
            .iter()
            .any(|d| d.code == sluice::compiler::diagnostics::Code::OptionalWithoutDefault),
        "{:?}",
        compiled.diagnostics
    );
}
