//! Where a registration, a gate or a policy lives, and an agent's chain of scopes.

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

/// An agent's scope chain, innermost first: the agent, the presets it joined in join order,
/// global. It borrows the agent's id and shares the registry's list of presets, so asking
/// whether a scope governs a call allocates nothing.
#[derive(Clone, Debug)]
pub struct ScopeChain<'a> {
    agent: &'a str,
    presets: Arc<[Arc<str>]>,
}

impl<'a> ScopeChain<'a> {
    pub fn new(agent: &'a str, presets: Arc<[Arc<str>]>) -> Self {
        ScopeChain { agent, presets }
    }

    /// Whether `scope` is in the chain.
    pub fn contains(&self, scope: &Scope) -> bool {
        match scope {
            Scope::Global => true,
            Scope::Preset(name) => self.presets.iter().any(|p| p == name),
            Scope::Agent(id) => **id == *self.agent,
        }
    }

    /// The presets, in join order.
    pub fn presets(&self) -> &[Arc<str>] {
        &self.presets
    }

    /// Every scope of the chain, innermost first.
    pub fn to_vec(&self) -> Vec<Scope> {
        let mut chain = Vec::with_capacity(self.presets.len() + 2);
        chain.push(Scope::agent(self.agent));
        chain.extend(self.presets.iter().map(|p| Scope::Preset(p.clone())));
        chain.push(Scope::Global);
        chain
    }
}
