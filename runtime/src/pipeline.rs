//! The one entry point: every call runs through registry → pre-check → approval → gates →
//! execute → post-check → finalize → observe, and always comes back with exactly one result.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use serde::Serialize;
use sluice_compiler::call::Status;
use sluice_compiler::ir::RuleMeta;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::approval::{ApprovalRecord, ApprovalService, denial_reason};
use crate::call::ToolCall;
use crate::events::{Event, EventSink};
use crate::execute::{ExecContext, Execution, Middleware, Next, run_tool};
use crate::gate::{Gate, Veto};
use crate::journal::{Entry, Journal};
use crate::observe::Observer;
use crate::policy::{LoadedPolicy, PolicyHandle, PolicyStage, Snapshot, slot};
use crate::postcheck::{PostCheck, apply};
use crate::precheck::{ChainVerdict, Invocation, LinkDecision, PrecheckLink, run_chain};
use crate::registry::{Registry, Resolved, Scope, ScopeChain};
use crate::render::{render_call, render_result};
use crate::result::{DenyingStage, FinalResult, NormalizedResult, ResultKind};
use crate::session::{SessionEvent, SessionStore};

/// How a call was decided: the provenance every result carries into the audit log.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// Whether the tool was allowed to run.
    pub allowed: bool,
    /// The pre-check chain's verdict (absent for unknown tools and invalid arguments).
    pub precheck: Option<ChainVerdict>,
    pub approval: Option<ApprovalRecord>,
    pub vetoes: Vec<Veto>,
    /// Why the call was refused, when it was.
    pub reason: Option<String>,
    /// The rule that decided (file and line included), when a policy decided.
    pub rule: Option<RuleMeta>,
}

/// Where the time went, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Timings {
    pub precheck_us: u64,
    pub approval_us: u64,
    pub gates_us: u64,
    pub execute_us: u64,
    pub postcheck_us: u64,
    pub total_us: u64,
}

fn micros(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX)
}

/// A call's timings with one clock read per stage boundary: each lap is the time since the
/// last, and the total is the time from the start to the last lap. The clock is the CPU's
/// time-stamp counter where it is reliable (quanta), a few nanoseconds a read against tens for
/// the system clock.
struct Stopwatch {
    started: quanta::Instant,
    last: quanta::Instant,
}

impl Stopwatch {
    fn start() -> Self {
        let now = quanta::Instant::now();
        Stopwatch {
            started: now,
            last: now,
        }
    }

    fn lap(&mut self) -> u64 {
        let now = quanta::Instant::now();
        let elapsed = now.duration_since(self.last);
        self.last = now;
        micros(elapsed)
    }

    fn total(&self) -> u64 {
        micros(self.last.duration_since(self.started))
    }
}

pub struct Runtime {
    registry: Arc<Registry>,
    links: Vec<Arc<dyn PrecheckLink>>,
    approval: Option<Arc<dyn ApprovalService>>,
    gates: Vec<(Scope, Arc<dyn Gate>)>,
    middleware: Vec<Arc<dyn Middleware>>,
    postchecks: Vec<(Scope, Arc<dyn PostCheck>)>,
    observers: Vec<Arc<dyn Observer>>,
    sink: Option<Arc<dyn EventSink>>,
    journal: Option<Arc<dyn Journal>>,
    policies: Vec<Arc<ArcSwap<LoadedPolicy>>>,
    policy_stages: Vec<Arc<PolicyStage>>,
    grace: Duration,
    sessions: Option<Arc<dyn SessionStore>>,
}

/// Assembles a runtime. The order of `link` and `policy` calls is the order of the chain.
pub struct RuntimeBuilder {
    runtime: Runtime,
}

