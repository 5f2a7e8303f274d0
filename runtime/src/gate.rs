//! Stage 4, gates: non-negotiable. Asked only when the decision is allow (after approval where
//! there was an ask). A gate returns a reason (a veto) or nothing; there is no allow, so no order
//! of gates can turn a veto into permission.

use futures::future::BoxFuture;
use serde::Serialize;
use sluice_compiler::ir::RuleMeta;

use crate::precheck::Invocation;

/// A gate's refusal.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Veto {
    pub gate: String,
    pub reason: String,
    pub rule: Option<RuleMeta>,
}

pub trait Gate: Send + Sync {
    fn name(&self) -> &str;
    /// Every veto this gate raises (a compiled policy set may raise several).
    fn check<'a>(&'a self, invocation: &'a Invocation<'a>) -> BoxFuture<'a, Vec<Veto>>;
}
