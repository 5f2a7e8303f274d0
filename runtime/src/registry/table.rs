//! The one table behind both views.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock, Weak};

use serde::Serialize;
use serde_json::Value;

use super::{Scope, ToolDefinition};

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

#[derive(Default)]
struct Tables {
    layers: HashMap<Scope, BTreeMap<String, Registration>>,
    /// Each agent's presets, in join order.
    memberships: HashMap<Arc<str>, Vec<Arc<str>>>,
    next_id: u64,
}

/// The tool catalogue.
#[derive(Default)]
pub struct Registry {
    tables: Arc<RwLock<Tables>>,
}

/// One call's view of the catalogue.
pub struct Lookup {
    /// The presets the agent joined, in join order.
    pub presets: Vec<String>,
    /// The agent's scope chain, innermost first.
    pub chain: Vec<Scope>,
    pub resolved: Option<Resolved>,
}

fn chain_of(tables: &Tables, agent: &str) -> Vec<Scope> {
    let presets = tables.memberships.get(agent).map_or(&[][..], Vec::as_slice);
    let mut chain = Vec::with_capacity(presets.len() + 2);
    chain.push(Scope::Agent(agent.into()));
    chain.extend(presets.iter().map(|p| Scope::Preset(p.clone())));
    chain.push(Scope::Global);
    chain
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
        let Some(layer) = tables.layers.get_mut(&self.scope) else {
            return false;
        };
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
        let layer = tables.layers.entry(scope.clone()).or_default();
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
        let presets = tables.memberships.entry(agent.into()).or_default();
        if !presets.iter().any(|p| &**p == preset) {
            presets.push(preset.into());
        }
    }

    /// The presets an agent joined, in join order.
    pub fn presets_of(&self, agent: &str) -> Vec<String> {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tables
            .memberships
            .get(agent)
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    }

    /// The agent's scope chain, innermost first.
    pub fn scope_chain(&self, agent: &str) -> Vec<Scope> {
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        chain_of(&tables, agent)
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
        let chain = chain_of(&tables, agent);
        let resolved = chain
            .iter()
            .find_map(|scope| tables.layers.get(scope)?.get(tool))
            .map(|r| r.resolved.clone());
        let presets = tables
            .memberships
            .get(agent)
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        Lookup {
            presets,
            chain,
            resolved,
        }
    }

    /// The runtime view: every tool an agent can run, with the scope it resolves to.
    pub fn runtime_view(&self, agent: &str) -> BTreeMap<String, Scope> {
        let chain = self.scope_chain(agent);
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut view = BTreeMap::new();
        for scope in chain.iter().rev() {
            for (name, registration) in tables.layers.get(scope).into_iter().flatten() {
                view.insert(name.clone(), registration.resolved.scope.clone());
            }
        }
        view
    }

    /// The model view: name, description and parameters of every tool the agent sees.
    pub fn model_view(&self, agent: &str) -> Vec<ModelTool> {
        let chain = self.scope_chain(agent);
        let tables = self
            .tables
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut seen: BTreeMap<&str, ModelTool> = BTreeMap::new();
        for scope in &chain {
            for (name, registration) in tables.layers.get(scope).into_iter().flatten() {
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
