//! The nesting pre-scan: refuses text that nests deeper than [`MAX_NESTING`] before pest, whose
//! recursive descent would otherwise exhaust the stack on it (and so would every later stage).

use super::err::MAX_NESTING;
use crate::ast::Span;
use crate::diagnostics::{Code, Diagnostic};

/// What is open at a point of the text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Paren,
    Bracket,
    Brace,
    /// `list<` in a type.
    Angle,
    /// A `"…"` string: its text is not code, but `{` in it opens an interpolation.
    Str,
    /// `{…}` inside a string: code again until its `}`.
    Interp,
}

/// Refuses text whose brackets (`(`, `[`, `{`, `list<`, an interpolation's `{`) nest deeper than
/// [`MAX_NESTING`], outside strings and comments. `offset` is where `text` starts in its file.
///
/// On text the grammar accepts (up to where it stops accepting) the scan's depth is the depth of
/// the grammar's recursion; on other text it may count more, never less, so that no text, broken
/// or not, recurses deeper than the limit. A closer with nothing to close is ignored, and one that
/// closes across unclosed `list<`s closes them too.
pub(crate) fn nesting_limit(path: &str, text: &str, offset: usize) -> Option<Diagnostic> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    // Brackets on the stack (strings are not brackets).
    let mut depth = 0usize;
    // The last byte of code that was not blank, for telling `list<` in a type (after `:` or
    // `list<`) from a name `list` compared with `<`.
    let mut last = 0u8;
    let mut at = 0usize;
    while let Some(&c) = bytes.get(at) {
        let start = at;
        at += 1;
        if stack.last() == Some(&Open::Str) {
            match c {
                b'\\' => at += 1,
                b'"' | b'\n' => {
                    stack.pop();
                }
                b'{' => {
                    stack.push(Open::Interp);
                    depth += 1;
                }
                _ => {}
            }
        } else {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => continue,
                b'#' => {
                    at = line_end(bytes, at);
                    continue;
                }
                b'"' => stack.push(Open::Str),
                b'r' if !ident_before(bytes, start) && raw_string_at(bytes, at) => {
                    at = raw_string_end(bytes, at);
                }
                b'l' if (last == b':' || last == b'<') && !ident_before(bytes, start) => {
                    if let Some(after) = list_open(bytes, start) {
                        stack.push(Open::Angle);
                        depth += 1;
                        at = after;
                        last = b'<';
                        if depth > MAX_NESTING {
                            return Some(too_deep(path, offset + after - 1));
                        }
                        continue;
                    }
                }
                b'(' | b'[' | b'{' => {
                    stack.push(match c {
                        b'(' => Open::Paren,
                        b'[' => Open::Bracket,
                        _ => Open::Brace,
                    });
                    depth += 1;
                }
                b'>' if stack.last() == Some(&Open::Angle) => {
                    stack.pop();
                    depth -= 1;
                }
                b')' | b']' | b'}' => {
                    let opener = match c {
                        b')' => Open::Paren,
                        b']' => Open::Bracket,
                        _ => Open::Brace,
                    };
                    depth -= close(&mut stack, opener);
                }
                _ => {}
            }
            last = c;
        }
        if depth > MAX_NESTING {
            return Some(too_deep(path, offset + start));
        }
    }
    None
}

/// Closes `opener` (or, for `}`, an interpolation) if it is open above any unclosed `list<`s,
/// which it then closes too. Returns how many brackets closed.
fn close(stack: &mut Vec<Open>, opener: Open) -> usize {
    let angles = stack
        .iter()
        .rev()
        .take_while(|o| **o == Open::Angle)
        .count();
    let below = stack.len() - angles;
    let Some(top) = below.checked_sub(1).and_then(|i| stack.get(i)).copied() else {
        return 0;
    };
    if top == opener || (opener == Open::Brace && top == Open::Interp) {
        stack.truncate(below - 1);
        angles + 1
    } else {
        0
    }
}

