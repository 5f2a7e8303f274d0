//! Printing syntax back as canonical text.

use crate::ast::*;

/// Lines wider than this are broken where the syntax allows (records, lists, objects).
const WIDTH: usize = 100;

pub struct Printer;

impl Printer {
    /// The lines of an item, each with the span of the clause it prints.
    pub fn item(item: &Item) -> Vec<(String, Span)> {
        match item {
            Item::Tool(tool) => {
                let head = format!("tool {} ", tool.name.name);
                let shape = match &tool.shape {
                    ToolShape::Fields(fields) => record(fields, head.len(), 0),
                    ToolShape::Schema { path, .. } => format!("from {}", string_literal(path)),
                };
                vec![(head + &shape, tool.span)]
            }
            Item::Label(label) => vec![(format!("label {}", label.name.name), label.span)],
            Item::Import(import) => vec![(
                format!("import {}", string_literal(&import.path)),
                import.span,
            )],
            Item::Context(context) => vec![(
                format!("context {}", record(&context.fields, 8, 0)),
                context.span,
            )],
            Item::Effects(effects) => vec![(
                format!("effects {}", literal(&effects.rows, 8, 0)),
                effects.span,
            )],
            Item::Rule(rule) => rule_lines(rule),
            Item::Test(test) => {
                let mut lines = vec![(
                    format!("test {} {{", string_literal(&test.name)),
                    test.name_span,
                )];
                for stmt in &test.statements {
                    lines.push((format!("  {}", statement(stmt)), stmt.span));
                }
                lines.push((
                    "}".to_string(),
                    Span::new(test.span.end as usize - 1, test.span.end as usize),
                ));
                lines
            }
        }
    }
}

fn rule_lines(rule: &Rule) -> Vec<(String, Span)> {
    let selectors: Vec<&str> = rule.selectors.iter().map(|s| s.text.as_str()).collect();
    let head_end = rule.selectors.last().map_or(rule.name.span, |s| s.span);
    let mut lines = vec![(
        format!(
            "{} {} on {}",
            rule.kind.keyword(),
            rule.name.name,
            selectors.join(", ")
        ),
        Span {
            start: rule.span.start,
            end: head_end.end,
        },
    )];
    if let Some(part) = &rule.per_part {
        let head = format!("  for {} in ", part.var.name);
        let list = wrapped(&part.list, 0, head.len());
        lines.push((format!("{head}{list}"), part.span));
    }
    if let Some(cond) = &rule.condition {
        lines.push((format!("  when {}", wrapped(cond, 0, 7)), cond.span));
    }
    let effects: Vec<String> = rule.effects.iter().map(effect).collect();
    let effects_span = match (rule.effects.first(), rule.effects.last()) {
        (Some(first), Some(last)) => first.span.to(last.span),
        _ => rule.span,
    };
    let one_line = format!("  => {}", effects.join(", "));
    let effects_text = if one_line.len() <= WIDTH {
        one_line
    } else {
        format!("  => {}", effects.join(",\n     "))
    };
    lines.push((effects_text, effects_span));
    if let Some(examples) = &rule.examples {
        lines.push((
            format!("  examples {}", literal(examples, 11, 2)),
            examples.span,
        ));
    }
    lines
}

fn effect(effect: &Effect) -> String {
    match &effect.kind {
        EffectKind::Allow => "allow".into(),
        EffectKind::Accept => "accept".into(),
        EffectKind::Safe => "safe".into(),
        EffectKind::Deny(e) => format!("deny {}", expr(e, 0)),
        EffectKind::Ask(e) => format!("ask {}", expr(e, 0)),
        EffectKind::ReplaceContent(e) => format!("replace content {}", expr(e, 0)),
        EffectKind::ReplaceValue(e) => format!("replace value {}", expr(e, 0)),
        EffectKind::Attach(e) => format!("attach context {}", expr(e, 0)),
        EffectKind::Fail {
            message,
            context: None,
        } => format!("fail {}", expr(message, 0)),
        EffectKind::Fail {
            message,
            context: Some(c),
        } => format!("fail {} with context {}", expr(message, 0), expr(c, 0)),
        EffectKind::Redact {
            pattern,
            family,
            filter,
        } => {
            let mut text = format!("redact {} as {}", expr(pattern, 0), expr(family, 0));
            if let Some(filter) = filter {
                // The filter on a line of its own, under the pattern it judges.
                text.push_str(&format!("\n       where {}", expr(filter, 0)));
            }
            text
        }
        EffectKind::Label { name, expiry, .. } => {
            let mut text = format!("label session {}", string_literal(name));
            if let Some(expiry) = expiry {
                text.push_str(&format!(" for {}", expiry_text(*expiry)));
            }
            text
        }
        EffectKind::Veto(e) => expr(e, 0),
    }
}

