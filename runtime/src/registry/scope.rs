//! Where a registration, a gate or a policy lives.

use std::sync::Arc;

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "scope", content = "name", rename_all = "lowercase")]
pub enum Scope {
    /// Everywhere (plugins).
    Global,
    /// A shared parent layer that agents join.
    Preset(Arc<str>),
    /// One agent.
    Agent(Arc<str>),
}

impl Scope {
    pub fn preset(name: &str) -> Scope {
        Scope::Preset(name.into())
    }

    pub fn agent(id: &str) -> Scope {
        Scope::Agent(id.into())
    }
}
