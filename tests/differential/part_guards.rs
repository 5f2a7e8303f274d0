//! Part guards: per-part rules over `shell(...)` whose conditions start with tests of the part's
//! fields, which the indexed backends answer from the part's record before the condition runs.
//! Guards must never change an outcome: every shape a guard reads, mixed with shapes it does not
//! (a fault, a field of another kind, `not`), on lines of every kind, including calls whose line
//! is missing or not a string.

use proptest::prelude::*;
use serde_json::{Value as Json, json};

use sluice::compiler::call::Call;

use super::{DECLARATIONS, check_agreement};

/// Conditions on one part: the shapes guards read, and some they do not.
fn part_condition(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just(r#"cmd.name == "rm""#),
        Just(r#""git" == cmd.name"#),
        Just(r#"cmd.name in ["rm", "git", "ls", "sudo"]"#),
        Just(r#"cmd.name not in ["rm", "ls"]"#),
        Just(r#"cmd.name.starts_with("g")"#),
        Just("cmd.network"),
        Just("cmd.read_only"),
        Just("cmd.known"),
        Just("cmd.executes"),
        Just(r#"any(p in cmd.deletes, p.under("/w"))"#),
        Just("any(p in cmd.writes, true)"),
        Just(r#"all(p in cmd.deletes, p.under("/w"))"#),
        Just(r#""sudo" in cmd.wrappers"#),
        Just(r#""-r" in cmd.flags"#),
        Just(r#"cmd.flags.contains("-f")"#),
        Just("cmd.unresolved != null"),
        Just("null != cmd.unresolved"),
        Just(r#"(cmd.unresolved ?? "").contains("a")"#),
        Just(r#"cmd.text.contains("a")"#),
        Just(r#"(cmd.unresolved ?? "fork bomb").contains("bomb")"#),
        Just(r#"(cmd.unresolved ?? "").contains("")"#),
        Just(r#"any(a in cmd.argv, a.contains("-r") or a.contains("/w") or a.contains("it"))"#),
        Just(r#"any(a in cmd.args, a.contains("x"))"#),
        Just(r#"any(a in cmd.argv, a.contains("s") or a == "ls")"#),
        Just(r#"cmd.name != "git""#),
        Just(r#"cmd.unresolved == "x""#),
        Just("len(cmd.argv) + 9223372036854775807 > 1"),
        Just("len(cmd.argv) > 2"),
        Just("args.b"),
        Just("args.nums[0] == 1"),
        Just(r#"cmd.argv ~ ["git", .., "-f" | "--force", ..]"#),
    ]
    .prop_map(|leaf| format!("({leaf})"));
    if depth == 0 {
        return leaf.boxed();
    }
    let inner = part_condition(depth - 1);
    prop_oneof![
        3 => leaf,
        2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} and {b})")),
        2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} or {b})")),
        1 => inner.prop_map(|a| format!("(not {a})")),
    ]
    .boxed()
}

fn part_policy() -> BoxedStrategy<String> {
    let rule = (part_condition(2), 0..5usize, any::<bool>());
    prop::collection::vec(rule, 1..7)
        .prop_map(|rules| {
            let mut policy = DECLARATIONS.to_string();
            for (i, (condition, kind, with_dirs)) in rules.into_iter().enumerate() {
                let list = if with_dirs {
                    "shell(args.s, context.workspace)"
                } else {
                    "shell(args.s)"
                };
                let head = format!("on t\n  for cmd in {list}\n  when {condition}\n  =>");
                policy.push_str(&match kind {
                    0 => format!("precheck p{i} {head} allow\n\n"),
                    1 => format!("precheck p{i} {head} deny \"{{cmd.text}}\"\n\n"),
                    2 => format!("precheck p{i} {head} ask \"{{cmd.name}}\"\n\n"),
                    _ => format!("gate g{i} {head} \"veto {{cmd.text}}\"\n\n"),
                });
            }
            policy
        })
        .boxed()
}

fn line() -> BoxedStrategy<Json> {
    let word = prop_oneof![
        Just("rm -rf /w/x"),
        Just("git push -f origin main"),
        Just("ls -la"),
        Just("sudo rm x"),
        Just("curl -s u | sh"),
        Just("echo $(rm -rf /)"),
        Just("eval \"$X\""),
        Just("cd /w && rm -rf ."),
        Just("cat a > b"),
        Just("find . -delete"),
        Just("wget http://h/x"),
        Just("xargs rm -f"),
        Just("git status"),
        Just("'unbalanced"),
        Just("grep -r a ."),
    ];
    prop_oneof![
        6 => prop::collection::vec(word, 0..4).prop_map(|words| json!(words.join(" && "))),
        1 => Just(json!(null)),
        1 => Just(json!(7)),
    ]
    .boxed()
}

fn part_call() -> BoxedStrategy<Call> {
    (
        prop::option::of(line()),
        any::<bool>(),
        prop::option::of(Just("/w")),
    )
        .prop_map(|(line, b, workspace)| {
            let mut args = json!({ "b": b, "nums": [1] });
            if let Some(line) = line {
                args["s"] = line;
            }
            let mut call = Call::new("t", args);
            if let Some(workspace) = workspace {
                call.context = json!({ "workspace": workspace, "mode": "plan" });
            }
            call
        })
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn part_guards_agree_with_the_interpreter(
        policy in part_policy(),
        calls in prop::collection::vec(part_call(), 1..6),
    ) {
        check_agreement(&policy, &calls)?;
    }
}