/// An expiry in the largest unit that says it exactly.
pub fn expiry_text(expiry: crate::decision::Expiry) -> String {
    use crate::decision::Expiry;
    match expiry {
        Expiry::Calls(1) => "1 call".into(),
        Expiry::Calls(n) => format!("{n} calls"),
        Expiry::Seconds(s) => {
            let (count, unit) = [(86_400, "d"), (3_600, "h"), (60, "m")]
                .into_iter()
                .find(|(per, _)| s > 0 && s % per == 0)
                .map_or((s, "s"), |(per, unit)| (s / per, unit));
            format!("{count} {unit}")
        }
    }
}

fn statement(stmt: &TestStmt) -> String {
    match &stmt.kind {
        TestStmtKind::Agent(lit) => format!("agent {}", literal(lit, 8, 2)),
        TestStmtKind::Context(lit) => format!("context {}", literal(lit, 10, 2)),
        TestStmtKind::Session(lit) => format!("session {}", literal(lit, 10, 2)),
        TestStmtKind::Call { tool, args } => format!(
            "call {} {}",
            tool.name,
            literal(args, 8 + tool.name.len(), 2)
        ),
        TestStmtKind::Result {
            status,
            fields: Some(f),
        } => format!(
            "result {} {}",
            status.name,
            literal(f, 10 + status.name.len(), 2)
        ),
        TestStmtKind::Result {
            status,
            fields: None,
        } => format!("result {}", status.name),
        TestStmtKind::Expect(e) => format!("expect {}", expectation(e)),
    }
}

fn expectation(e: &Expectation) -> String {
    match e {
        Expectation::Verdict(w) => w.name.clone(),
        Expectation::Gate(n) => format!("gate {}", n.name),
        Expectation::NoGate => "no gate".into(),
        Expectation::Rule(n) => format!("rule {}", n.name),
        Expectation::Reason(s) => format!("reason {}", string_literal(s)),
        Expectation::Content(s) => format!("content {}", string_literal(s)),
        Expectation::Error(s) => format!("error {}", string_literal(s)),
        Expectation::Value(v) => format!("value {}", literal(v, 14, 2)),
        Expectation::Fail(s) => format!("fail {}", string_literal(s)),
        Expectation::Attached(s) => format!("attach context {}", string_literal(s)),
        Expectation::Part(part, verdict) => {
            format!("part {} {}", string_literal(part), verdict.name)
        }
        Expectation::Label(name) => format!("label {}", string_literal(&name.name)),
    }
}

// ---------------------------------------------------------------------- types

fn record(fields: &[FieldDecl], column: usize, indent: usize) -> String {
    let flat: Vec<String> = fields
        .iter()
        .map(|f| format!("{}: {}", f.name.name, type_expr(&f.ty, 0, indent + 2)))
        .collect();
    let one_line = if flat.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {} }}", flat.join(", "))
    };
    if column + indent + one_line.len() <= WIDTH || fields.is_empty() {
        return one_line;
    }
    let pad = " ".repeat(indent + 2);
    let lines: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "{pad}{}: {},",
                f.name.name,
                type_expr(&f.ty, pad.len() + f.name.name.len() + 2, indent + 2)
            )
        })
        .collect();
    format!("{{\n{}\n{}}}", lines.join("\n"), " ".repeat(indent))
}

