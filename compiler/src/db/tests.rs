//! Incrementality: which queries re-run after an edit, counted through salsa's event log.

use std::collections::BTreeMap;

use salsa::Setter;

use super::*;

fn executed(log: &QueryLog, query: &str) -> usize {
    count(&log.take(), query)
}

#[test]
fn editing_one_file_reparses_only_that_file() {
    let (mut db, log) = Database::with_log();
    let a = SourceFile::new(
        &db,
        "a.sluice".into(),
        "tool bash { command: string }\n".into(),
    );
    let b = SourceFile::new(
        &db,
        "b.sluice".into(),
        "gate g on bash when args.command == \"x\" => \"no\"\n".into(),
    );
    let set = PolicySet::new(&db, vec![a, b], BTreeMap::new());
    assert!(compile(&db, set).is_some());
    assert_eq!(executed(&log, "parse"), 2);

    b.set_text(&mut db)
        .to("gate g on bash when args.command == \"y\" => \"no\"\n".into());
    assert!(compile(&db, set).is_some());
    let ran = log.take();
    assert_eq!(count(&ran, "parse"), 1, "{ran:?}");
    assert_eq!(count(&ran, "parse_piece"), 1, "{ran:?}");
    assert_eq!(count(&ran, "check_rule"), 1, "{ran:?}");

    // Nothing changed: nothing runs again.
    assert!(compile(&db, set).is_some());
    assert_eq!(log.take(), Vec::<String>::new());
}

#[test]
fn diagnostics_come_from_every_stage() {
    let db = Database::default();
    let file = SourceFile::new(&db, "a.sluice".into(), "tool bash { command: string }\ntool unused { x: int }\ngate g on bash when args.comand == \"x\" => \"no\"\n".into());
    let set = PolicySet::new(&db, vec![file], BTreeMap::new());
    let codes: Vec<&str> = diagnostics(&db, set)
        .iter()
        .map(|d| d.code.short())
        .collect();
    assert_eq!(codes, ["W0004", "E0007"]);
}

/// A policy set of `n` rules over three tools: a third on each.
fn many_rules(n: usize) -> String {
    let mut text = String::from(
        "tool bash { command: string }\ntool write_file { path: string, content: string }\ntool fetch { url: string }\n\n",
    );
    for i in 0..n {
        let rule = match i % 3 {
            0 => format!(
                "precheck shell_{i} on bash\n  when args.command matches r\"\\btok{i}\\b\"\n  => deny \"blocked {i}\"\n\n"
            ),
            1 => format!(
                "gate write_{i} on write_file\n  when args.path.starts_with(\"/etc/{i}/\")\n  => \"protected {i}\"\n\n"
            ),
            _ => format!(
                "precheck fetch_{i} on fetch\n  when args.url == \"https://h{i}.example\"\n  => ask \"fetch {i}?\"\n\n"
            ),
        };
        text.push_str(&rule);
    }
    text
}

fn one_file_set(db: &Database, text: String) -> (SourceFile, PolicySet) {
    let file = SourceFile::new(db, "many.sluice".into(), text);
    (file, PolicySet::new(db, vec![file], BTreeMap::new()))
}

fn count(ran: &[String], query: &str) -> usize {
    ran.iter()
        .filter(|q| q.starts_with(&format!("{query}(")))
        .count()
}

