//! Compiled policy sets in the runtime. Loaded at a scope, a set's pre-checks become a link of the
//! chain, its gates gates of that scope, its post-checks a post-check participant. A set can be
//! replaced atomically (hot reload): each call takes a [`Snapshot`] of every set when it starts
//! and finishes under it; a set that fails to compile leaves the old one in force.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use futures::future::BoxFuture;
use sluice_compiler::ast::RuleKind;
use sluice_compiler::call::ToolResult;
use sluice_compiler::db::Database;
use sluice_compiler::decision::{AppliedEffect, Decision};
use sluice_compiler::diagnostics::Diagnostic;
use sluice_compiler::executable::Executable;
use sluice_compiler::interp::{CallRef, Evaluator};
use sluice_compiler::jit::Backend;
use sluice_compiler::load::discover;
use smallvec::SmallVec;

use crate::gate::{Gate, Veto};
use crate::postcheck::{PostAction, PostCheck, PostVerdict};
use crate::precheck::{Invocation, LinkDecision, PrecheckLink};
use crate::registry::Scope;
use crate::result::NormalizedResult;

/// A compiled policy set, with its conditions as native code unless loaded for the interpreter.
#[derive(Debug)]
pub struct LoadedPolicy {
    pub name: String,
    pub executable: Executable,
    /// The tools the set declares: a call to any other is `undeclared` for this set.
    declared: BTreeSet<String>,
}

/// Why a policy set could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{0}")]
    Load(#[from] sluice_compiler::load::LoadError),
    #[error("`{0}` names {1} policy sets; load them one at a time")]
    NotOneSet(String, usize),
    #[error("policy set `{name}` does not compile ({} errors)", errors.len())]
    Compile {
        name: String,
        errors: Vec<Diagnostic>,
    },
}

impl LoadedPolicy {
    /// Compiles a set given as `(path, text)` pairs, for the JIT.
    pub fn compile(name: &str, files: Vec<(String, String)>) -> Result<LoadedPolicy, PolicyError> {
        Self::compile_for(name, files, Backend::Jit)
    }

    pub fn compile_for(
        name: &str,
        files: Vec<(String, String)>,
        backend: Backend,
    ) -> Result<LoadedPolicy, PolicyError> {
        let compiled = Database::default().compile_texts(name, files);
        Self::from_compiled(compiled, backend)
    }

    /// Reads and compiles the one policy set at `paths` (files, or a directory), for the JIT.
    pub fn load(paths: &[PathBuf]) -> Result<LoadedPolicy, PolicyError> {
        Self::load_for(paths, Backend::Jit)
    }

    pub fn load_for(paths: &[PathBuf], backend: Backend) -> Result<LoadedPolicy, PolicyError> {
        let sets = discover(paths)?;
        let [source] = sets.as_slice() else {
            let named = paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(PolicyError::NotOneSet(named, sets.len()));
        };
        Self::from_compiled(Database::default().load(source)?, backend)
    }

    /// A set from its parts: an executable program, and the tools the set declares.
    pub fn from_parts(
        name: String,
        executable: Executable,
        declared: impl IntoIterator<Item = String>,
    ) -> LoadedPolicy {
        LoadedPolicy {
            name,
            executable,
            declared: declared.into_iter().collect(),
        }
    }

    /// Whether the set declares `tool`.
    pub fn declares(&self, tool: &str) -> bool {
        self.declared.contains(tool)
    }

    /// The tools the set declares, in order.
    pub fn declared(&self) -> impl Iterator<Item = &str> {
        self.declared.iter().map(String::as_str)
    }

    /// A compiled set, if it compiled without errors.
    pub fn from_compiled(
        compiled: sluice_compiler::load::Compiled,
        backend: Backend,
    ) -> Result<LoadedPolicy, PolicyError> {
        match compiled.program.clone() {
            Some(program) if !compiled.has_errors() => Ok(LoadedPolicy {
                declared: compiled.checked.decls.tools.keys().cloned().collect(),
                name: compiled.name,
                executable: Executable::new(program, backend),
            }),
            _ => Err(PolicyError::Compile {
                errors: compiled.errors(),
                name: compiled.name,
            }),
        }
    }
}