fn type_expr(ty: &TypeExpr, column: usize, indent: usize) -> String {
    let base = match &ty.kind {
        TypeKind::String => "string".to_string(),
        TypeKind::Int => "int".into(),
        TypeKind::Float => "float".into(),
        TypeKind::Bool => "bool".into(),
        TypeKind::Any => "any".into(),
        TypeKind::List(inner) => format!("list<{}>", type_expr(inner, column + 5, indent)),
        TypeKind::Record(fields) => record(fields, column, indent),
        TypeKind::Enum(values) => values
            .iter()
            .map(|v| string_literal(v))
            .collect::<Vec<_>>()
            .join(" | "),
    };
    // The grammar applies `?` to the whole type, enums included: `"a" | "b"?`.
    if ty.optional {
        format!("{base}?")
    } else {
        base
    }
}

// ---------------------------------------------------------------------- literals

fn literal(lit: &Literal, column: usize, indent: usize) -> String {
    let flat = literal_flat(lit);
    if column + flat.len() <= WIDTH {
        return flat;
    }
    let pad = " ".repeat(indent + 2);
    match &lit.kind {
        LiteralKind::Object(entries) if !entries.is_empty() => {
            let lines: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{pad}{}: {},",
                        key(&k.name),
                        literal(v, pad.len() + k.name.len() + 2, indent + 2)
                    )
                })
                .collect();
            format!("{{\n{}\n{}}}", lines.join("\n"), " ".repeat(indent))
        }
        LiteralKind::List(items) if !items.is_empty() => {
            let lines: Vec<String> = items
                .iter()
                .map(|v| format!("{pad}{},", literal(v, pad.len(), indent + 2)))
                .collect();
            format!("[\n{}\n{}]", lines.join("\n"), " ".repeat(indent))
        }
        _ => flat,
    }
}

fn literal_flat(lit: &Literal) -> String {
    match &lit.kind {
        LiteralKind::Null => "null".into(),
        LiteralKind::Bool(b) => b.to_string(),
        LiteralKind::Int(i) => i.to_string(),
        LiteralKind::Float(f) => float(f.0),
        LiteralKind::Str(s) => string_literal(s),
        LiteralKind::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(literal_flat)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        LiteralKind::Object(entries) if entries.is_empty() => "{}".into(),
        LiteralKind::Object(entries) => {
            format!(
                "{{ {} }}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", key(&k.name), literal_flat(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

fn key(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        string_literal(name)
    }
}

fn float(f: f64) -> String {
    let text = f.to_string();
    if text.contains('.') || !f.is_finite() {
        text
    } else {
        format!("{text}.0")
    }
}

// ---------------------------------------------------------------------- strings

/// A data string (names, examples, tests): it never interpolates, so only quotes, backslashes and
/// control characters are escaped.
pub fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '{' | '}' => out.push(c),
            other => out.push_str(&escape(other.encode_utf8(&mut [0; 4]))),
        }
    }
    out.push('"');
    out
}

/// A string in an expression, without interpolation: raw when escapes would be needed.
fn expr_string(text: &str) -> String {
    let needs_escape = text.contains(['\\', '"', '{', '}']);
    let has_control = text.chars().any(|c| c.is_control());
    if needs_escape && !has_control {
        let mut hashes = String::new();
        while text.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        return format!("r{hashes}\"{text}\"{hashes}");
    }
    format!("\"{}\"", escape(text))
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            other => out.push(other),
        }
    }
    out
}

// ---------------------------------------------------------------------- expressions

const NOT: u8 = 3;
const POSTFIX: u8 = 7;

fn precedence(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary { op, .. } => op.precedence(),
        ExprKind::ArgvMatch { .. } => BinOp::Eq.precedence(),
        ExprKind::Not(_) => NOT,
        _ => POSTFIX,
    }
}

