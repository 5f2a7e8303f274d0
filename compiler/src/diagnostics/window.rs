//! The part of a file a rendered diagnostic shows: from one line before its first label to one
//! after its last (the caller keeps labels near each other), each long line cut around its label. Rendering then costs what is shown, not the file's size:
//! ten thousand diagnostics on one 80 KB line once copied and rendered the whole line each time.

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// A line longer than this many bytes is shown as this many bytes around its label.
pub const LINE_LIMIT: usize = 160;
/// How much of a cut line is shown before its label.
const BEFORE_LABEL: usize = 48;
const ELLIPSIS: &str = "…";

/// One shown line.
struct Shown {
    /// Where the line starts in the window.
    window_start: usize,
    /// The shown part of the line, in file offsets.
    keep: std::ops::Range<usize>,
    /// Where the line starts and ends (before its newline) in the file.
    line: std::ops::Range<usize>,
    /// The line's number, 0-based.
    number: usize,
    /// Characters cut from the line's start (an ellipsis stands for them).
    cut_chars: usize,
}

pub(crate) struct Window {
    name: String,
    text: String,
    /// The file's line number of the window's first line, 0-based.
    first_line: usize,
    shown: Vec<Shown>,
}

impl Window {
    /// The window onto `text` (whose lines start at `line_starts`) for labels at `spans`, the
    /// primary one first.
    pub(crate) fn new(
        name: &str,
        text: &str,
        line_starts: &[usize],
        spans: &[(usize, usize)],
    ) -> Window {
        let line_of = |offset: usize| {
            line_starts
                .partition_point(|&s| s <= offset)
                .saturating_sub(1)
        };
        let last_line = line_starts.len().saturating_sub(1);
        let mut wanted: Vec<(usize, usize)> = spans
            .iter()
            .map(|&(start, len)| {
                let end = start + len.saturating_sub(1);
                (
                    line_of(start).saturating_sub(1),
                    (line_of(end) + 1).min(last_line),
                )
            })
            .collect();
        wanted.sort_unstable();
        let first_line = wanted.first().map_or(0, |w| w.0);
        let last = wanted.iter().map(|w| w.1).max().unwrap_or(0);
        let mut window = Window {
            name: name.to_string(),
            text: String::new(),
            first_line,
            shown: Vec::new(),
        };
        for number in first_line..=last {
            if number > first_line {
                window.text.push('\n');
            }
            let start = line_starts.get(number).copied().unwrap_or(text.len());
            let end = line_starts
                .get(number + 1)
                .map_or(text.len(), |&next| next.saturating_sub(1))
                .max(start);
            let end = if text.as_bytes().get(end.saturating_sub(1)) == Some(&b'\r') && end > start {
                end - 1
            } else {
                end
            };
            let keep = if end - start <= LINE_LIMIT {
                start..end
            } else {
                let anchor = spans
                    .iter()
                    .map(|s| s.0)
                    .find(|&s| start <= s && s <= end)
                    .unwrap_or(start);
                let from = floor(text, anchor.saturating_sub(BEFORE_LABEL).max(start));
                let to = floor(text, (from + LINE_LIMIT).min(end));
                from..to
            };
            let cut_chars = text.get(start..keep.start).map_or(0, |s| s.chars().count());
            let window_start = window.text.len();
            if cut_chars > 0 {
                window.text.push_str(ELLIPSIS);
            }
            window.text.push_str(text.get(keep.clone()).unwrap_or(""));
            if keep.end < end {
                window.text.push_str(ELLIPSIS);
            }
            window.shown.push(Shown {
                window_start,
                keep,
                line: start..end,
                number,
                cut_chars,
            });
        }
        // miette shows a last empty line only when a newline ends the text before it.
        if line_starts.get(last + 1).is_some() {
            window.text.push('\n');
        }
        window
    }

    /// Where a file offset is in the window: the nearest shown character when it was cut.
    pub(crate) fn map(&self, offset: usize) -> usize {
        let i = self.shown.partition_point(|s| s.line.start <= offset);
        let Some(line) = i.checked_sub(1).and_then(|i| self.shown.get(i)) else {
            return 0;
        };
        let prefix = if line.cut_chars > 0 {
            ELLIPSIS.len()
        } else {
            0
        };
        line.window_start + prefix + offset.clamp(line.keep.start, line.keep.end) - line.keep.start
    }

    pub(crate) fn text_len(&self) -> usize {
        self.text.len()
    }
}

fn floor(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.as_str().read_span(span, before, after)?;
        let line = inner.line() + self.first_line;
        // miette counts a column in bytes of its text; the header shows characters of the
        // file's line instead (as `--format json` does), the cut ones included.
        let column = match self.shown.iter().find(|s| s.number == line) {
            Some(shown) if inner.column() > 0 => {
                let before = self
                    .text
                    .get(shown.window_start..span.offset())
                    .map_or(0, |s| s.chars().count());
                let ellipsis = usize::from(shown.cut_chars > 0);
                before.saturating_sub(ellipsis) + shown.cut_chars
            }
            _ => inner.column(),
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            line,
            column,
            // miette counts lines from the text's start, and joins snippets by comparing counts.
            inner.line_count() + self.first_line,
        )))
    }
}
