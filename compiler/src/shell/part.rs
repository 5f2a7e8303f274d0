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

/// Field `name` of a record, looked for first at `position`: a part record keeps its fields in
/// the order of [`FIELDS`], so a part's field is found there without hashing its name. Any other
/// record (or a name not at that position) falls back to the lookup by name.
pub fn field_at<'r>(
    record: &'r Map<String, Json>,
    name: &str,
    position: usize,
) -> Option<&'r Json> {
    match record.iter().nth(position) {
        Some((key, value)) if key == name => Some(value),
        _ => record.get(name),
    }
}

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
    // Built directly rather than through `json!` (serde's serializer), from a copy of a record
    // that holds every field already: a decision builds one record per part of every command
    // line, and a copy does not hash the twenty names again.
    let mut part = empty_record().clone();
    let fields: [Json; FIELDS.len()] = [
        Json::String(display(command)),
        Json::String(command.name.clone()),
        strings(command.argv.iter().cloned()),
        strings(command.flags.iter().cloned()),
        strings(command.args.iter().cloned()),
        strings(command.paths.iter().cloned()),
        command.cwd.clone().map_or(Json::Null, Json::String),
        Json::Array(redirects),
        strings(command.env.iter().cloned()),
        strings(command.wrappers.iter().cloned()),
        command.unresolved.clone().map_or(Json::Null, Json::String),
        strings(effects.reads),
        strings(effects.writes),
        strings(effects.deletes),
        Json::Bool(effects.network),
        Json::Bool(effects.executes),
        Json::Bool(effects.destroys),
        Json::Bool(effects.system),
        Json::Bool(effects.known || (command.name.is_empty() && command.unresolved.is_none())),
        Json::Bool(effects.read_only),
    ];
    for (slot, value) in part.values_mut().zip(fields) {
        *slot = value;
    }
    Json::Object(part)
}

/// A part record with every field of [`FIELDS`], in order, each `null`.
fn empty_record() -> &'static Map<String, Json> {
    static EMPTY: std::sync::OnceLock<Map<String, Json>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| {
        FIELDS
            .iter()
            .map(|name| ((*name).to_string(), Json::Null))
            .collect()
    })
}

fn strings(items: impl IntoIterator<Item = String>) -> Json {
    Json::Array(items.into_iter().map(Json::String).collect())
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
