//! The field scans' patterns, as built and as matched, and which groups get a set.

use super::index::literal_pattern;
use super::{Literal, MAX_SET_PATTERNS, Pattern, Scans};

/// The scans of a program of one tool `t { s: string }` and these rules.
fn scans_of(rules: impl Iterator<Item = String>) -> Scans {
    let text: String = std::iter::once("tool t { s: string }\n".to_string())
        .chain(rules)
        .collect();
    let compiled =
        crate::db::Database::default().compile_texts("t", vec![("t.sluice".into(), text)]);
    let Some(program) = compiled.program else {
        unreachable!("{:#?}", compiled.diagnostics)
    };
    Scans::build(&program)
}

/// A program with `rules` gates on one field, each testing it for its own regex.
fn gates_on_one_field(rules: usize) -> Scans {
    scans_of(
        (0..rules)
            .map(|i| format!("gate g{i} on t when args.s matches r\"k{i}[0-9]{{3}}\" => \"no\"\n")),
    )
}

/// A field tested for a few regexes is scanned once for all of them with a regex set; one
/// tested for many is scanned for their prefixes.
#[test]
fn a_group_of_many_regexes_is_not_scanned_as_one_set() {
    assert_eq!(gates_on_one_field(3).scans.len(), 1);
    assert_eq!(gates_on_one_field(MAX_SET_PATTERNS).scans.len(), 1);
    let many = gates_on_one_field(MAX_SET_PATTERNS + 1);
    assert_eq!(many.scans.len(), 1);
    assert!(matches!(many.scans[0].matcher, super::Matcher::Prefixes(_)));
    // It answers what matches, as a set does: every guard decides its rule's whole test.
    assert!(many.guards.iter().all(|g| g.is_some_and(|g| g.whole)));
}

/// A pattern for every literal test of every needle, and for `under` of a few directories.
fn patterns() -> Vec<Pattern> {
    let needles = [
        "",
        "rm -rf",
        "a.b*c",
        "(x|y)",
        "^$",
        "ünï",
        "\\d{3}",
        "/secret/1",
    ];
    let literals = [Literal::StartsWith, Literal::EndsWith, Literal::Contains];
    needles
        .iter()
        .flat_map(|needle| literals.map(|literal| literal_pattern(literal(needle.to_string()))))
        .chain(["/", "/etc", "/a b/c.d"].map(|dir| literal_pattern(Literal::Under(dir.into()))))
        .map(|pattern| pattern.unwrap_or_else(|| unreachable!("every test above is scannable")))
        .collect()
}

/// A pattern's syntax tree, built without parsing, is the tree its text parses to: the text
/// tells tests apart, the tree is what the scan runs.
#[test]
fn a_built_pattern_is_what_its_text_parses_to() {
    for pattern in patterns() {
        let parsed = regex_syntax::parse(&pattern.text).ok();
        assert_eq!(parsed.as_ref(), pattern.hir.as_deref(), "{}", pattern.text);
    }
}

/// A scan of one literal test compares bytes instead of running the pattern's regex, and
/// must answer as the regex would.
#[test]
fn a_literal_matches_what_its_pattern_matches() {
    let texts = [
        "",
        "/",
        "/etc",
        "/etc/passwd",
        "/etcetera",
        "/a b/c.d/e",
        "rm -rf /",
        "sudo rm -rf",
        "xa.b*cx",
        "(x|y)",
        "^$",
        "ünï ünï",
        "\\d{3}",
        "/secret/1/key",
        "/secret/12",
    ];
    for pattern in patterns() {
        let Some(literal) = &pattern.literal else {
            unreachable!("a literal test's pattern keeps its literal");
        };
        let regex = regex::Regex::new(&pattern.text).ok();
        for text in texts {
            let expected = regex.as_ref().map(|regex| regex.is_match(text));
            assert_eq!(
                Some(literal.matches(text)),
                expected,
                "{} on {text:?}",
                pattern.text
            );
        }
    }
}

/// The guard of each rule of a policy over `shell(...)`, whose rules test `when` conditions.
fn part_guards(conditions: &[&str]) -> Vec<Option<super::PartGuard>> {
    let scans = scans_of(conditions.iter().enumerate().map(|(i, condition)| {
        format!("gate g{i} on t\n  for cmd in shell(args.s)\n  when {condition}\n  => \"no\"\n")
    }));
    (0..conditions.len() as u32)
        .map(|rule| scans.part_guard(rule).cloned())
        .collect()
}

/// The shapes the shipped sets write most (a `?? ""` before `contains`, an `any` of `contains`
/// tests, a `not in` before the test that matters, an `or` of the names a rule is about) get a
/// guard; a left operand that may fault keeps the right one's guard from standing alone.
#[test]
fn the_shipped_shapes_of_part_conditions_are_guarded() {
    use super::PartGuard::{After, Any, AnyContains, Contains, NonEmpty, OneOf};
    let field = |name: &str| crate::shell::FIELDS.iter().position(|f| *f == name);
    let (Some(unresolved), Some(argv), Some(name), Some(writes)) = (
        field("unresolved"),
        field("argv"),
        field("name"),
        field("writes"),
    ) else {
        unreachable!("the part's fields");
    };
    let guards = part_guards(&[
        r#"(cmd.unresolved ?? "").contains("a fork bomb")"#,
        r#"any(a in cmd.argv, a.contains("169.254") or a.contains("metadata"))"#,
        r#"cmd.name not in ["ls", "cd"] and any(p in cmd.writes, p == "/")"#,
        r#"len(cmd.argv) + 9223372036854775807 > 1 and any(p in cmd.writes, p == "/")"#,
        r#"any(a in cmd.argv, a.contains("x") or a == "y")"#,
        r#"cmd.name == "aws" or (cmd.name in ["az", "gcloud"] or cmd.name == "vault")"#,
        r#"cmd.name == "git" or any(p in cmd.writes, true) or cmd.name == "jj""#,
    ]);
    let names = |names: &[&str]| names.iter().map(|&name| name.into()).collect();
    assert_eq!(
        guards,
        vec![
            Some(Contains(unresolved, "a fork bomb".into(), Some("".into()))),
            Some(AnyContains(
                argv,
                ["169.254".into(), "metadata".into()].into()
            )),
            Some(After([name].into(), Box::new(NonEmpty(writes)))),
            None,
            Some(NonEmpty(argv)),
            Some(OneOf(name, names(&["aws", "az", "gcloud", "vault"]))),
            Some(Any(
                [OneOf(name, names(&["git", "jj"])), NonEmpty(writes)].into()
            )),
        ]
    );
}
