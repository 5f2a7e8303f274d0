//! Error recovery: after a parse error, parse item by item so every broken item is reported and
//! the items that parsed still reach the checker.

use super::{build, cst, err, nesting};
use crate::ast::{Item, PolicyFile};
use crate::diagnostics::Diagnostic;

/// The keywords that begin an item.
pub const ITEM_KEYWORDS: &[&str] = &[
    "policy",
    "import",
    "tool",
    "label",
    "context",
    "effects",
    "precheck",
    "gate",
    "postcheck",
    "concurrency",
    "test",
];

/// Splits at lines that start, in the first column, with an item keyword, and parses each piece.
pub(crate) fn parse_items(
    path: &str,
    text: &str,
    whole_file_error: Diagnostic,
) -> (PolicyFile, Vec<Diagnostic>) {
    let starts = item_starts(text);
    let mut file = PolicyFile::default();
    let mut diagnostics = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let Some(piece) = text.get(start..end) else {
            continue;
        };
        // A piece is scanned on its own too: text the whole file's scan read as inside a string
        // (an unterminated raw string, say) is code to the piece's parse.
        if let Some(limit) = nesting::nesting_limit(path, piece, start) {
            diagnostics.push(limit);
            continue;
        }
        match cst::parse(piece) {
            Ok(pairs) => {
                let (part, mut diags) = build::build_file(path, pairs, start);
                if file.header.is_none() {
                    file.header = part.header;
                }
                file.items.extend(part.items);
                diagnostics.append(&mut diags);
            }
            Err(error) => diagnostics.push(err::to_diagnostic(path, piece, start, &error)),
        }
    }
    if !diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.insert(0, whole_file_error);
    }
    file.items.sort_by_key(|item: &Item| item.span().start);
    (file, diagnostics)
}

pub(crate) fn item_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let starts_item = ITEM_KEYWORDS.iter().any(|kw| {
            line.strip_prefix(kw).is_some_and(|rest| {
                rest.chars()
                    .next()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            })
        });
        if starts_item && offset > 0 {
            starts.push(offset);
        }
        offset += line.len();
    }
    starts
}
