//! Sluice: a declarative policy engine for the tool calls AI agents make.
//!
//! This facade re-exports the public API of the compiler (with the reference interpreter) and
//! of the runtime; the `sluice` binary is built on it.

pub use sluice_compiler as compiler;
pub use sluice_compiler::call::{Agent, Call, Status, ToolResult};
pub use sluice_compiler::db::Database;
pub use sluice_compiler::decision::{Decision, Outcome};
pub use sluice_compiler::interp::Evaluator;
pub use sluice_compiler::load::{Compiled, SetSource, discover};
pub use sluice_runtime as runtime;

#[doc(hidden)]
pub mod fuzz;