impl RuntimeBuilder {
    pub fn new(registry: Arc<Registry>) -> Self {
        RuntimeBuilder {
            runtime: Runtime {
                registry,
                links: Vec::new(),
                approval: None,
                gates: Vec::new(),
                middleware: Vec::new(),
                postchecks: Vec::new(),
                observers: Vec::new(),
                sink: None,
                journal: None,
                policies: Vec::new(),
                policy_stages: Vec::new(),
                grace: Duration::from_secs(2),
                sessions: None,
            },
        }
    }

    /// Keeps the sessions of calls made `in_session`: each is judged on the labels and counts its
    /// session's earlier calls left, and the labels its post-checks attach are kept.
    pub fn sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.runtime.sessions = Some(store);
        self
    }

    pub fn link(mut self, link: Arc<dyn PrecheckLink>) -> Self {
        self.runtime.links.push(link);
        self
    }

    pub fn approval(mut self, service: Arc<dyn ApprovalService>) -> Self {
        self.runtime.approval = Some(service);
        self
    }

    /// A gate for every agent whose scope chain holds `scope`.
    pub fn gate(mut self, scope: Scope, gate: Arc<dyn Gate>) -> Self {
        self.runtime.gates.push((scope, gate));
        self
    }

    /// Middleware, outermost first.
    pub fn middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.runtime.middleware.push(middleware);
        self
    }

    pub fn postcheck(mut self, scope: Scope, postcheck: Arc<dyn PostCheck>) -> Self {
        self.runtime.postchecks.push((scope, postcheck));
        self
    }

    pub fn observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.runtime.observers.push(observer);
        self
    }

    pub fn events(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.runtime.sink = Some(sink);
        self
    }

    /// Makes every call durable before it runs, and its result after.
    pub fn journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.runtime.journal = Some(journal);
        self
    }

    /// How long a cancelled tool may take to stop before the call returns without it.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.runtime.grace = grace;
        self
    }

    /// Loads a compiled policy set at a scope: its pre-checks join the chain here, its gates and
    /// post-checks apply to agents in that scope.
    pub fn policy(mut self, scope: Scope, policy: LoadedPolicy) -> (Self, PolicyHandle) {
        let index = self.runtime.policies.len();
        let stage = Arc::new(PolicyStage::new(index, scope.clone(), &policy));
        let (slot, handle) = slot(policy);
        self.runtime.policies.push(slot);
        self.runtime.links.push(stage.clone());
        self.runtime.gates.push((scope.clone(), stage.clone()));
        self.runtime.policy_stages.push(stage.clone());
        self.runtime.postchecks.push((scope, stage));
        (self, handle)
    }

    /// Loads every set of the project configuration, in its chain order and at its scope: the
    /// same chain `sluice eval` and the integrations judge with. The host fills a call's missing
    /// context with [`Config::fill_context`](crate::config::Config::fill_context).
    pub fn from_config(
        mut self,
        config: &crate::config::Config,
        backend: sluice_compiler::jit::Backend,
    ) -> Result<(Self, Vec<PolicyHandle>), crate::config::ConfigError> {
        let mut handles = Vec::new();
        for (source, scope) in config.set_sources()? {
            let policy = crate::config::load_set(&source, backend)?;
            let handle;
            (self, handle) = self.policy(scope, policy);
            handles.push(handle);
        }
        Ok((self, handles))
    }

    pub fn build(self) -> Runtime {
        self.runtime
    }
}

impl Runtime {
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    fn emit(&self, event: Event) {
        if let Some(sink) = &self.sink {
            // The loop must not stop because the audit log is unwritable; a host that needs
            // durability uses a sink that fails loudly on its own terms.
            let _ = sink.record(&event);
        }
    }

    /// Whether the call may run alongside its neighbours in a batch: its tool says so for these
    /// arguments, or a loaded policy's `concurrency` rule does.
    pub(crate) fn is_concurrency_safe(&self, call: &ToolCall) -> bool {
        let lookup = self.registry.lookup(&call.agent().id, call.tool());
        let Some(resolved) = &lookup.resolved else {
            return false;
        };
        if (resolved.definition.concurrency_safe)(call.args()) {
            return true;
        }
        let call = if lookup.presets.is_empty() {
            call.clone()
        } else {
            call.with_presets(&lookup.presets)
        };
        let scopes = ScopeChain::new(&call.agent().id, lookup.presets);
        self.policy_stages.iter().any(|stage| {
            self.policies
                .get(stage.index)
                .is_some_and(|slot| stage.concurrent(slot, &call, &scopes))
        })
    }

