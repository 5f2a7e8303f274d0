//! Formatting (AST → text): canonical layout that keeps comments.
//!
//! Items are separated by one blank line (consecutive tool declarations stay together); a rule
//! puts `when`, `=>` and `examples` on lines of their own; expressions get the fewest parentheses
//! that keep their meaning. Comments on lines of their own stay before the item or clause they
//! preceded; trailing comments stay at the end of their clause's line.

mod comments;
mod printer;

pub use printer::expiry_text;

use crate::ast::{Item, PolicyFile, Span};
use crate::diagnostics::Diagnostic;

use comments::{Comment, extract_comments};
use printer::Printer;

/// The canonical text of a policy file, or the parse errors that prevent formatting it.
pub fn format_source(path: &str, text: &str) -> Result<String, Vec<Diagnostic>> {
    let (file, diagnostics) = crate::parser::parse_file(path, text);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(diagnostics);
    }
    Ok(format_file(&file, text))
}

/// Formats a parsed file; `text` is its source, for the comments.
pub fn format_file(file: &PolicyFile, text: &str) -> String {
    let comments = extract_comments(text);
    let mut layout = Layout {
        comments: &comments,
        next: 0,
        out: String::new(),
    };
    if let Some(header) = &file.header {
        let mut line = format!("policy {}", header.name.name);
        if let Some(description) = &header.description {
            line.push(' ');
            line.push_str(&printer::string_literal(description));
        }
        layout.clause(&line, header.span);
    }
    let mut previous: Option<&Item> = None;
    for item in &file.items {
        layout.trailing_before(item.span().start);
        let grouped = matches!(
            (previous, item),
            (Some(Item::Tool(_)), Item::Tool(_)) | (Some(Item::Label(_)), Item::Label(_))
        );
        // One blank line between items, whether or not a comment before this one already
        // left it: a comment followed by a blank line would otherwise gain one on every run.
        if !layout.out.is_empty() && !grouped && !layout.out.ends_with("\n\n") {
            layout.out.push('\n');
        }
        for (text, span) in Printer::item(item) {
            layout.clause(&text, span);
        }
        previous = Some(item);
    }
    layout.trailing_before(u32::MAX);
    layout.clause("", Span::new(usize::MAX, usize::MAX));
    layout.out.truncate(layout.out.trim_end().len());
    layout.out.push('\n');
    layout.out
}

/// Places clause lines and the comments around them.
struct Layout<'c> {
    comments: &'c [Comment],
    next: usize,
    out: String,
}

impl Layout<'_> {
    /// Prints a clause: first the comments written before it, then its text, then the comments
    /// written inside it. Own-line comments keep their own lines (at the clause's indentation);
    /// trailing comments stay at the end of the line they followed.
    fn clause(&mut self, text: &str, span: Span) {
        let indent: String = text.chars().take_while(|c| *c == ' ').collect();
        while let Some(comment) = self
            .comments
            .get(self.next)
            .filter(|c| c.start < span.start as usize)
        {
            self.place(comment, &indent);
        }
        if !text.is_empty() {
            self.out.push_str(text);
            self.out.push('\n');
        }
        // A clause's span can run on over the comments after it (the parser's, when an optional
        // part at its end is absent); one in the first column is about the clause after it.
        let inner = format!("{indent}  ");
        while let Some(comment) = self
            .comments
            .get(self.next)
            .filter(|c| c.start < span.end as usize && (c.trailing || !c.first_column))
        {
            self.place(comment, &inner);
        }
    }

    /// Attaches the trailing comments before `offset` to the last line printed.
    fn trailing_before(&mut self, offset: u32) {
        while let Some(comment) = self
            .comments
            .get(self.next)
            .filter(|c| c.trailing && c.start < offset as usize)
        {
            self.place(comment, "");
        }
    }

    fn place(&mut self, comment: &Comment, indent: &str) {
        self.next += 1;
        let last_line_blank = self.out.is_empty() || self.out.ends_with("\n\n");
        if comment.trailing && !last_line_blank {
            self.out.pop();
            self.out.push_str("  ");
        } else {
            self.out.push_str(indent);
        }
        self.out.push_str(&comment.text);
        self.out.push('\n');
        if comment.blank_after && !comment.trailing {
            self.out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests;