#[test]
fn editing_one_rule_rechecks_and_relowers_only_that_rule() {
    let (mut db, log) = Database::with_log();
    let text = many_rules(1000);
    let (file, set) = one_file_set(&db, text.clone());
    assert_eq!(
        compile(&db, set).as_ref().map(|p| p.rules.len()),
        Some(1000)
    );
    let first = log.take();
    assert_eq!(count(&first, "check_rule"), 1000, "{:?}", &first[..10]);
    assert_eq!(count(&first, "lower_rule"), 1000);

    // A longer body: every rule below moves.
    let edited = text.replace("r\"\\btok501\\b\"", "r\"\\b(tok501|token501)\\b\"");
    assert_ne!(edited, text);
    file.set_text(&mut db).to(edited.clone());
    let program = compile(&db, set).clone().expect("compiles");
    let ran = log.take();
    assert_eq!(count(&ran, "parse"), 1, "{ran:?}");
    assert_eq!(count(&ran, "parse_piece"), 1, "{ran:?}");
    assert_eq!(count(&ran, "check_rule"), 1, "{ran:?}");
    assert_eq!(count(&ran, "lower_rule"), 1, "{ran:?}");
    assert_eq!(count(&ran, "lint_rule"), 1, "{ran:?}");
    assert_eq!(count(&ran, "examples_rule"), 1, "{ran:?}");

    // The edit took effect, and every rule below kept its line and moved its span.
    let rule = |name: &str| {
        program
            .rules
            .iter()
            .find(|r| &*r.meta.name == name)
            .expect("rule")
    };
    let regex = program.regexes.iter().map(crate::ir::PolicyRegex::as_str);
    assert!(regex.clone().any(|r| r.contains("token501")));
    assert!(!regex.clone().any(|r| r == "\\btok501\\b"));
    let last = rule("shell_999");
    let at = edited.find("precheck shell_999").expect("present");
    assert_eq!(last.meta.span.start as usize, at);
    assert_eq!(last.meta.line as usize, edited[..at].lines().count() + 1);
    let condition = last
        .condition
        .and_then(|c| last.node(c))
        .expect("condition");
    assert!(edited[condition.span.range()].starts_with("args.command matches"));
}

#[test]
fn editing_a_tool_rechecks_only_the_rules_that_name_it() {
    let (mut db, log) = Database::with_log();
    let text = many_rules(1000);
    let (file, set) = one_file_set(&db, text.clone());
    assert!(compile(&db, set).is_some());
    log.take();

    file.set_text(&mut db).to(text.replace(
        "tool fetch { url: string }",
        "tool fetch { url: string, method: string? }",
    ));
    assert!(compile(&db, set).is_some());
    let ran = log.take();
    let fetch_rules = (0..1000).filter(|i| i % 3 == 2).count();
    assert_eq!(count(&ran, "check_rule"), fetch_rules, "{ran:?}");
    assert_eq!(count(&ran, "lower_rule"), fetch_rules);

    // Moving a declaration (a comment above it) changes no rule's view of it.
    file.set_text(&mut db).to(format!("# tools\n{text}"));
    assert!(compile(&db, set).is_some());
    let ran = log.take();
    assert_eq!(
        count(&ran, "check_rule"),
        fetch_rules,
        "the type changed back: {ran:?}"
    );
    file.set_text(&mut db).to(format!("# the tools\n{text}"));
    assert!(compile(&db, set).is_some());
    assert_eq!(count(&log.take(), "check_rule"), 0);
}

#[test]
fn a_rule_moved_by_an_edit_above_reports_at_its_new_place() {
    let (mut db, log) = Database::with_log();
    let broken = "precheck typo on bash when args.comand == \"x\" => deny \"no\"\n";
    let text = format!("{}{broken}", many_rules(30));
    let (file, set) = one_file_set(&db, text.clone());
    let spans = |db: &Database, text: &str| -> Vec<String> {
        diagnostics(db, set)
            .iter()
            .map(|d| text[d.primary.span.range()].to_string())
            .collect()
    };
    assert_eq!(spans(&db, &text), ["comand"]);
    log.take();

    let moved = format!("# a comment that moves every rule\n{text}");
    file.set_text(&mut db).to(moved.clone());
    assert_eq!(spans(&db, &moved), ["comand"]);
    assert_eq!(count(&log.take(), "check_rule"), 0);

    // Inside the rule too: its own text changed, so it is re-checked with new positions.
    let spaced = moved.replace("when args.comand", "when     args.comand");
    file.set_text(&mut db).to(spaced.clone());
    assert_eq!(spans(&db, &spaced), ["comand"]);
    assert_eq!(count(&log.take(), "check_rule"), 1);
}

/// Parsing piece by piece gives exactly the whole-file parse, positions included (`Debug` shows
/// spans; equality ignores them).
fn assert_parses_as_whole(text: &str) {
    let db = Database::default();
    let file = SourceFile::new(&db, "f.sluice".into(), text.to_string());
    let by_pieces = parse(&db, file);
    let (whole, _) = crate::parser::parse_file("f.sluice", text);
    assert_eq!(format!("{:?}", by_pieces.file()), format!("{whole:?}"));
}

