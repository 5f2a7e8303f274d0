//! A simple command as the language sees it: one element of `shell(...)`, as JSON.

use serde_json::{Map, Value as Json, json};

use super::command::SimpleCommand;
use super::effects::EffectTable;

/// The fields of a part, in the order `lang-spec/shell.md` lists them; the checker's record type
/// for a part is built from the same names.
pub const FIELDS: &[&str] = &[
    "text",
    "name",
    "argv",
    "flags",
    "args",
    "paths",
    "cwd",
    "redirects",
    "env",
    "wrappers",
    "unresolved",
    "reads",
    "writes",
    "deletes",
    "network",
    "executes",
    "destroys",
    "system",
    "known",
    "read_only",
];

/// Every simple command of a parsed line as a list of part records.
pub fn parts_json(commands: &[SimpleCommand], effects: &EffectTable) -> Json {
    parts_json_in(commands, effects, None)
}

/// [`parts_json`] for a line parsed with a home directory, which effects' operands resolve to.
pub fn parts_json_in(
    commands: &[SimpleCommand],
    effects: &EffectTable,
    home: Option<&str>,
) -> Json {
    // As `parse_command_in` reads it: the home directory normalized.
    let home = home.map(|home| crate::interp::path::normalize(home, None));
    Json::Array(
        commands
            .iter()
            .map(|command| part_json(command, effects, home.as_deref()))
            .collect(),
    )
}

fn part_json(command: &SimpleCommand, table: &EffectTable, home: Option<&str>) -> Json {
    let effects = table.effects_in(command, home);
    let redirects: Vec<Json> = command
        .redirects
        .iter()
        .map(|r| json!({ "fd": r.fd, "op": r.op, "target": r.target, "path": r.path }))
        .collect();
    let mut part = Map::new();
    let fields = [
        Json::String(display(command)),
        Json::String(command.name.clone()),
        json!(command.argv),
        json!(command.flags),
        json!(command.args),
        json!(command.paths),
        json!(command.cwd),
        Json::Array(redirects),
        json!(command.env),
        json!(command.wrappers),
        json!(command.unresolved),
        json!(effects.reads),
        json!(effects.writes),
        json!(effects.deletes),
        Json::Bool(effects.network),
        Json::Bool(effects.executes),
        Json::Bool(effects.destroys),
        Json::Bool(effects.system),
        Json::Bool(effects.known || (command.name.is_empty() && command.unresolved.is_none())),
        Json::Bool(effects.read_only),
    ];
    for (name, value) in FIELDS.iter().zip(fields) {
        part.insert((*name).to_string(), value);
    }
    Json::Object(part)
}

/// The command as one line a person reads: wrappers, assignments and words, quoted where the
/// shell would need it.
pub fn display(command: &SimpleCommand) -> String {
    let words = command
        .wrappers
        .iter()
        .chain(&command.env)
        .chain(&command.argv)
        .map(|word| quote(word));
    let redirects = command.redirects.iter().map(|r| {
        let fd = r.fd.map(|fd| fd.to_string()).unwrap_or_default();
        format!("{fd}{}{}", r.op, quote(&r.target))
    });
    words.chain(redirects).collect::<Vec<_>>().join(" ")
}

/// A word quoted only where its text would split or mean more to the shell: `$HOME`, `*` and
/// `~/x` read as they were most likely written.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && !word.chars().any(|c| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"' | '\\' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '`' | '#'
                )
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
