//! Stage 6, post-check: participants see the normalized result — denials and failures included —
//! and may accept it, replace its content or its value, attach context, or fail it. They apply in
//! order, each seeing the result as the ones before it left it. A post-check can rewrite the
//! message of a denial but never turn it into success.

use serde_json::Value;
use sluice_compiler::call::Status;

use crate::precheck::Invocation;
use crate::result::{NormalizedResult, ResultKind};

#[derive(Clone, Debug, PartialEq)]
pub enum PostAction {
    Accept,
    ReplaceContent(String),
    ReplaceValue(Value),
    AttachContext(String),
    /// Redactions: each text channel that changed, rewritten.
    Redact {
        content: Option<String>,
        value: Option<Value>,
        error: Option<String>,
    },
    /// Labels the call's session (`label session "NAME"`): kept with the result for the host.
    Label(sluice_compiler::decision::LabelGrant),
    /// Fails the result; only this context is exposed, the tool's own is dropped.
    Fail {
        message: String,
        context: Option<String>,
    },
}

/// What one source (a rule, or a Rust participant) did to the result.
#[derive(Clone, Debug, PartialEq)]
pub struct PostVerdict {
    pub by: String,
    pub actions: Vec<PostAction>,
}

pub trait PostCheck: Send + Sync {
    fn name(&self) -> &str;
    fn check(&self, invocation: &Invocation<'_>, result: &NormalizedResult) -> Vec<PostVerdict>;
}

/// Applies one verdict. Replacing both the content and the value in one verdict is rejected: the
/// result fails, naming the source.
pub(crate) fn apply(result: &mut NormalizedResult, verdict: PostVerdict) -> bool {
    let replaces_content = verdict
        .actions
        .iter()
        .any(|a| matches!(a, PostAction::ReplaceContent(_)));
    let replaces_value = verdict
        .actions
        .iter()
        .any(|a| matches!(a, PostAction::ReplaceValue(_)));
    if replaces_content && replaces_value {
        fail(
            result,
            &verdict.by,
            format!(
                "post-check `{}` replaced both the content and the value; rejected",
                verdict.by
            ),
            None,
        );
        return false;
    }
    for action in verdict.actions {
        match action {
            PostAction::Accept => {}
            PostAction::ReplaceContent(content) => result.content = content,
            PostAction::ReplaceValue(value) => result.value = value,
            PostAction::AttachContext(context) => result.context.push(context),
            PostAction::Label(grant) => result.labels.push(grant),
            PostAction::Redact {
                content,
                value,
                error,
            } => {
                if let Some(content) = content {
                    result.content = content;
                }
                if let Some(value) = value {
                    result.value = value;
                }
                if let Some(error) = error {
                    result.error = Some(error);
                }
            }
            PostAction::Fail { message, context } => {
                fail(result, &verdict.by, message, context);
                return false;
            }
        }
    }
    true
}

fn fail(result: &mut NormalizedResult, by: &str, message: String, context: Option<String>) {
    if result.status == Status::Ok {
        result.status = Status::Error;
    }
    if !matches!(result.kind, ResultKind::Denied { .. }) {
        result.kind = ResultKind::PostcheckFailed { by: by.to_string() };
    }
    result.error = Some(message.clone());
    result.content = message;
    result.context = context.into_iter().collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{DenyingStage, ToolReply};

    fn ok() -> NormalizedResult {
        NormalizedResult::completed(ToolReply {
            content: "out".into(),
            value: Value::Null,
            context: vec!["tool note".into()],
            context_change: None,
        })
    }

    #[test]
    fn fail_turns_ok_into_error_and_keeps_only_its_context() {
        let mut result = ok();
        let kept = apply(
            &mut result,
            PostVerdict {
                by: "r".into(),
                actions: vec![PostAction::Fail {
                    message: "m".into(),
                    context: None,
                }],
            },
        );
        assert!(!kept);
        assert_eq!(
            (result.status, result.content.as_str()),
            (Status::Error, "m")
        );
        assert!(result.context.is_empty());
    }

    #[test]
    fn a_denial_stays_a_denial_whatever_the_actions() {
        let mut result = NormalizedResult::failure(
            Status::Denied,
            ResultKind::Denied {
                stage: DenyingStage::Gate,
                reasons: vec![],
                rules: vec![],
            },
            "no",
        );
        apply(
            &mut result,
            PostVerdict {
                by: "r".into(),
                actions: vec![PostAction::ReplaceContent("nicer no".into())],
            },
        );
        apply(
            &mut result,
            PostVerdict {
                by: "r".into(),
                actions: vec![PostAction::Fail {
                    message: "m".into(),
                    context: None,
                }],
            },
        );
        assert_eq!(result.status, Status::Denied);
        assert!(matches!(result.kind, ResultKind::Denied { .. }));
    }

    #[test]
    fn actions_apply_in_order() {
        let mut result = ok();
        let verdict = PostVerdict {
            by: "r".into(),
            actions: vec![
                PostAction::ReplaceContent("a".into()),
                PostAction::AttachContext("b".into()),
                PostAction::ReplaceContent("c".into()),
            ],
        };
        assert!(apply(&mut result, verdict));
        assert_eq!(result.content, "c");
        assert_eq!(result.context, ["tool note", "b"]);
    }
}
