//! Telemetry: a `tool_call` span per call, with the deciding rule as a field, and a span per stage.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use sluice_runtime::RuntimeBuilder;
use sluice_runtime::registry::Scope;
use support::*;
use tokio_util::sync::CancellationToken;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[derive(Clone, Debug, Default)]
struct SpanSeen {
    name: String,
    parent: Option<String>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<BTreeMap<u64, SpanSeen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut seen = SpanSeen {
            name: attrs.metadata().name().to_string(),
            ..SpanSeen::default()
        };
        seen.parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.name().to_string());
        attrs.record(&mut Fields(&mut seen.fields));
        self.0.lock().unwrap().insert(id.into_u64(), seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if let Some(seen) = self.0.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

#[test]
fn each_call_has_a_span_with_its_deciding_rule_and_a_span_per_stage() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (builder, _) = RuntimeBuilder::new(registry_with(vec![shell()]))
                .policy(Scope::Global, policy("policies/coding-agent"));
            let runtime = builder.build();
            runtime
                .execute(
                    call("bash", json!({ "command": "rm -rf /" })),
                    CancellationToken::new(),
                )
                .await;
            runtime
                .execute(
                    call("bash", json!({ "command": "echo hi" })),
                    CancellationToken::new(),
                )
                .await;
        });
    });
    let spans: Vec<SpanSeen> = capture.0.lock().unwrap().values().cloned().collect();
    let calls: Vec<&SpanSeen> = spans.iter().filter(|s| s.name == "tool_call").collect();
    assert_eq!(calls.len(), 2);
    let denied = calls
        .iter()
        .find(|s| s.fields.get("status").map(String::as_str) == Some("denied"))
        .expect("a denied call");
    assert_eq!(denied.fields["rule"], "deny_recursive_delete_of_roots");
    assert_eq!(denied.fields["allowed"], "false");
    assert_eq!(denied.fields["tool"], "bash");
    let allowed = calls
        .iter()
        .find(|s| s.fields.get("status").map(String::as_str) == Some("ok"))
        .expect("an allowed call");
    assert_eq!(allowed.fields["allowed"], "true");
    for stage in ["precheck", "gates", "execute", "postcheck"] {
        assert!(
            spans
                .iter()
                .any(|s| s.name == stage && s.parent.as_deref() == Some("tool_call")),
            "no `{stage}` span inside a `tool_call` span: {spans:#?}"
        );
    }
}
