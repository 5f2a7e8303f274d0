//! The one table behind both views.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, Weak};

use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::Value;

use super::{Scope, ScopeChain, ToolDefinition};

/// The reserved tool the model sees in code mode.
pub const CODE_MODE_TOOL: &str = "run_code";

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("tool `{0}` has no output contract: give it one with `.output(schema, render)`")]
    NoOutputContract(String),
    #[error("tool `{name}` is already registered in {scope:?}")]
    Duplicate { name: String, scope: Scope },
    #[error("the input schema of tool `{name}` is not valid JSON Schema: {error}")]
    InvalidSchema { name: String, error: String },
    #[error("`{0}` is reserved for code mode")]
    Reserved(String),
}

/// What prompt assembly reads: no execute function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// What the runtime executes: the definition found through the agent's scope chain.
#[derive(Clone)]
pub struct Resolved {
    pub definition: Arc<ToolDefinition>,
    pub scope: Scope,
    pub(crate) validator: Arc<jsonschema::Validator>,
}

impl Resolved {
    /// The input-schema violations of `args`, if any.
    pub fn violations(&self, args: &Value) -> Vec<String> {
        if self.validator.is_valid(args) {
            return Vec::new();
        }
        self.validator
            .iter_errors(args)
            .map(|e| e.to_string())
            .collect()
    }
}

struct Registration {
    id: u64,
    resolved: Resolved,
}

/// One scope's registrations, by name.
type Layer = BTreeMap<String, Registration>;

#[derive(Default)]
struct Tables {
    global: Layer,
    presets: FxHashMap<Arc<str>, Layer>,
    agents: FxHashMap<Arc<str>, Layer>,
    /// Each agent's presets, in join order.
    memberships: FxHashMap<Arc<str>, Arc<[Arc<str>]>>,
    /// What an agent that joined no preset shares, so a lookup allocates nothing.
    no_presets: Arc<[Arc<str>]>,
    next_id: u64,
}

impl Tables {
    fn layer_mut(&mut self, scope: &Scope) -> &mut Layer {
        match scope {
            Scope::Global => &mut self.global,
            Scope::Preset(name) => self.presets.entry(name.clone()).or_default(),
            Scope::Agent(id) => self.agents.entry(id.clone()).or_default(),
        }
    }

    fn presets_of(&self, agent: &str) -> Arc<[Arc<str>]> {
        self.memberships
            .get(agent)
            .unwrap_or(&self.no_presets)
            .clone()
    }

    /// The layers of an agent's scope chain that hold registrations, innermost first.
    fn chain_layers<'t>(&'t self, agent: &str) -> impl Iterator<Item = &'t Layer> {
        let presets = self.memberships.get(agent).map_or(&[][..], |p| &p[..]);
        self.agents
            .get(agent)
            .into_iter()
            .chain(presets.iter().filter_map(|p| self.presets.get(p)))
            .chain(std::iter::once(&self.global))
    }
}

/// The tool catalogue.
#[derive(Default)]
pub struct Registry {
    tables: Arc<RwLock<Tables>>,
}

/// One call's view of the catalogue.
pub struct Lookup {
    /// The presets the agent joined, in join order: with the agent, its [`ScopeChain`].
    pub presets: Arc<[Arc<str>]>,
    pub resolved: Option<Resolved>,
}

/// Removes exactly one registration when released (un-shadowing whatever it shadowed).
#[must_use = "dropping the handle keeps the tool registered; call `release` to remove it"]
pub struct ReleaseHandle {
    tables: Weak<RwLock<Tables>>,
    scope: Scope,
    name: String,
    id: u64,
}