/// The handle of a loaded set, for hot reload.
#[derive(Clone)]
pub struct PolicyHandle {
    slot: Arc<ArcSwap<LoadedPolicy>>,
}

impl PolicyHandle {
    pub fn current(&self) -> Arc<LoadedPolicy> {
        self.slot.load_full()
    }

    /// Replaces the set atomically. Calls in flight finish under the set they started with.
    pub fn replace(&self, policy: LoadedPolicy) {
        self.slot.store(Arc::new(policy));
    }

    /// Recompiles from texts; on errors the old set stays in force and the errors are returned.
    pub fn reload(&self, name: &str, files: Vec<(String, String)>) -> Result<(), PolicyError> {
        self.replace(LoadedPolicy::compile(name, files)?);
        Ok(())
    }
}

/// Every loaded set as it was when a call started (a host loads a few: they fit inline).
#[derive(Default)]
pub struct Snapshot {
    policies: SmallVec<[Arc<LoadedPolicy>; 2]>,
}

/// Per loaded set, the vetoes its pre-check link found ahead of the gate stage.
pub(crate) type UnaskedGates = SmallVec<[OnceLock<Vec<sluice_compiler::decision::Veto>>; 2]>;

impl Snapshot {
    pub(crate) fn take(slots: &[Arc<ArcSwap<LoadedPolicy>>]) -> Snapshot {
        Snapshot {
            policies: slots.iter().map(|s| s.load_full()).collect(),
        }
    }

    fn get(&self, index: usize) -> Option<&LoadedPolicy> {
        self.policies.get(index).map(|p| &**p)
    }

    /// Per set, a place for the vetoes its pre-check link finds ahead of the gate stage.
    pub(crate) fn unasked_gates(&self) -> UnaskedGates {
        self.policies.iter().map(|_| OnceLock::new()).collect()
    }
}

/// A set's participation in one stage: which set (by index in the runtime) and at which scope.
pub(crate) struct PolicyStage {
    pub index: usize,
    pub scope: Scope,
    pub name: String,
}

impl PolicyStage {
    pub(crate) fn new(index: usize, scope: Scope, policy: &LoadedPolicy) -> Self {
        PolicyStage {
            index,
            scope,
            name: policy.name.clone(),
        }
    }

    /// The evaluator in force for this call, if the set applies to the call's agent.
    fn evaluator<'a>(&self, invocation: &Invocation<'a>) -> Option<Evaluator<'a>> {
        if !invocation.scopes.contains(&self.scope) {
            return None;
        }
        invocation
            .snapshot
            .get(self.index)
            .map(|p| p.executable.evaluator())
    }
}

impl PolicyStage {
    /// Whether this set's `concurrency` rules mark the call safe, for the policy in force now.
    pub(crate) fn concurrent(
        &self,
        slot: &ArcSwap<LoadedPolicy>,
        call: &crate::call::ToolCall,
        scopes: &crate::registry::ScopeChain<'_>,
    ) -> bool {
        if !scopes.contains(&self.scope) {
            return false;
        }
        let policy = slot.load();
        policy
            .executable
            .evaluator()
            .concurrency_safe(call_ref_of(call))
    }
}

fn call_ref<'a>(invocation: &Invocation<'a>) -> CallRef<'a> {
    call_ref_of(invocation.call)
}

fn call_ref_of(call: &crate::call::ToolCall) -> CallRef<'_> {
    CallRef {
        tool: call.tool(),
        args: call.args(),
        agent: call.agent(),
        context: call.context(),
        session: call.session(),
    }
}

impl PrecheckLink for PolicyStage {
    fn name(&self) -> &str {
        &self.name
    }

