//! Shell commands as the shell sees them: a command line parsed with the bash grammar
//! (tree-sitter-bash) into the simple commands it runs — across `&&`, `||`, `;`, pipes,
//! background jobs, subshells, groups, command and process substitution and `bash -c` strings —
//! each after quote removal, with its redirections and assignments, wrappers such as `sudo` and
//! `xargs` stripped but remembered, and its arguments split into flags, operands and paths.
//! Whatever cannot be known without running the shell is marked unresolved, with the reason.

mod command;
mod extract;
mod normalize;
mod word;

#[cfg(test)]
mod tests;

pub use command::{Redirect, SimpleCommand};
pub use extract::{Limits, parse_command, parse_command_with};
