//! Shell commands as the shell sees them: a command line parsed with the bash grammar
//! (tree-sitter-bash) into the simple commands it runs — across `&&`, `||`, `;`, pipes,
//! background jobs, subshells, groups, command and process substitution and `bash -c` strings —
//! each after quote removal, with its redirections and assignments, wrappers such as `sudo` and
//! `xargs` stripped but remembered, and its arguments split into flags, operands and paths.
//! Whatever cannot be known without running the shell is marked unresolved, with the reason.
//! The effect table says what each command reads, writes, deletes, and whether it reaches the
//! network or runs other code; `shell(...)` in the language gives each command as a part record.

mod code;
mod code_calls;
mod command;
mod databases;
pub mod effect_table_rows;
mod effects;
mod environment;
mod extract;
mod fast;
mod follow;
mod grammar;
mod launchers;
mod literal;
mod normalize;
mod options;
mod part;
mod tables;
mod tree;
mod word;
mod wrapper_table;
mod wrappers;
mod written;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod effect_tests;

#[cfg(test)]
mod fast_tests;

#[cfg(test)]
mod bound_tests;

#[cfg(test)]
mod model_tests;

#[cfg(test)]
mod reach_tests;

pub use command::{Redirect, SimpleCommand};
pub use effects::{EffectRow, EffectTable, Effects, Operands};
pub use extract::{
    Dirs, GRAMMAR_MILLIS, Limits, parse_command, parse_command_in, parse_command_with,
};
pub use part::{FIELDS, display, field_at, parts_json, parts_json_in};
