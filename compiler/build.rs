//! Indexes the shell model's built-in tables (`src/shell/options.json`, `src/shell/effects.json`)
//! when the crate is built, so that a process finds one program's entry by a binary search over
//! static data and reads only that entry's text. A hook is one process per tool call: reading
//! either table whole, or even its names, was a tenth of such a process.
//!
//! The index holds each entry's place in the text the crate includes, never a copy of the
//! entry: the text stays the one source, read with the same code as before.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::value::RawValue;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/shell/options.json");
    println!("cargo:rerun-if-changed=src/shell/effects.json");
    let mut out = String::new();
    if let Err(error) = write_index(&mut out) {
        // A table that does not read is a build that fails, with the reason.
        println!("cargo:warning={error}");
        std::process::exit(1);
    }
    let dir = std::env::var_os("OUT_DIR").map(std::path::PathBuf::from);
    let written = dir
        .ok_or_else(|| "OUT_DIR is not set".to_string())
        .and_then(|dir| {
            std::fs::write(dir.join("shell_tables.rs"), out).map_err(|e| e.to_string())
        });
    if let Err(error) = written {
        println!("cargo:warning=writing the shell tables' index: {error}");
        std::process::exit(1);
    }
}

fn write_index(out: &mut String) -> Result<(), String> {
    let options = read("src/shell/options.json")?;
    let effects = read("src/shell/effects.json")?;
    write_options(out, &options)?;
    write_effects(out, &effects)
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(Path::new(path)).map_err(|e| format!("reading {path}: {e}"))
}

/// Where `part` lies in `text`, which it was borrowed from.
fn place(text: &str, part: &RawValue) -> Result<(u32, u32), String> {
    let start = (part.get().as_ptr() as usize)
        .checked_sub(text.as_ptr() as usize)
        .ok_or("an entry outside its table")?;
    let end = start + part.get().len();
    let fits = |at: usize| u32::try_from(at).map_err(|e| e.to_string());
    Ok((fits(start)?, fits(end)?))
}

fn write_options(out: &mut String, text: &str) -> Result<(), String> {
    // Sorted as the index must be; a name given twice keeps its last entry, as a map would.
    let entries: std::collections::BTreeMap<String, &RawValue> =
        serde_json::from_str(text).map_err(|e| format!("options.json: {e}"))?;
    writeln!(
        out,
        "/// `options.json`: each program it names, sorted, with its entry's place in the text."
    )
    .map_err(|e| e.to_string())?;
    writeln!(
        out,
        "pub(super) static OPTION_ENTRIES: [(&str, u32, u32); {}] = [",
        entries.len()
    )
    .map_err(|e| e.to_string())?;
    for (program, entry) in &entries {
        let (start, end) = place(text, entry)?;
        writeln!(out, "    ({program:?}, {start}, {end}),").map_err(|e| e.to_string())?;
    }
    writeln!(out, "];").map_err(|e| e.to_string())
}

fn write_effects(out: &mut String, text: &str) -> Result<(), String> {
    let rows: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| format!("effects.json: {e}"))?;
    let mut names = BTreeSet::new();
    let mut places = Vec::with_capacity(rows.len());
    for (number, row) in rows.iter().enumerate() {
        places.push(place(text, row)?);
        let row: serde_json::Value =
            serde_json::from_str(row.get()).map_err(|e| format!("effects.json: {e}"))?;
        // A row without names is rejected when it is read, as before; it is indexed under none.
        let command = row.get("command");
        let listed = command.and_then(|c| c.as_array()).into_iter().flatten();
        for name in command.into_iter().chain(listed).filter_map(|n| n.as_str()) {
            names.insert((name.to_string(), number));
        }
    }
    writeln!(
        out,
        "/// `effects.json`: each row's place in the text, in table order."
    )
    .map_err(|e| e.to_string())?;
    writeln!(
        out,
        "pub(super) static EFFECT_ROWS: [(u32, u32); {}] = [",
        places.len()
    )
    .map_err(|e| e.to_string())?;
    for (start, end) in &places {
        writeln!(out, "    ({start}, {end}),").map_err(|e| e.to_string())?;
    }
    writeln!(out, "];").map_err(|e| e.to_string())?;
    writeln!(
        out,
        "/// Each program a row of `effects.json` names, with the row's number: sorted by name, \
         then in table order."
    )
    .map_err(|e| e.to_string())?;
    writeln!(
        out,
        "pub(super) static EFFECT_NAMES: [(&str, u32); {}] = [",
        names.len()
    )
    .map_err(|e| e.to_string())?;
    for (name, number) in &names {
        writeln!(out, "    ({name:?}, {number}),").map_err(|e| e.to_string())?;
    }
    writeln!(out, "];").map_err(|e| e.to_string())
}
