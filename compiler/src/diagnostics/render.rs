//! Rendering diagnostics: miette's graphical report for people, JSON for machines.

use std::collections::BTreeMap;
use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode};

use super::{Diagnostic, Severity};

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
}

impl SourceMap {
    pub fn insert(&mut self, path: impl Into<String>, text: impl Into<String>) {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        self.files
            .insert(path.into(), SourceText { text, line_starts });
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
        let column = text
            .get(line_start..offset)
            .map_or(0, |s| s.chars().count())
            + 1;
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
    source: NamedSource<String>,
}

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
        let text_len = self.source.inner().len();
        let clamp = |span: crate::ast::Span| {
            let start = (span.start as usize).min(text_len);
            (start, span.len().min(text_len - start))
        };
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            primary.text.clone(),
            clamp(primary.span),
        )];
        labels.extend(
            self.diagnostic
                .secondary
                .iter()
                .filter(|label| label.file == primary.file)
                .map(|label| LabeledSpan::new_with_span(label.text.clone(), clamp(label.span))),
        );
        Some(Box::new(labels.into_iter()))
    }
}

/// The graphical report, without colour, at a fixed width, so output is stable for snapshots.
pub fn render_human(diagnostic: &Diagnostic, sources: &SourceMap, width: usize) -> String {
    let file = &diagnostic.primary.file;
    let text = sources.get(file).unwrap_or("").to_string();
    let report = Report {
        diagnostic,
        source: NamedSource::new(file, text),
    };
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .with_width(width)
        .with_links(false);
    let mut out = String::new();
    if handler.render_report(&mut out, &report).is_err() {
        out = format!("{}: {}\n", diagnostic.code.id(), diagnostic.message);
    }
    for label in diagnostic.secondary.iter().filter(|l| &l.file != file) {
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
