//! Diagnostics: one registry of stable codes, the diagnostic value, and its rendering.

mod diagnostic;
mod registry;
mod render;
mod suggest;
mod window;

pub use diagnostic::{Diagnostic, Label, Severity};
pub use registry::{Code, CodeInfo, REGISTRY};
pub use render::{
    JsonDiagnostic, MAX_PER_CODE, MAX_PER_FILE, SourceMap, capped, render_human, to_json,
};
pub use suggest::{did_you_mean, help_with_suggestion};
