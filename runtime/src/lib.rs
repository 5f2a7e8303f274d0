//! The Sluice runtime: one tool pipeline for every call an agent makes.
//!
//! registry → pre-check chain → approval → gates → execute (around-middleware) → post-check →
//! finalize → observe, with durable events around it. One module per stage, named after it.

pub mod approval;
pub mod batch;
pub mod call;
pub mod chain;
pub mod config;
pub mod events;
pub mod execute;
pub mod gate;
pub mod hooks;
pub mod journal;
pub mod observe;
pub mod pipeline;
pub mod policy;
pub mod postcheck;
pub mod precheck;
pub mod registry;
pub mod render;
pub mod result;
pub mod session;

pub use call::{CallId, ToolCall};
pub use pipeline::{Runtime, RuntimeBuilder};
pub use result::{FinalResult, ResultKind, ToolError, ToolReply};
