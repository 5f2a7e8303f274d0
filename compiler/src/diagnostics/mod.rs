//! Diagnostics: one registry of stable codes, the diagnostic value, and its rendering.

mod diagnostic;
mod registry;
mod render;
mod suggest;

pub use diagnostic::{Diagnostic, Label, Severity};
pub use registry::{Code, CodeInfo, REGISTRY};
pub use render::{JsonDiagnostic, SourceMap, render_human, to_json};
pub use suggest::{did_you_mean, help_with_suggestion};