#[test]
fn pieces_parse_as_the_whole_file() {
    assert_parses_as_whole(include_str!("../../../tests/fixtures/tour.sluice"));
    for policy in [
        include_str!("../../../policies/coding-agent/coding-agent.sluice"),
        include_str!("../../../policies/secrets-redaction/secrets-redaction.sluice"),
        include_str!("../../../policies/network/network.sluice"),
    ] {
        assert_parses_as_whole(policy);
    }
    // A test statement in the first column looks like an item: its pieces do not parse alone.
    assert_parses_as_whole(
        "tool bash { command: string }\ncontext { home: string }\ntest \"t\" {\ncontext { home: \"/h\" }\ncall bash { command: \"ls\" }\nexpect allow\n}\n",
    );
    // A header after the first item, and a broken item, are the whole parse's to report.
    assert_parses_as_whole("tool a {}\npolicy p\n");
    assert_parses_as_whole("tool a { x: strin }\ngate g on a when => \"r\"\n");
}

#[test]
fn lint_and_example_findings_follow_their_rule() {
    let (mut db, log) = Database::with_log();
    let tail = "precheck odd on bash when args.command == \"a\" => deny \"x\"\n  examples { deny: [{ command: \"b\" }] }\ngate never on bash when args.command == \"x\" and false => \"no\"\n";
    let text = format!("{}{tail}", many_rules(30));
    let (file, set) = one_file_set(&db, text.clone());
    let spans = |db: &Database, text: &str| -> Vec<(String, String)> {
        diagnostics(db, set)
            .iter()
            .map(|d| {
                (
                    d.code.short().to_string(),
                    text[d.primary.span.range()].to_string(),
                )
            })
            .collect()
    };
    let expected = [
        ("E0018".to_string(), "{ command: \"b\" }".to_string()),
        (
            "W0001".to_string(),
            "args.command == \"x\" and false".to_string(),
        ),
    ];
    assert_eq!(spans(&db, &text), expected);
    log.take();

    let moved = format!("tool other {{ x: int }}\n{text}");
    file.set_text(&mut db).to(moved.clone());
    let mut found = spans(&db, &moved);
    found.retain(|(code, _)| code != "W0004"); // the new tool is unused
    assert_eq!(found, expected);
    let ran = log.take();
    assert_eq!(count(&ran, "check_rule"), 0, "{ran:?}");
    assert_eq!(count(&ran, "examples_rule"), 0, "{ran:?}");
}

/// A set large enough for the loader to use every core.
fn large_set(broken: bool) -> String {
    let mut text: String = (0..7)
        .map(|t| format!("tool t{t} {{ command: string, n: int }}\n"))
        .collect();
    for i in 0..300 {
        let condition = match i % 3 {
            0 => format!("args.command.contains(\"x{i}\")"),
            1 => format!("args.command matches r\"^c{i} .*e\""),
            _ => format!("args.n > {i}"),
        };
        text.push_str(&format!(
            "precheck r{i} on t{} when {condition} => deny \"r{i}\"\n  examples {{ pass: [{{ command: \"ok\", n: 0 }}] }}\n",
            i % 7
        ));
    }
    if broken {
        text.push_str("precheck bad on t1 when args.n == \"x\" => deny \"bad\"\n");
    }
    text
}

#[test]
fn a_large_set_loads_on_every_core_as_it_does_on_one() {
    for broken in [false, true] {
        let text = large_set(broken);
        let files = vec![("big.sluice".to_string(), text.clone())];
        let parallel = Database::default().compile_texts("big", files);
        let db = Database::default();
        let file = SourceFile::new(&db, "big.sluice".into(), text);
        let set = PolicySet::new(&db, vec![file], BTreeMap::new());
        let serial = db.compiled("big", set);
        assert_eq!(parallel.diagnostics, serial.diagnostics);
        assert_eq!(parallel.has_errors(), broken);
        let listing =
            |c: &crate::load::Compiled| c.program.as_deref().map(crate::ir::render_program);
        assert_eq!(listing(&parallel), listing(&serial));
        assert_eq!(listing(&parallel).is_some(), !broken);
    }
}
