//! `sluice init`: a commented starter configuration, so a first run needs no reading.

use std::process::ExitCode;

use sluice_runtime::config::FILE_NAME;

use super::CliError;

/// The starter file: the shipped shell and git guards, and the usual context sources.
pub const STARTER: &str = r#"# Sluice: the policy sets that judge this project's agent's tool calls.
# Reference: lang-spec/config.md in the Sluice repository.

# The sets, in chain order. For each call, the first set whose pre-checks do not delegate
# decides (allow, ask or deny); every set's gates veto whatever any set allowed. A set is a
# built-in one (`builtin:NAME`) or a directory or file relative to this file.
[[policy]]
set = "builtin:shell-safety"

[[policy]]
set = "builtin:git-guard"

[[policy]]
set = "builtin:coding-agent"

[[policy]]
set = "builtin:secrets-redaction"

# A set of your own, in front of or after the shipped ones. `scope` limits a set to agents
# that joined a preset (`preset:NAME`) or to one agent (`agent:ID`); the default is `global`.
# [[policy]]
# set = "policies/team"
# scope = "preset:reviewers"

# Where context fields come from when the agent's host does not send them:
# `$project` (this file's directory), `$home`, `$cwd` (the call's working directory),
# `$env:NAME`, or a literal value.
[context]
workspace = "$project"
home = "$home"
cwd = "$cwd"
# The hosts `builtin:network` lets an agent reach.
allowed_hosts = ["example.com"]
"#;

pub fn run(force: bool) -> Result<ExitCode, CliError> {
    let path = std::path::Path::new(FILE_NAME);
    if path.exists() && !force {
        return Err(format!(
            "`{FILE_NAME}` already exists: edit it, or pass `--force` to replace it"
        ));
    }
    std::fs::write(path, STARTER).map_err(|e| format!("cannot write `{FILE_NAME}`: {e}"))?;
    outln!(
        "wrote {FILE_NAME}: {} policy sets in chain order; try `sluice eval --command 'rm -rf /'`",
        STARTER.matches("[[policy]]\nset").count()
    );
    Ok(ExitCode::SUCCESS)
}
