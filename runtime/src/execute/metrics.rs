//! The metrics middleware: count, errors and latency per tool.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde::Serialize;

use super::{ExecContext, Execution, Middleware, Next};
use crate::call::ToolCall;
use crate::registry::ToolDefinition;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolMetrics {
    pub calls: u64,
    pub errors: u64,
    pub total: Duration,
    pub max: Duration,
}

#[derive(Debug, Default)]
pub struct MetricsMiddleware {
    per_tool: Mutex<BTreeMap<String, ToolMetrics>>,
}

impl MetricsMiddleware {
    pub fn snapshot(&self) -> BTreeMap<String, ToolMetrics> {
        self.per_tool.lock().map(|m| m.clone()).unwrap_or_default()
    }
}

impl Middleware for MetricsMiddleware {
    fn name(&self) -> &str {
        "metrics"
    }

    fn around<'a>(
        &'a self,
        call: &'a ToolCall,
        _tool: &'a ToolDefinition,
        exec: ExecContext,
        next: Next<'a>,
    ) -> BoxFuture<'a, Execution> {
        Box::pin(async move {
            let started = Instant::now();
            let result = next.run(exec).await;
            let elapsed = started.elapsed();
            if let Ok(mut per_tool) = self.per_tool.lock() {
                let entry = per_tool.entry(call.tool().to_string()).or_default();
                entry.calls += 1;
                entry.errors += u64::from(!matches!(result, Execution::Completed(_)));
                entry.total += elapsed;
                entry.max = entry.max.max(elapsed);
            }
            result
        })
    }
}