    fn emit_call(&self, call: &ToolCall) {
        if self.sink.is_some() {
            self.emit(Event::ToolCall {
                call_id: call.id().clone(),
                tool: call.tool().to_string(),
                agent: call.agent().id.clone(),
                args: call.args().clone(),
                at_ms: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis()),
            });
        }
    }

    /// Runs one call through the whole pipeline. `cancel` is the caller's signal: it is honoured
    /// before the tool starts and while it runs, whatever middleware does.
    pub async fn execute(&self, call: ToolCall, cancel: CancellationToken) -> FinalResult {
        if let Err(error) = self.journal_calls(std::slice::from_ref(&call)) {
            return self.unrecorded(call, &error);
        }
        // Boxed: the caller moves a small future, however large the pipeline's state.
        let result = Box::pin(self.run(call, cancel, None)).await;
        self.journal_results(std::slice::from_ref(&result));
        result
    }

    /// Makes the calls durable before any of them runs: one write and one fsync for them all.
    pub(crate) fn journal_calls(&self, calls: &[ToolCall]) -> Result<(), String> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        let entries: Vec<Entry> = calls
            .iter()
            .map(|call| Entry::ToolCall {
                call_id: call.id().to_string(),
                tool: call.tool().to_string(),
                agent: call.agent().id.clone(),
                args: call.args().clone(),
            })
            .collect();
        journal.append_all(&entries).map_err(|e| e.to_string())
    }

    /// Makes the results durable before they are handed back. If this fails, reopening the
    /// journal gives the calls synthetic results, so the history stays whole.
    pub(crate) fn journal_results(&self, results: &[FinalResult]) {
        let Some(journal) = &self.journal else { return };
        let entries: Vec<Entry> = results
            .iter()
            .map(|r| Entry::ToolResult {
                call_id: r.call_id().to_string(),
                status: r.status().as_str().to_string(),
                content: r.content().to_string(),
                interrupted: false,
            })
            .collect();
        let _ = journal.append_all(&entries);
    }

    /// The result of a call the journal could not record: it is not run, since history must
    /// never miss a call that ran.
    pub(crate) fn unrecorded(&self, call: ToolCall, error: &str) -> FinalResult {
        let message = format!("the journal could not record the call, so it was not run: {error}");
        self.synthetic(
            call,
            Status::Error,
            ResultKind::JournalFailed {
                error: error.to_string(),
            },
            message,
        )
    }

    /// A result for a call that never ran (interrupted while queued, or lost to a panic), with
    /// its events and journal entries like any other.
    pub(crate) fn synthetic(
        &self,
        call: ToolCall,
        status: Status,
        kind: ResultKind,
        message: String,
    ) -> FinalResult {
        self.emit_call(&call);
        let result = NormalizedResult::failure(status, kind, message.clone());
        let decision = DecisionRecord {
            reason: Some(message),
            ..DecisionRecord::default()
        };
        self.finish(&call, None, result, decision, Timings::default())
    }

    /// [`Runtime::execute`], within a batch whose interrupt explains a cancellation. Each call
    /// runs in a `tool_call` span (with its decision, deciding rule and status recorded when
    /// known) holding one span per stage.
    pub(crate) async fn run(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        interrupt: Option<&crate::batch::InterruptState>,
    ) -> FinalResult {
        let span = tracing::info_span!(
            "tool_call",
            call_id = %call.id(),
            tool = call.tool(),
            agent = call.agent().id.as_str(),
            allowed = tracing::field::Empty,
            rule = tracing::field::Empty,
            status = tracing::field::Empty,
        );
        self.run_in_span(call, cancel, interrupt)
            .instrument(span)
            .await
    }

    async fn run_in_span(
        &self,
        call: ToolCall,
        cancel: CancellationToken,
        interrupt: Option<&crate::batch::InterruptState>,
    ) -> FinalResult {
        let mut watch = Stopwatch::start();
        let mut timings = Timings::default();
        let lookup = self.registry.lookup(&call.agent().id, call.tool());
        let call = if lookup.presets.is_empty() {
            call
        } else {
            call.with_presets(&lookup.presets)
        };
        let call = self.in_its_session(call);
        self.emit_call(&call);
        let Some(resolved) = lookup.resolved else {
            let message = format!("unknown tool `{}`", call.tool());
            let result =
                NormalizedResult::failure(Status::Error, ResultKind::UnknownTool, message.clone());
            let decision = DecisionRecord {
                reason: Some(message),
                ..DecisionRecord::default()
            };
            watch.lap();
            timings.total_us = watch.total();
            return self.finish(&call, None, result, decision, timings);
        };
        let scopes = ScopeChain::new(&call.agent().id, lookup.presets);
        // Cards are built only when someone records them.
        if self.sink.is_some()
            && let Some(output) = &resolved.definition.output
        {
            self.emit(Event::CallCard {
                call_id: call.id().clone(),
                card: render_call(&output.render, call.tool(), call.args()),
            });
        }
        let snapshot = Snapshot::take(&self.policies);
        let vetoes = snapshot.unasked_gates();
        let invocation = Invocation {
            call: &call,
            scopes: &scopes,
            snapshot: &snapshot,
            vetoes: &vetoes,
        };

        let violations = resolved.violations(call.args());
        let (result, decision) = if violations.is_empty() {
            // Boxed: the pipeline's future stays small for hosts that spawn a task per call.
            Box::pin(self.decide_and_run(
                &invocation,
                &resolved,
                (&cancel, interrupt),
                (&mut watch, &mut timings),
            ))
            .await
        } else {
            let message = format!(
                "invalid arguments for `{}`: {}",
                call.tool(),
                violations.join("; ")
            );
            let result = NormalizedResult::failure(
                Status::Error,
                ResultKind::InvalidArguments { errors: violations },
                message.clone(),
            );
            (
                result,
                DecisionRecord {
                    reason: Some(message),
                    ..DecisionRecord::default()
                },
            )
        };

        let mut result = result;
        let postcheck = tracing::info_span!("postcheck").entered();
        for (scope, participant) in &self.postchecks {
            if !scopes.contains(scope) {
                continue;
            }
            let mut stopped = false;
            for verdict in participant.check(&invocation, &result) {
                if !apply(&mut result, verdict) {
                    stopped = true;
                    break;
                }
            }
            if stopped {
                break;
            }
        }
        drop(postcheck);
        self.keep_in_session(&call, &mut result);
        timings.postcheck_us = watch.lap();
        if let Some(finalize) = &resolved.definition.finalize
            && let Some(content) = finalize(&call, &result)
        {
            result.content = content;
        }
        watch.lap();
        timings.total_us = watch.total();
        self.finish(&call, Some(&resolved), result, decision, timings)
    }

    /// The call with its session as the store has it; without one when the store cannot be read,
    /// so that the rules that read it fail closed.
    fn in_its_session(&self, call: ToolCall) -> ToolCall {
        let (Some(store), Some(id)) = (&self.sessions, call.session_id()) else {
            return call;
        };
        match store.load(id) {
            Ok(state) => {
                let view = state.view(crate::session::unix_now());
                call.with_session(view)
            }
            Err(error) => {
                tracing::warn!("the session of call {} cannot be read: {error}", call.id());
                call
            }
        }
    }

    /// Counts the call in its session and keeps the labels its post-checks attached. A label
    /// that cannot be kept fails the result: a later call must not pass for want of it.
    fn keep_in_session(&self, call: &ToolCall, result: &mut NormalizedResult) {
        let (Some(store), Some(id)) = (&self.sessions, call.session_id()) else {
            return;
        };
        let mut events = vec![SessionEvent::call(call.tool())];
        events.extend(result.labels.iter().cloned().map(SessionEvent::Label));
        if let Err(error) = store.record(id, &events)
            && !result.labels.is_empty()
        {
            *result = NormalizedResult::failure(
                Status::Error,
                ResultKind::ToolFailed,
                format!(
                    "the session's labels could not be kept ({error}), so the result is withheld"
                ),
            );
        }
    }

    /// Pre-check, approval, gates and execution.
    async fn decide_and_run(
        &self,
        invocation: &Invocation<'_>,
        resolved: &Resolved,
        (cancel, interrupt): (&CancellationToken, Option<&crate::batch::InterruptState>),
        (watch, timings): (&mut Stopwatch, &mut Timings),
    ) -> (NormalizedResult, DecisionRecord) {
        let call = invocation.call;
        let verdict = run_chain(&self.links, invocation)
            .instrument(tracing::info_span!("precheck"))
            .await;
        timings.precheck_us = watch.lap();
        let mut record = DecisionRecord::default();
        match &verdict.decision {
            LinkDecision::Deny { reason, rule, .. } => {
                let result = denied(
                    DenyingStage::Precheck,
                    vec![reason.clone()],
                    rule.iter().cloned().collect(),
                );
                record.reason = Some(reason.clone());
                record.rule = rule.clone();
                record.precheck = Some(verdict);
                return (result, record);
            }
            LinkDecision::Ask { reason, rule, .. } => {
                let answer = match &self.approval {
                    Some(service) => Some(
                        service
                            .request(call, reason)
                            .instrument(tracing::info_span!("approval"))
                            .await,
                    ),
                    None => None,
                };
                timings.approval_us = watch.lap();
                let refusal = denial_reason(reason, answer.as_ref());
                record.approval = Some(ApprovalRecord {
                    asked: reason.clone(),
                    answer,
                });
                record.rule = rule.clone();
                if let Some(why) = refusal {
                    let result = denied(
                        DenyingStage::Approval,
                        vec![why.clone()],
                        rule.iter().cloned().collect(),
                    );
                    record.reason = Some(why);
                    record.precheck = Some(verdict);
                    return (result, record);
                }
            }
            LinkDecision::Allow { rule, .. } => record.rule = rule.clone(),
            LinkDecision::Delegate => {}
        }
        record.precheck = Some(verdict);
        let mut vetoes = Vec::new();
        let gates = async {
            for (scope, gate) in &self.gates {
                if invocation.scopes.contains(scope) {
                    vetoes.extend(gate.check(invocation).await);
                }
            }
        };
        gates.instrument(tracing::info_span!("gates")).await;
        timings.gates_us = watch.lap();
        if !vetoes.is_empty() {
            let reasons: Vec<String> = vetoes.iter().map(|v| v.reason.clone()).collect();
            let rules: Vec<RuleMeta> = vetoes.iter().filter_map(|v| v.rule.clone()).collect();
            let result = denied(DenyingStage::Gate, reasons.clone(), rules.clone());
            return (
                result,
                DecisionRecord {
                    reason: reasons.first().cloned(),
                    rule: rules.first().cloned(),
                    vetoes,
                    ..record
                },
            );
        }

        record.allowed = true;
        let span = tracing::info_span!("execute");
        let execution = if self.middleware.is_empty() {
            // Nothing wraps the tool: it runs without the chain's boxed future.
            run_tool(&resolved.definition, call, cancel, None, self.grace)
                .instrument(span)
                .await
        } else {
            let next = Next {
                call,
                tool: &resolved.definition,
                rest: &self.middleware,
                original: cancel,
                grace: self.grace,
            };
            next.run(ExecContext {
                cancel: cancel.clone(),
            })
            .instrument(span)
            .await
        };
        let started_and_failed = matches!(
            execution,
            Execution::Failed(_)
                | Execution::Aborted { .. }
                | Execution::Timeout { .. }
                | Execution::Panicked(_)
        );
        if let (true, Some(compensate)) = (started_and_failed, &resolved.definition.compensate) {
            compensate(call.clone()).await;
        }
        timings.execute_us = watch.lap();
        let interrupted = interrupt.and_then(crate::batch::InterruptState::reason);
        (normalize(execution, interrupted), record)
    }

    fn finish(
        &self,
        call: &ToolCall,
        resolved: Option<&Resolved>,
        result: NormalizedResult,
        decision: DecisionRecord,
        timings: Timings,
    ) -> FinalResult {
        let final_result = FinalResult::freeze(
            call.id().clone(),
            call.tool_name().clone(),
            result,
            decision,
            timings,
        );
        let span = tracing::Span::current();
        span.record("allowed", final_result.decision().allowed);
        span.record("status", final_result.status().as_str());
        if let Some(rule) = &final_result.decision().rule {
            span.record("rule", &*rule.name);
        }
        for observer in &self.observers {
            observer.observe(&final_result);
        }
        // Events are built only when someone records them.
        if self.sink.is_some() {
            self.emit(Event::ToolResult {
                call_id: call.id().clone(),
                tool: call.tool().to_string(),
                agent: call.agent().id.clone(),
                status: final_result.status().as_str().to_string(),
                result: final_result.kind().clone(),
                content: final_result.content().to_string(),
                decision: Box::new(final_result.decision().clone()),
                timings: final_result.timings().clone(),
            });
            if let Some(intent) = resolved
                .and_then(|r| r.definition.output.as_ref())
                .map(|o| &o.render)
            {
                self.emit(Event::ResultCard {
                    call_id: call.id().clone(),
                    card: render_result(intent, call.args(), final_result.result()),
                });
            }
        }
        final_result
    }
}

