//! Variables set for a command that make it run other code: `GIT_SSH_COMMAND=cmd`,
//! `RUSTC_WRAPPER=cmd`, `PAGER=cmd` are followed as scripts; `LD_PRELOAD=lib` and `BASH_ENV=file`
//! load code the command's words do not name.

use super::extract::Walker;
use super::follow::nested;
use super::normalize::Cwd;
use super::word::Word;

/// Variables whose value is a command some program runs.
const COMMAND_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "PROMPT_COMMAND",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "GIT_PROXY_COMMAND",
    "SUDO_ASKPASS",
    "BROWSER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "FZF_DEFAULT_COMMAND",
];

/// Variables that make a program load code named nowhere in its words.
const LOADER_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "BASH_ENV",
    "ENV",
    "PERL5OPT",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "RUBYOPT",
];

/// `NAME=cmd` for a variable whose value some program runs is followed as a script; one that
/// makes a program load other code leaves the command unresolved.
pub(super) fn environment(
    walker: &mut Walker,
    env: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let mut why = None;
    for assignment in env {
        let Some((name, value)) = assignment.text.split_once('=') else {
            continue;
        };
        let runs = COMMAND_VARIABLES.contains(&name)
            || (name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER"));
        if runs && !value.is_empty() {
            match &assignment.dynamic {
                Some(reason) => {
                    why = Some(format!(
                        "`{name}` names a command not known until it runs: {reason}"
                    ))
                }
                None => nested(walker, value, cwd, depth),
            }
        } else if LOADER_VARIABLES.contains(&name) && !value.is_empty() && why.is_none() {
            why = Some(format!(
                "`{name}={value}` makes the program load code its words do not name"
            ));
        }
    }
    why
}
