//! Rendering diagnostics: miette's graphical report for people, JSON for machines.

use std::collections::BTreeMap;
use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};

use super::window::Window;
use super::{Code, Diagnostic, Severity};

/// How many diagnostics of one code, and how many in all, are rendered for one file; the rest
/// are counted in one closing line, so that a file with thousands of errors prints a page.
pub const MAX_PER_CODE: usize = 10;
pub const MAX_PER_FILE: usize = 100;

/// The diagnostics to render, in order, and for each file how many were left out.
pub fn capped(diagnostics: &[Diagnostic]) -> (Vec<&Diagnostic>, Vec<(String, usize)>) {
    let mut per_code: BTreeMap<(&str, Code), usize> = BTreeMap::new();
    let mut per_file: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut kept = Vec::new();
    for diagnostic in diagnostics {
        let file = diagnostic.primary.file.as_str();
        let code = per_code.entry((file, diagnostic.code)).or_default();
        let (shown, left_out) = per_file.entry(file).or_default();
        if *code < MAX_PER_CODE && *shown < MAX_PER_FILE {
            *code += 1;
            *shown += 1;
            kept.push(diagnostic);
        } else {
            *left_out += 1;
        }
    }
    let left_out = per_file
        .into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(file, (_, n))| (file.to_string(), n))
        .collect();
    (kept, left_out)
}

/// The text of every file a diagnostic may point into, by path, with where its lines start.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: BTreeMap<String, SourceText>,
}

#[derive(Clone, Debug)]
struct SourceText {
    text: String,
    /// The byte offset of each line's first character: finding a line is a binary search, so
    /// placing every rule of a large file stays linear.
    line_starts: Vec<usize>,
    /// The characters before every [`CHECKPOINT`]th byte (rounded down to a character), so that
    /// a column costs at most that many bytes of counting, however long its line.
    checkpoints: Vec<(usize, usize)>,
}

const CHECKPOINT: usize = 1024;

impl SourceText {
    /// Characters in `text[..offset]`, `offset` on a character boundary.
    fn chars_before(&self, offset: usize) -> usize {
        let i = self.checkpoints.partition_point(|&(at, _)| at <= offset);
        let (at, chars) = i
            .checked_sub(1)
            .and_then(|i| self.checkpoints.get(i))
            .copied()
            .unwrap_or((0, 0));
        chars + self.text.get(at..offset).map_or(0, |s| s.chars().count())
    }
}

impl SourceMap {
    pub fn insert(&mut self, path: impl Into<String>, text: impl Into<String>) {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut checkpoints = Vec::new();
        let (mut at, mut chars) = (0, 0);
        while at + CHECKPOINT < text.len() {
            let next = floor_char_boundary(&text, at + CHECKPOINT);
            chars += text.get(at..next).map_or(0, |s| s.chars().count());
            at = next.max(at + 1);
            checkpoints.push((at, chars));
        }
        self.files.insert(
            path.into(),
            SourceText {
                text,
                line_starts,
                checkpoints,
            },
        );
    }

    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(|file| file.text.as_str())
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, path: &str, offset: usize) -> (usize, usize) {
        let Some(file) = self.files.get(path) else {
            return (1, 1);
        };
        let text = &file.text;
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = file.line_starts.partition_point(|&start| start <= offset);
        let line_start = line
            .checked_sub(1)
            .and_then(|i| file.line_starts.get(i))
            .copied()
            .unwrap_or(0);
        let column = file.chars_before(offset) - file.chars_before(line_start) + 1;
        (line.max(1), column)
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The miette view of one diagnostic with its file's text attached.
struct Report<'a> {
    diagnostic: &'a Diagnostic,
    source: Window,
    /// Whether a secondary label is shown in the snippet (else it is a note).
    near: &'a dyn Fn(&&super::Label) -> bool,
}

/// How many lines from the primary label a secondary one may be and still be shown with it.
const NEAR_LINES: usize = 24;

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.diagnostic.code.id()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity() {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let help = &self.diagnostic.help;
        (!help.is_empty()).then(|| Box::new(help.as_str()) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let primary = &self.diagnostic.primary;
        let clamp = |span: crate::ast::Span| {
            let start = self.source.map(span.start as usize);
            let end = self.source.map(span.end as usize).max(start);
            (start, (end - start).min(self.source.text_len() - start))
        };
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            primary.text.clone(),
            clamp(primary.span),
        )];
        labels.extend(
            self.diagnostic
                .secondary
                .iter()
                .filter(|label| (self.near)(label))
                .map(|label| LabeledSpan::new_with_span(label.text.clone(), clamp(label.span))),
        );
        Some(Box::new(labels.into_iter()))
    }
}

