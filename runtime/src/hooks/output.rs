//! Post-checks on a tool's output in the harness's own shape. Each harness sends output as JSON
//! of its own (`{stdout, stderr, …}`, `{llmContent, …}`, `{textResultForLlm, …}`, or a string),
//! and some only take a rewrite back in that same shape. So every text in it is checked as the
//! result's content and rewritten in place; then the whole rewritten value is checked once, so
//! rules on `result.value` see what the model would.

use serde_json::Value;
use sluice_compiler::call::{Call, Status, ToolResult};
use sluice_compiler::decision::{LabelGrant, PostcheckKind, PostcheckOutcome};

use crate::chain::Chain;

/// More texts than this in one output are not checked one by one: the output is withheld.
const MAX_TEXTS: usize = 4096;

/// What the post-checks made of an output.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewrite {
    pub kind: PostcheckKind,
    /// The output, rewritten, in the shape it came in.
    pub response: Value,
    /// Why the output failed, with the rule that failed it.
    pub failure: Option<String>,
    /// Context the rules attached, in order, each once.
    pub attached: Vec<String>,
    /// Labels the rules attached to the session, in order, each once.
    pub labels: Vec<LabelGrant>,
}

impl Rewrite {
    pub fn failure_message(&self) -> String {
        self.failure
            .clone()
            .unwrap_or_else(|| "the tool's output was withheld by policy [sluice]".into())
    }

    /// The attached context, as one text for harnesses that take one.
    pub fn context(&self) -> Option<String> {
        (!self.attached.is_empty()).then(|| self.attached.join("\n"))
    }

    /// Every text of the rewritten output, in order: what a harness that takes the output back
    /// as one text shows the model.
    pub fn text(&self) -> String {
        let mut texts = Vec::new();
        collect(&self.response, &mut texts);
        texts.join("\n")
    }
}

/// Runs the chain's post-checks over `response`, the output of `call`.
pub fn postcheck(chain: &Chain, call: &Call, response: &Value) -> Rewrite {
    let mut rewrite = Rewrite {
        kind: PostcheckKind::Accept,
        response: Value::Null,
        failure: None,
        attached: Vec::new(),
        labels: Vec::new(),
    };
    // `isError` is how an MCP result says it failed, in every harness that passes one on.
    let failed = response.get("error").is_some_and(|e| !e.is_null())
        || response.get("isError").and_then(Value::as_bool) == Some(true);
    let status = if failed { Status::Error } else { Status::Ok };
    if count(response) > MAX_TEXTS {
        rewrite.response = response.clone();
        rewrite.kind = PostcheckKind::Fail;
        rewrite.failure = Some(format!(
            "the tool's output has more than {MAX_TEXTS} texts, too many to check; it was withheld [sluice]"
        ));
        return rewrite;
    }
    let mut failed = None;
    let mut attached = Vec::new();
    let mut labels: Vec<LabelGrant> = Vec::new();
    let mut rewritten = false;
    let mut response = response.clone();
    // One copy of the call, its result replaced for each check.
    let mut seen = call.clone();
    each_text(&mut response, &mut |text: &mut String| {
        if failed.is_some() || text.is_empty() {
            return;
        }
        let Some(post) = check(chain, &mut seen, status, text, Value::Null) else {
            return;
        };
        attached.extend(post.attached.iter().cloned());
        labels.extend(post.labels.iter().cloned());
        match post.outcome {
            PostcheckKind::Fail => failed = Some(failure(&post)),
            PostcheckKind::Rewritten if post.content != *text => {
                *text = post.content;
                rewritten = true;
            }
            PostcheckKind::Rewritten | PostcheckKind::Accept => {}
        }
    });
    if failed.is_none()
        && let Some(post) = check(chain, &mut seen, status, "", response.clone())
    {
        attached.extend(post.attached.iter().cloned());
        labels.extend(post.labels.iter().cloned());
        if post.outcome == PostcheckKind::Fail {
            failed = Some(failure(&post));
        }
    }
    for context in attached {
        if !rewrite.attached.contains(&context) {
            rewrite.attached.push(context);
        }
    }
    for grant in labels {
        if !rewrite.labels.contains(&grant) {
            rewrite.labels.push(grant);
        }
    }
    rewrite.response = response;
    if let Some(message) = failed {
        rewrite.kind = PostcheckKind::Fail;
        rewrite.failure = Some(message);
    } else if rewritten {
        rewrite.kind = PostcheckKind::Rewritten;
    }
    rewrite
}

/// `response` with every text emptied and the first replaced by `message`: the shape the
/// harness expects, with nothing of the original left.
pub fn withheld(response: &Value, message: &str) -> Value {
    let mut out = response.clone();
    let mut first = true;
    each_text(&mut out, &mut |text: &mut String| {
        *text = if first {
            message.to_string()
        } else {
            String::new()
        };
        first = false;
    });
    if first {
        return Value::String(message.to_string());
    }
    out
}

fn check(
    chain: &Chain,
    seen: &mut Call,
    status: Status,
    content: &str,
    value: Value,
) -> Option<PostcheckOutcome> {
    seen.result = Some(ToolResult {
        status,
        content: content.to_string(),
        value,
        error: None,
    });
    chain.postcheck(seen)
}

fn failure(post: &PostcheckOutcome) -> String {
    let message = post.failure.as_ref().map_or_else(
        || "the tool's output was withheld by policy".to_string(),
        |f| match &f.context {
            Some(context) => format!("{}: {context}", f.message),
            None => f.message.clone(),
        },
    );
    match post.applied.last() {
        Some(rule) => format!("{message} [sluice: {}]", super::rule_location(rule)),
        None => format!("{message} [sluice]"),
    }
}

fn each_text(value: &mut Value, visit: &mut dyn FnMut(&mut String)) {
    match value {
        Value::String(text) => visit(text),
        Value::Array(items) => items.iter_mut().for_each(|item| each_text(item, visit)),
        Value::Object(fields) => fields.values_mut().for_each(|item| each_text(item, visit)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn collect(value: &Value, texts: &mut Vec<String>) {
    match value {
        Value::String(text) if !text.is_empty() => texts.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect(item, texts)),
        Value::Object(fields) => fields.values().for_each(|item| collect(item, texts)),
        _ => {}
    }
}

fn count(value: &Value) -> usize {
    match value {
        Value::String(_) => 1,
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(fields) => fields.values().map(count).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}
