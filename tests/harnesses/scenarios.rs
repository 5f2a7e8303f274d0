//! What every harness must show, written once: each harness module runs these with its own
//! session (a real harness run against the fake model, with `sluice hook` installed).

use std::process::Output;

use crate::fake_model::FakeModel;
use crate::{Project, SECRET, broken_config, hanging_config, text};

/// One run of a harness in `project`: the model asks for `command` in the harness's shell tool,
/// and the hook runs `sluice hook HARNESS --config … EXTRA`.
pub type Session<'a> = &'a dyn Fn(&Project, &str, &str) -> (Output, FakeModel);

/// A destructive command is blocked, the file it would delete survives, and the model is told
/// which rule blocked it.
pub fn destructive_command_is_blocked(name: &str, session: Session<'_>) {
    let project = Project::new(&format!("{name}-deny"));
    let victim = project.victim();
    let (output, model) = session(&project, "find . -delete", "");
    assert!(victim.join("keep.txt").exists(), "{}", text(&output));
    let seen = model.tool_results();
    assert!(
        seen.contains("deny_deleting_roots"),
        "{seen}\n{}",
        text(&output)
    );
}

/// A command no rule refuses runs.
pub fn allowed_command_runs(name: &str, session: Session<'_>) {
    let project = Project::new(&format!("{name}-allow"));
    let (output, _model) = session(&project, "echo made > made.txt", "");
    assert!(project.root.join("made.txt").exists(), "{}", text(&output));
}

/// A command a rule asks about does not run; `said` finds the ask (or its downgrade) in what
/// the hook answered or what the model saw.
pub fn ask_does_not_run(
    name: &str,
    session: Session<'_>,
    said: &dyn Fn(&Project, &FakeModel) -> bool,
) {
    let project = Project::new(&format!("{name}-ask"));
    let (output, model) = session(&project, "git clean -fdx && echo ran > ran.txt", "");
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        said(&project, &model),
        "answers:\n{}\nmodel saw:\n{}",
        project.answers(),
        model.tool_results()
    );
}

/// A secret a command prints reaches the model redacted, never as it was.
pub fn secret_never_reaches_the_model(name: &str, session: Session<'_>) {
    let project = Project::new(&format!("{name}-secret"));
    project.write("creds.txt", &format!("aws_access_key_id = {SECRET}\n"));
    let (output, model) = session(&project, "cat creds.txt", "");
    let seen = model.tool_results();
    assert!(
        seen.contains("[REDACTED aws-access-key-id]"),
        "the rewritten output did not reach the model:\n{seen}\n{}",
        text(&output)
    );
    assert!(
        !seen.contains(SECRET),
        "the secret reached the model:\n{seen}"
    );
}

/// A policy that does not compile blocks every call, and so does a hook that stalls past its
/// deadline; the model is told why.
pub fn broken_policy_and_stalled_hook_block(name: &str, session: Session<'_>) {
    let project = Project::new(&format!("{name}-broken"));
    broken_config(&project);
    let (output, model) = session(&project, "echo ran > ran.txt", "");
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("does not compile"),
        "{}",
        model.tool_results()
    );

    let stalled = Project::new(&format!("{name}-stalled"));
    hanging_config(&stalled);
    let (output, model) = session(&stalled, "echo ran > ran.txt", "--deadline-ms 1500");
    assert!(!stalled.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("no decision within"),
        "{}",
        model.tool_results()
    );
}

/// Where Sluice has no rule it says nothing (`{}`), and the harness's own permissions decide:
/// `session` runs the harness with settings of its own that refuse `touch`.
pub fn own_permissions_hold_when_sluice_delegates(name: &str, session: Session<'_>) {
    let project = Project::new(&format!("{name}-delegate"));
    let (output, _model) = session(&project, "touch made.txt", "");
    assert!(!project.root.join("made.txt").exists(), "{}", text(&output));
    assert!(
        project.answers().lines().any(|l| l == "{}"),
        "{}",
        project.answers()
    );
}
