//! The diagnostic value every compiler stage produces.

use super::Code;
use crate::ast::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A labelled place in a source file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub file: String,
    pub span: Span,
    pub text: Option<String>,
}

/// One finding: a stable code, a primary span, a message saying what is wrong, and help saying
/// what to do. Messages are lowercase without a final period; user text goes in backticks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    pub help: String,
}

impl Diagnostic {
    pub fn new(code: Code, file: &str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            primary: Label {
                file: file.to_string(),
                span,
                text: None,
            },
            secondary: Vec::new(),
            help: String::new(),
        }
    }

    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.primary.text = Some(text.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    pub fn secondary(mut self, file: &str, span: Span, text: impl Into<String>) -> Self {
        self.secondary.push(Label {
            file: file.to_string(),
            span,
            text: Some(text.into()),
        });
        self
    }

    /// A copy with the labels in `file` moved from positions relative to `offset` to positions in
    /// the file (see [`Relocate`](crate::ast::Relocate)).
    pub fn placed(&self, file: &str, offset: u32) -> Diagnostic {
        use crate::ast::Relocate;
        let mut placed = self.clone();
        for label in std::iter::once(&mut placed.primary).chain(&mut placed.secondary) {
            if label.file == file {
                label.span.relocate(0, offset);
            }
        }
        placed
    }

    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }

    /// Spans compare equal always; this key orders diagnostics by place for stable output.
    pub fn sort_key(&self) -> (String, u32, Code) {
        (
            self.primary.file.clone(),
            self.primary.span.start,
            self.code,
        )
    }
}