impl ReleaseHandle {
    /// Removes the registration; returns whether it was still there.
    pub fn release(self) -> bool {
        let Some(tables) = self.tables.upgrade() else {
            return false;
        };
        let Ok(mut tables) = tables.write() else {
            return false;
        };
        let layer = tables.layer_mut(&self.scope);
        if layer.get(&self.name).is_some_and(|r| r.id == self.id) {
            layer.remove(&self.name);
            true
        } else {
            false
        }
    }
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }

    pub fn register(
        &self,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<ReleaseHandle, RegistryError> {
        let name = definition.name.to_string();
        if name == CODE_MODE_TOOL {
            return Err(RegistryError::Reserved(name));
        }
        if definition.output.is_none() {
            return Err(RegistryError::NoOutputContract(name));
        }
        let validator = jsonschema::validator_for(&definition.input_schema).map_err(|e| {
            RegistryError::InvalidSchema {
                name: name.clone(),
                error: e.to_string(),
            }
        })?;
        let mut tables = self
            .tables
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let id = tables.next_id;
        tables.next_id += 1;
        let layer = tables.layer_mut(&scope);
        if layer.contains_key(&name) {
            return Err(RegistryError::Duplicate { name, scope });
        }
        let resolved = Resolved {
            definition: Arc::new(definition),
            scope: scope.clone(),
            validator: Arc::new(validator),
        };
        layer.insert(name.clone(), Registration { id, resolved });
        Ok(ReleaseHandle {
            tables: Arc::downgrade(&self.tables),
            scope,
            name,
            id,
        })
    }

    /// The agent joins a preset: the preset's layer sits between the agent's and the global one.
    pub fn join(&self, agent: &str, preset: &str) {
        let mut tables = self
            .tables
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let joined = tables.presets_of(agent);
        if !joined.iter().any(|p| &**p == preset) {
            let presets: Arc<[Arc<str>]> = joined.iter().cloned().chain([preset.into()]).collect();
            tables.memberships.insert(agent.into(), presets);
        }
    }

    /// The presets an agent joined, in join order.
    pub fn presets_of(&self, agent: &str) -> Vec<String> {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tables
            .presets_of(agent)
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// The agent's scope chain, innermost first.
    pub fn scope_chain(&self, agent: &str) -> Vec<Scope> {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ScopeChain::new(agent, tables.presets_of(agent)).to_vec()
    }

    /// The runtime view of one tool for an agent.
    pub fn resolve(&self, agent: &str, tool: &str) -> Option<Resolved> {
        self.lookup(agent, tool).resolved
    }

    /// Everything the pipeline needs from the catalogue for one call, read at one instant.
    pub fn lookup(&self, agent: &str, tool: &str) -> Lookup {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let resolved = tables
            .chain_layers(agent)
            .find_map(|layer| layer.get(tool))
            .map(|r| r.resolved.clone());
        Lookup {
            presets: tables.presets_of(agent),
            resolved,
        }
    }

    /// The runtime view: every tool an agent can run, with the scope it resolves to.
    pub fn runtime_view(&self, agent: &str) -> BTreeMap<String, Scope> {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut view = BTreeMap::new();
        for layer in tables.chain_layers(agent) {
            for (name, registration) in layer {
                view.entry(name.clone())
                    .or_insert_with(|| registration.resolved.scope.clone());
            }
        }
        view
    }

    /// The model view: name, description and parameters of every tool the agent sees.
    pub fn model_view(&self, agent: &str) -> Vec<ModelTool> {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut seen: BTreeMap<&str, ModelTool> = BTreeMap::new();
        for layer in tables.chain_layers(agent) {
            for (name, registration) in layer {
                seen.entry(name.as_str()).or_insert_with(|| {
                    let definition = &registration.resolved.definition;
                    ModelTool {
                        name: name.clone(),
                        description: definition.description.clone(),
                        parameters: definition.input_schema.clone(),
                    }
                });
            }
        }
        seen.into_values().collect()
    }

    /// Code mode: the model sees one reserved tool; the catalogue is named in its description.
    /// Calls the generated code makes still resolve through [`Registry::resolve`], so a name the
    /// catalogue does not hold is an unknown tool before any stage sees it.
    pub fn code_mode_view(&self, agent: &str) -> Vec<ModelTool> {
        let names: Vec<String> = self.model_view(agent).into_iter().map(|t| t.name).collect();
        vec![ModelTool {
            name: CODE_MODE_TOOL.to_string(),
            description: format!("Run code that calls these tools: {}", names.join(", ")),
            parameters: serde_json::json!({ "type": "object", "properties": { "code": { "type": "string" } }, "required": ["code"] }),
        }]
    }
}