/// Prints `e`, in parentheses when it binds looser than `min`.
fn expr(e: &Expr, min: u8) -> String {
    let text = match &e.kind {
        ExprKind::Null => "null".into(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Int(i) => i.to_string(),
        ExprKind::Float(f) => float(f.0),
        ExprKind::Str(parts) => string_expr(parts),
        ExprKind::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| expr(i, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Field(base, field) => format!("{}.{}", expr(base, POSTFIX), field.name),
        ExprKind::Index(base, index) => format!("{}[{}]", expr(base, POSTFIX), expr(index, 0)),
        ExprKind::Method {
            receiver,
            method,
            args,
        } => format!(
            "{}.{}({})",
            expr(receiver, POSTFIX),
            method.name,
            arguments(args)
        ),
        ExprKind::Call { function, args } => format!("{}({})", function.name, arguments(args)),
        ExprKind::Not(inner) => format!("not {}", expr(inner, NOT)),
        ExprKind::Binary { op, lhs, rhs } => {
            let p = op.precedence();
            let comparison = p == BinOp::Eq.precedence();
            // Comparisons do not chain: both sides bind tighter. Others associate to the left.
            let (left_min, right_min) = if comparison {
                (p + 1, p + 1)
            } else {
                (p, p + 1)
            };
            format!(
                "{} {} {}",
                expr(lhs, left_min),
                op.symbol(),
                expr(rhs, right_min)
            )
        }
        ExprKind::Quantified {
            quantifier,
            var,
            list,
            body,
        } => {
            let word = match quantifier {
                Quantifier::Any => "any",
                Quantifier::All => "all",
            };
            format!(
                "{word}({} in {}, {})",
                var.name,
                expr(list, 0),
                expr(body, 0)
            )
        }
        ExprKind::ArgvMatch { subject, pattern } => {
            let p = BinOp::Eq.precedence();
            format!("{} ~ {}", expr(subject, p + 1), argv_pattern(pattern))
        }
    };
    if precedence(e) < min {
        format!("({text})")
    } else {
        text
    }
}

/// Like [`expr`], but breaks `or`/`and` chains that do not fit in the line, one operand per line,
/// each continuation indented four spaces past the clause.
fn wrapped(e: &Expr, min: u8, column: usize) -> String {
    let flat = expr(e, min);
    if column + flat.len() <= WIDTH {
        return flat;
    }
    match &e.kind {
        ExprKind::Binary {
            op: op @ (BinOp::Or | BinOp::And),
            ..
        } => {
            let mut operands = Vec::new();
            chain(e, *op, &mut operands);
            let p = op.precedence();
            let parenthesized = p < min;
            let inner_column = column + usize::from(parenthesized);
            let mut text = String::new();
            for (i, operand) in operands.iter().enumerate() {
                if i == 0 {
                    text.push_str(&wrapped(operand, p, inner_column));
                } else {
                    text.push_str(&format!(
                        "\n    {} {}",
                        op.symbol(),
                        wrapped(operand, p + 1, 4 + op.symbol().len() + 1)
                    ));
                }
            }
            if parenthesized {
                format!("({text})")
            } else {
                text
            }
        }
        ExprKind::Not(inner) => {
            let text = format!("not {}", wrapped(inner, NOT, column + 4));
            if NOT < min { format!("({text})") } else { text }
        }
        _ => flat,
    }
}

/// The operands of a left-associated chain of one operator.
fn chain<'e>(e: &'e Expr, op: BinOp, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary {
            op: inner,
            lhs,
            rhs,
        } if *inner == op => {
            chain(lhs, op, out);
            out.push(rhs);
        }
        _ => out.push(e),
    }
}

/// `["git", "push", .., "--force" | "-f", ..]`.
pub fn argv_pattern(pattern: &ArgvPattern) -> String {
    let items: Vec<String> = pattern
        .items
        .iter()
        .map(|item| match item {
            PatternItem::Rest => "..".to_string(),
            PatternItem::Word(alternatives) => alternatives
                .iter()
                .map(|a| match a {
                    PatternWord::Any => "_".to_string(),
                    PatternWord::Literal(text) => string_literal(text),
                })
                .collect::<Vec<_>>()
                .join(" | "),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn arguments(args: &[Expr]) -> String {
    args.iter()
        .map(|a| expr(a, 0))
        .collect::<Vec<_>>()
        .join(", ")
}

fn string_expr(parts: &[StrPart]) -> String {
    match parts {
        [] => "\"\"".into(),
        [StrPart::Text(t)] => expr_string(t),
        _ => {
            let mut out = String::from("\"");
            for part in parts {
                match part {
                    StrPart::Text(t) => out.push_str(&escape(t)),
                    StrPart::Expr(e) => {
                        out.push('{');
                        out.push_str(&expr(e, 0));
                        out.push('}');
                    }
                }
            }
            out.push('"');
            out
        }
    }
}