fn too_deep(path: &str, at: usize) -> Diagnostic {
    Diagnostic::new(
        Code::ParserLimit,
        path,
        Span::new(at, at + 1),
        format!("brackets nest deeper than {MAX_NESTING} levels"),
    )
    .label("too deep")
    .help("flatten the expression, for example with `any(...)` over a list or with several rules")
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn ident_before(bytes: &[u8], at: usize) -> bool {
    at.checked_sub(1)
        .and_then(|i| bytes.get(i))
        .is_some_and(|&c| is_ident(c))
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
        .map_or(bytes.len(), |i| from + i)
}

/// Whether `r` (just before `at`) begins a raw string: `#`s, then `"`.
fn raw_string_at(bytes: &[u8], at: usize) -> bool {
    let hashes = hashes_at(bytes, at);
    bytes.get(at + hashes) == Some(&b'"')
}

fn hashes_at(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..)
        .map_or(0, |rest| rest.iter().take_while(|&&c| c == b'#').count())
}

/// Just past the raw string whose `#`s start at `at` (its text may span lines), or the end.
fn raw_string_end(bytes: &[u8], at: usize) -> usize {
    let hashes = hashes_at(bytes, at);
    let mut i = at + hashes + 1;
    while let Some(&c) = bytes.get(i) {
        i += 1;
        if c == b'"' && hashes_at(bytes, i) >= hashes {
            return i + hashes;
        }
    }
    bytes.len()
}

/// Just past the `<` of `list <` at `at`, if it is there and not part of a longer name.
fn list_open(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at..at + 4) != Some(b"list") || bytes.get(at + 4).is_some_and(|&c| is_ident(c)) {
        return None;
    }
    let mut i = at + 4;
    while bytes
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    (bytes.get(i) == Some(&b'<')).then_some(i + 1)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::{MAX_NESTING, nesting_limit};

    fn deep(text: &str) -> bool {
        nesting_limit("f", text, 0).is_some()
    }

    fn lists(n: usize) -> String {
        format!(
            "tool t {{ s: {}string{} }}",
            "list<".repeat(n),
            ">".repeat(n)
        )
    }

    #[test]
    fn counts_list_types_as_nesting() {
        // The record's `{` is one level.
        assert!(!deep(&lists(MAX_NESTING - 1)));
        assert!(deep(&lists(MAX_NESTING)));
        assert!(deep(&"tool t { s: list< ".repeat(100_000)));
    }

    #[test]
    fn closed_list_types_do_not_add_up() {
        let fields = vec!["a: list<list<string>>"; 1_000].join(", ");
        assert!(!deep(&format!("tool t {{ {fields} }}")));
    }

    #[test]
    fn a_name_compared_with_less_than_is_not_a_list_type() {
        let cond = vec!["list < 3"; 200].join(" and ");
        assert!(!deep(&format!("gate g on x when {cond} => \"r\"")));
    }

    #[test]
    fn brackets_hidden_behind_a_raw_string_still_count() {
        let hidden = format!(
            "gate g on x when r#\"\"\"# == {}1 => \"r\"",
            "(".repeat(100)
        );
        assert!(deep(&hidden));
        assert!(!deep("gate g on x when r#\"((((\"# == \"x\" => \"r\""));
    }

    #[test]
    fn an_unterminated_string_ends_at_its_line() {
        let text = format!(
            "tool a {{ x: \"\n}}\ngate g on a when {}1 => \"r\"",
            "(".repeat(100)
        );
        assert!(deep(&text));
    }

    #[test]
    fn interpolations_nest() {
        let n = MAX_NESTING + 1;
        let text = format!("{}x{}", "\"{".repeat(n), "}\"".repeat(n));
        assert!(deep(&text));
        assert!(!deep(&format!("{}x{}", "\"{".repeat(8), "}\"".repeat(8))));
    }

    #[test]
    fn mismatched_closers_never_lower_the_count() {
        let text = "(]".repeat(MAX_NESTING + 1);
        assert!(deep(&text));
    }

    #[test]
    fn the_span_is_in_file_coordinates() {
        let text = "(".repeat(MAX_NESTING + 1);
        let d = nesting_limit("f", &text, 1_000).expect("too deep");
        assert_eq!(d.primary.span.start as usize, 1_000 + MAX_NESTING);
    }

    #[test]
    fn the_builder_refuses_what_gets_past_the_scan() {
        // Straight to pest and the builder, as if the scan had missed it.
        let text = lists(200);
        let pairs = crate::parser::cst::parse(&text).expect("parses");
        let (file, diagnostics) = crate::parser::build::build_file("f", pairs, 0);
        assert!(file.items.is_empty());
        assert_eq!(
            diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(),
            [crate::diagnostics::Code::ParserLimit]
        );
    }
}