fn denied(stage: DenyingStage, reasons: Vec<String>, rules: Vec<RuleMeta>) -> NormalizedResult {
    let message = reasons.join("; ");
    NormalizedResult::failure(
        Status::Denied,
        ResultKind::Denied {
            stage,
            reasons,
            rules,
        },
        message,
    )
}

fn normalize(
    execution: Execution,
    interrupted: Option<crate::batch::InterruptReason>,
) -> NormalizedResult {
    match execution {
        Execution::Aborted { .. } | Execution::AbortedBeforeStart if interrupted.is_some() => {
            let reason = interrupted.unwrap_or(crate::batch::InterruptReason::UserInterrupted);
            let message = format!("interrupted: {reason}");
            NormalizedResult::failure(Status::Aborted, ResultKind::Interrupted { reason }, message)
        }
        Execution::Completed(reply) => NormalizedResult::completed(reply),
        Execution::Failed(error) => {
            NormalizedResult::failure(Status::Error, ResultKind::ToolFailed, error.message)
        }
        Execution::AbortedBeforeStart => NormalizedResult::failure(
            Status::Aborted,
            ResultKind::AbortedBeforeStart,
            "cancelled before the tool started",
        ),
        Execution::Aborted { drained } => {
            let message = if drained {
                "cancelled while running"
            } else {
                "cancelled while running; the tool did not stop in time and finishes in the background"
            };
            NormalizedResult::failure(Status::Aborted, ResultKind::Aborted, message)
        }
        Execution::Timeout { budget } => {
            let budget_ms = crate::execute::millis(budget);
            NormalizedResult::failure(
                Status::Timeout,
                ResultKind::Timeout { budget_ms },
                format!("the tool ran out of its {budget_ms} ms budget"),
            )
        }
        Execution::Panicked(message) => NormalizedResult::failure(
            Status::Error,
            ResultKind::Panicked {
                message: message.clone(),
            },
            format!("the tool panicked: {message}"),
        ),
    }
}
