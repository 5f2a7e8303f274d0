//! Step 1 of parsing (text → CST): the pest grammar and the entry point that turns a file's text
//! into its syntax tree, recovering after an error so that every broken item is reported.

mod build;
mod cst;
mod err;
mod nesting;
mod recover;
pub(crate) use err::EFFECT_WORDS;
pub use recover::ITEM_KEYWORDS;

use crate::ast::PolicyFile;
use crate::diagnostics::Diagnostic;

pub use cst::Rule;

/// The pieces of a file: split before every line that begins, in the first column, with an item
/// keyword. When every piece parses on its own, the file is their items in order, so an edit
/// re-parses only the piece it touched.
pub fn pieces(text: &str) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let starts = recover::item_starts(text);
    let ends: Vec<usize> = starts.iter().skip(1).copied().chain([text.len()]).collect();
    starts.into_iter().zip(ends).map(|(start, end)| start..end)
}

/// Parses one piece (see [`pieces`]) with positions relative to its start, or `None` when it does
/// not parse on its own: then [`parse_file`] parses the whole file and reports what is wrong.
pub fn parse_piece(path: &str, piece: &str) -> Option<(PolicyFile, Vec<Diagnostic>)> {
    if nesting::nesting_limit(path, piece, 0).is_some() {
        return None;
    }
    cst::parse(piece)
        .ok()
        .map(|pairs| build::build_file(path, pairs, 0))
}

/// Parses one file. Returns the items that parsed and a diagnostic for each item that did not.
pub fn parse_file(path: &str, text: &str) -> (PolicyFile, Vec<Diagnostic>) {
    if let Some(limit) = nesting::nesting_limit(path, text, 0) {
        return (PolicyFile::default(), vec![limit]);
    }
    match cst::parse(text) {
        Ok(pairs) => build::build_file(path, pairs, 0),
        Err(error) => recover::parse_items(path, text, err::to_diagnostic(path, text, 0, &error)),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_file;
    use crate::ast::{BinOp, ExprKind, Item};

    #[test]
    fn parses_the_tour_policy() {
        let text = include_str!("../../../tests/fixtures/tour.sluice");
        let (file, diagnostics) = parse_file("tour.sluice", text);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        assert_eq!(file.items.len(), 11);
        assert_eq!(
            file.header.map(|h| h.name.name),
            Some("coding_agent".to_string())
        );
    }

    #[test]
    fn equality_ignores_layout() {
        let (a, _) = parse_file("a", "gate g on x when args.a == 1 => \"no\"");
        let (b, _) = parse_file("b", "gate   g\n  on x\n  when args.a==1\n  => \"no\"");
        assert_eq!(a, b);
    }

    #[test]
    fn reports_every_broken_item() {
        let text = "tool a { x: strin }\ntool b { y: string }\ngate g on b when => \"r\"\n";
        let (file, diagnostics) = parse_file("f", text);
        assert_eq!(diagnostics.len(), 2, "{diagnostics:#?}");
        assert_eq!(file.items.len(), 1);
    }

    #[test]
    fn refuses_deep_nesting_without_overflow() {
        let text = format!(
            "gate g on x when {}true{} => \"r\"",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let (_, diagnostics) = parse_file("f", &text);
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, crate::diagnostics::Code::ParserLimit);
    }

    #[test]
    fn binary_operators_associate_left() {
        let (file, _) = parse_file("f", "gate g on x when true or false or true => \"r\"");
        let Some(Item::Rule(rule)) = file.items.first() else {
            panic!("no rule")
        };
        let Some(cond) = &rule.condition else {
            panic!("no condition")
        };
        let ExprKind::Binary { lhs, .. } = &cond.kind else {
            panic!("not binary")
        };
        assert!(matches!(lhs.kind, ExprKind::Binary { .. }));
    }

    fn condition(
        text: &str,
    ) -> (
        Option<crate::ast::Expr>,
        Vec<crate::diagnostics::Diagnostic>,
    ) {
        let (file, diagnostics) = parse_file("f", &format!("gate g on x when {text} => \"r\""));
        let condition = file.items.into_iter().find_map(|item| match item {
            Item::Rule(rule) => rule.condition,
            _ => None,
        });
        (condition, diagnostics)
    }

    #[test]
    fn not_binds_looser_than_comparisons_and_tighter_than_and() {
        let (Some(cond), _) = condition("not args.a == 1 and true") else {
            panic!("no condition")
        };
        let ExprKind::Binary {
            op: BinOp::And,
            lhs,
            ..
        } = &cond.kind
        else {
            panic!("not an `and`: {cond:?}")
        };
        let ExprKind::Not(operand) = &lhs.kind else {
            panic!("not a `not`: {lhs:?}")
        };
        assert!(matches!(
            operand.kind,
            ExprKind::Binary { op: BinOp::Eq, .. }
        ));
    }

    #[test]
    fn plus_binds_tighter_than_coalesce_and_comparisons() {
        let (Some(cond), _) = condition("args.a + 1 ?? 2 == 3") else {
            panic!("no condition")
        };
        let ExprKind::Binary {
            op: BinOp::Eq, lhs, ..
        } = &cond.kind
        else {
            panic!("not `==`: {cond:?}")
        };
        let ExprKind::Binary {
            op: BinOp::Coalesce,
            lhs,
            ..
        } = &lhs.kind
        else {
            panic!("not `??`: {lhs:?}")
        };
        assert!(matches!(lhs.kind, ExprKind::Binary { op: BinOp::Add, .. }));
    }

    #[test]
    fn comparisons_and_not_need_parentheses_as_operands() {
        for (text, message) in [
            (
                "args.a == 1 == true",
                "a comparison cannot be an operand of `==`",
            ),
            (
                "args.a == not true",
                "a `not` expression cannot be an operand of `==`",
            ),
            (
                "1 + not true",
                "a `not` expression cannot be an operand of `+`",
            ),
            (
                "args.a in [1] ~ [\"x\"]",
                "a comparison cannot be an operand of `~`",
            ),
            (
                "args.a not in [1] != false",
                "a comparison cannot be an operand of `!=`",
            ),
        ] {
            let (_, diagnostics) = condition(text);
            let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
            assert_eq!(messages, [message], "{text}");
        }
        for text in [
            "(args.a == 1) == true",
            "args.a == (not true)",
            "not not true",
        ] {
            let (cond, diagnostics) = condition(text);
            assert!(
                cond.is_some() && diagnostics.is_empty(),
                "{text}: {diagnostics:#?}"
            );
        }
    }

    #[test]
    fn an_operator_spans_its_operands_parentheses() {
        let text = "(args.a ?? 0) > 1";
        let (Some(cond), _) = condition(text) else {
            panic!("no condition")
        };
        let start = "gate g on x when ".len();
        assert_eq!(
            (cond.span.start as usize, cond.span.end as usize),
            (start, start + text.len())
        );
    }
}