    fn check<'a>(&'a self, invocation: &'a Invocation<'a>) -> BoxFuture<'a, LinkDecision> {
        let decision = match self.evaluator(invocation) {
            None => LinkDecision::Delegate,
            Some(evaluator) => {
                // The gates are answered on the same reading of the call's facts and kept for
                // the gate stage, which is reached only when the chain allows.
                let (outcome, vetoes) = evaluator.precheck_and_gates(call_ref(invocation));
                if let (Some(vetoes), Some(kept)) = (vetoes, invocation.vetoes.get(self.index)) {
                    let _ = kept.set(vetoes);
                }
                match outcome.decision {
                    Decision::Delegate => LinkDecision::Delegate,
                    Decision::Allow => LinkDecision::Allow {
                        reason: outcome.reason,
                        rule: outcome.rule,
                        parts: outcome.parts,
                    },
                    Decision::Ask => LinkDecision::Ask {
                        reason: outcome.reason.unwrap_or_default(),
                        rule: outcome.rule,
                        parts: outcome.parts,
                    },
                    Decision::Deny => LinkDecision::Deny {
                        reason: outcome.reason.unwrap_or_default(),
                        rule: outcome.rule,
                        parts: outcome.parts,
                    },
                }
            }
        };
        Box::pin(std::future::ready(decision))
    }
}

impl Gate for PolicyStage {
    fn name(&self) -> &str {
        &self.name
    }

    fn check<'a>(&'a self, invocation: &'a Invocation<'a>) -> BoxFuture<'a, Vec<Veto>> {
        let vetoes = match self.evaluator(invocation) {
            None => Vec::new(),
            Some(evaluator) => match invocation.vetoes.get(self.index).and_then(OnceLock::get) {
                Some(kept) => kept.clone(),
                None => evaluator.gates(call_ref(invocation)),
            }
            .into_iter()
            .map(|v| Veto {
                gate: v.rule.name.to_string(),
                reason: v.reason,
                rule: Some(v.rule),
            })
            .collect(),
        };
        Box::pin(std::future::ready(vetoes))
    }
}

impl PostCheck for PolicyStage {
    fn name(&self) -> &str {
        &self.name
    }

    fn check(&self, invocation: &Invocation<'_>, result: &NormalizedResult) -> Vec<PostVerdict> {
        let Some(evaluator) = self.evaluator(invocation) else {
            return Vec::new();
        };
        if !evaluator.has_rules(RuleKind::Postcheck, invocation.call.tool()) {
            return Vec::new();
        }
        let seen = ToolResult {
            status: result.status,
            content: result.content.clone(),
            value: result.value.clone(),
            error: result.error.clone(),
        };
        let outcome = evaluator.postcheck(call_ref(invocation), &seen);
        outcome
            .steps
            .into_iter()
            .map(|step| PostVerdict {
                by: step.rule.name.to_string(),
                actions: step
                    .effects
                    .into_iter()
                    .map(|effect| match effect {
                        AppliedEffect::Accept => PostAction::Accept,
                        AppliedEffect::Content(c) => PostAction::ReplaceContent(c),
                        AppliedEffect::Value(v) => PostAction::ReplaceValue(v),
                        AppliedEffect::Attach(a) => PostAction::AttachContext(a),
                        AppliedEffect::Label(grant) => PostAction::Label(grant),
                        AppliedEffect::Redacted(r) => PostAction::Redact {
                            content: r.content,
                            value: r.value,
                            error: r.error,
                        },
                        AppliedEffect::Fail(f) => PostAction::Fail {
                            message: f.message,
                            context: f.context,
                        },
                    })
                    .collect(),
            })
            .collect()
    }
}

pub(crate) fn slot(policy: LoadedPolicy) -> (Arc<ArcSwap<LoadedPolicy>>, PolicyHandle) {
    let slot = Arc::new(ArcSwap::from_pointee(policy));
    (slot.clone(), PolicyHandle { slot })
}