/// The graphical report, without colour, at a fixed width, so output is stable for snapshots.
pub fn render_human(diagnostic: &Diagnostic, sources: &SourceMap, width: usize) -> String {
    let file = &diagnostic.primary.file;
    let line = |label: &super::Label| sources.line_col(&label.file, label.span.start as usize).0;
    let primary_line = line(&diagnostic.primary);
    // A label far from the primary one becomes a note, so the snippet stays a few lines long.
    let near = |label: &&super::Label| {
        &label.file == file && line(label).abs_diff(primary_line) <= NEAR_LINES
    };
    let spans: Vec<(usize, usize)> = std::iter::once(&diagnostic.primary)
        .chain(diagnostic.secondary.iter().filter(near))
        .map(|l| (l.span.start as usize, l.span.len()))
        .collect();
    let source = match sources.files.get(file) {
        Some(text) => Window::new(file, &text.text, &text.line_starts, &spans),
        None => Window::new(file, "", &[0], &spans),
    };
    let report = Report {
        diagnostic,
        source,
        near: &near,
    };
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .with_width(width)
        .with_links(false);
    let mut out = String::new();
    if handler.render_report(&mut out, &report).is_err() {
        out = format!("{}: {}\n", diagnostic.code.id(), diagnostic.message);
    }
    for label in diagnostic.secondary.iter().filter(|l| !near(l)) {
        let (line, column) = sources.line_col(&label.file, label.span.start as usize);
        let text = label.text.as_deref().unwrap_or("related");
        out.push_str(&format!(
            "  note: {text} at {}:{line}:{column}\n",
            label.file
        ));
    }
    out
}

/// The machine-readable form of a diagnostic (`--format json`).
#[derive(Debug, serde::Serialize)]
pub struct JsonDiagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub span: [u32; 2],
    pub label: Option<String>,
    pub help: String,
    pub related: Vec<JsonLabel>,
}

#[derive(Debug, serde::Serialize)]
pub struct JsonLabel {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub span: [u32; 2],
    pub label: Option<String>,
}

pub fn to_json(diagnostic: &Diagnostic, sources: &SourceMap) -> JsonDiagnostic {
    let primary = &diagnostic.primary;
    let (line, column) = sources.line_col(&primary.file, primary.span.start as usize);
    JsonDiagnostic {
        code: diagnostic.code.id(),
        severity: diagnostic.severity(),
        message: diagnostic.message.clone(),
        file: primary.file.clone(),
        line,
        column,
        span: [primary.span.start, primary.span.end],
        label: primary.text.clone(),
        help: diagnostic.help.clone(),
        related: diagnostic
            .secondary
            .iter()
            .map(|label| {
                let (line, column) = sources.line_col(&label.file, label.span.start as usize);
                JsonLabel {
                    file: label.file.clone(),
                    line,
                    column,
                    span: [label.span.start, label.span.end],
                    label: label.text.clone(),
                }
            })
            .collect(),
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::{MAX_PER_CODE, MAX_PER_FILE, SourceMap, capped};
    use crate::ast::Span;
    use crate::diagnostics::{Diagnostic, REGISTRY};

    #[test]
    fn caps_each_code_and_each_file() {
        let codes: Vec<_> = REGISTRY.iter().map(|info| info.code).take(20).collect();
        let mut diagnostics = Vec::new();
        for file in ["a", "b"] {
            for &code in &codes {
                for i in 0..50 {
                    diagnostics.push(Diagnostic::new(code, file, Span::new(i, i + 1), "m"));
                }
            }
        }
        let (kept, left_out) = capped(&diagnostics);
        assert_eq!(kept.len(), 2 * MAX_PER_FILE);
        for file in ["a", "b"] {
            let mine: Vec<_> = kept.iter().filter(|d| d.primary.file == file).collect();
            assert_eq!(mine.len(), MAX_PER_FILE);
            for code in &codes {
                assert!(mine.iter().filter(|d| d.code == *code).count() <= MAX_PER_CODE);
            }
        }
        let total = 20 * 50;
        assert_eq!(
            left_out,
            [
                ("a".to_string(), total - MAX_PER_FILE),
                ("b".to_string(), total - MAX_PER_FILE)
            ]
        );
    }

    #[test]
    fn columns_count_characters_on_long_lines() {
        let mut sources = SourceMap::default();
        let text = format!("x\n{}y", "é".repeat(10_000));
        sources.insert("f", text.clone());
        assert_eq!(sources.line_col("f", text.len() - 1), (2, 10_001));
        assert_eq!(sources.line_col("f", 2 + 2 * 4_321), (2, 4_322));
        assert_eq!(sources.line_col("f", 1), (1, 2));
    }
}
