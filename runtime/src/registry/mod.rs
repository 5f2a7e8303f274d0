//! Stage 1, the registry: a catalogue of tool contracts in scopes (global, preset, agent).
//!
//! An agent's scope chain is agent → the presets it joined → global; a name in an inner scope
//! shadows the outer one for that agent only; a duplicate name in one layer is rejected.
//! Registering returns a [`ReleaseHandle`] that removes exactly that registration. The model view
//! (what prompt assembly reads) and the runtime view (what executes) are two reads of one table.

mod definition;
mod scope;
mod table;

pub use definition::{
    CompensateFn, ExecuteFn, FinalizeFn, InterruptBehavior, OutputContract, ToolContext,
    ToolDefinition, ToolDefinitionBuilder,
};
pub use scope::{Scope, ScopeChain};
pub use table::{
    CODE_MODE_TOOL, Lookup, ModelTool, Registry, RegistryError, ReleaseHandle, Resolved,
};
