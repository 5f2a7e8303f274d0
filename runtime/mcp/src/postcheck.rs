//! Post-checks on a `tools/call` result before the client sees it: every text the model would
//! read (text blocks, embedded text resources, `structuredContent`) is checked and rewritten in
//! place, and a result too large to check is withheld.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use sluice_compiler::call::Call;
use sluice_compiler::decision::PostcheckKind;
use sluice_runtime::chain::Chain;
use sluice_runtime::hooks;

/// What the post-checks made of a result.
pub struct Checked {
    pub result: CallToolResult,
    pub kind: PostcheckKind,
}

/// A result with one text and `isError: true`: how the gateway says a call was refused, failed
/// or withheld, so that the model reads why.
pub fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)])
}

/// Runs the chain's post-checks over `result`, bounded by `max_bytes` of JSON.
pub fn check(chain: &Chain, call: &Call, result: CallToolResult, max_bytes: usize) -> Checked {
    let Ok(mut value) = serde_json::to_value(&result) else {
        return withheld("the tool's result could not be read, so it was withheld [sluice]");
    };
    let size = json_size(&value);
    if size > max_bytes {
        return withheld(&format!(
            "the tool's result is {size} bytes, more than the {max_bytes} the gateway passes on; it was withheld [sluice]"
        ));
    }
    let mut texts = Vec::new();
    visit_texts(&mut value, &mut |text| {
        texts.push(Value::String(text.clone()))
    });
    let view = json!({
        "content": texts,
        "structuredContent": value.get("structuredContent").cloned().unwrap_or(Value::Null),
        "isError": value.get("isError").cloned().unwrap_or(Value::Bool(false)),
    });
    let rewrite = hooks::postcheck(chain, call, &view);
    match rewrite.kind {
        PostcheckKind::Accept => Checked {
            result,
            kind: PostcheckKind::Accept,
        },
        PostcheckKind::Fail => Checked {
            kind: PostcheckKind::Fail,
            ..withheld(&rewrite.failure_message())
        },
        PostcheckKind::Rewritten => {
            let mut rewritten = rewrite
                .response
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter();
            visit_texts(&mut value, &mut |text| {
                if let Some(Value::String(new)) = rewritten.next() {
                    *text = new;
                }
            });
            if let (Some(slot), Some(structured)) = (
                value.get_mut("structuredContent"),
                rewrite.response.get("structuredContent"),
            ) {
                *slot = structured.clone();
            }
            match serde_json::from_value(value) {
                Ok(result) => Checked {
                    result,
                    kind: PostcheckKind::Rewritten,
                },
                Err(_) => withheld(
                    "the rewritten result could not be rebuilt, so it was withheld [sluice]",
                ),
            }
        }
    }
}

fn withheld(message: &str) -> Checked {
    Checked {
        result: error_result(message.to_string()),
        kind: PostcheckKind::Fail,
    }
}

/// Each text the model reads in a result's `content`: text blocks and embedded text resources.
fn visit_texts(result: &mut Value, visit: &mut dyn FnMut(&mut String)) {
    let Some(Value::Array(blocks)) = result.get_mut("content") else {
        return;
    };
    for block in blocks {
        let text = match block.get("type").and_then(Value::as_str) {
            Some("text") => block.get_mut("text"),
            Some("resource") => block.get_mut("resource").and_then(|r| r.get_mut("text")),
            _ => None,
        };
        if let Some(Value::String(text)) = text {
            visit(text);
        }
    }
}

/// How many bytes `value` takes as JSON, counted as it is written rather than kept.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}
