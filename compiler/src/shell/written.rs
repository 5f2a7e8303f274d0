//! Files a line writes and then runs: `cat > x.sh <<EOF … EOF; bash x.sh`,
//! `curl -o i.sh URL && sh i.sh`, `git clone URL d && cd d && ./install.sh`. A script whose text
//! the line spells out (a heredoc, `echo`, `printf`) is walked as the script it is; one written
//! by anything else is not known until it runs.

use super::code;
use super::command::SimpleCommand;
use super::effects::EffectTable;
use super::extract::Walker;
use super::follow::{SHELLS, known_output, nested, shell_options};
use super::normalize::Cwd;
use super::word::Word;

/// What the line wrote at a path it then runs.
pub(super) enum Script {
    /// The text written, as the line spells it.
    Known(String),
    /// Written by this command, with text not known until it runs.
    Unknown(String),
}

/// What the commands before `index` wrote to `path`, or to a directory above it: the last
/// writer decides.
pub(super) fn written(walker: &Walker, index: usize, path: &str) -> Option<Script> {
    let table = EffectTable::built_in();
    let mut found = None;
    for command in walker.out.iter().take(index) {
        let effects = table.effects_in(command, walker.home.as_deref());
        let exact = effects.writes.iter().any(|w| w == path);
        // A build writes somewhere in its directory (`cargo build && ./target/debug/app`): a
        // write of the whole directory says nothing of what is in it. A clone does say.
        let mut dirs: Vec<String> = effects
            .writes
            .iter()
            .filter(|w| command.cwd.as_ref() != Some(*w))
            .cloned()
            .collect();
        dirs.extend(clone_dir(command, walker.home.as_deref()));
        let above = dirs.iter().any(|w| {
            path.strip_prefix(w.as_str())
                .is_some_and(|rest| rest.starts_with('/') || w.ends_with('/'))
        });
        if !exact && !above {
            continue;
        }
        let text = if exact { content(command, path) } else { None };
        found = Some(match text {
            Some(text) => Script::Known(text),
            None => Script::Unknown(super::part::display(command)),
        });
    }
    found
}

/// The text `command` writes at `path`, when its words spell it: `echo … > path`,
/// `cat > path <<EOF`, `tee path <<EOF`.
fn content(command: &SimpleCommand, path: &str) -> Option<String> {
    if command.name == "tee" && command.paths.iter().any(|p| p == path) {
        return command
            .redirects
            .iter()
            .rev()
            .find_map(|r| match r.op.as_str() {
                "<<<" => Some(r.target.clone()),
                op if op.starts_with("<<") => r.body.clone(),
                _ => None,
            });
    }
    command
        .redirects
        .iter()
        .any(|r| r.path == path && matches!(r.op.as_str(), ">" | ">|" | "&>"))
        .then(|| known_output(command))
        .flatten()
}

/// The directory `git clone URL [DIR]` makes.
fn clone_dir(command: &SimpleCommand, home: Option<&str>) -> Option<String> {
    if command.name != "git" || command.args.first().is_none_or(|a| a != "clone") {
        return None;
    }
    let url = command.args.get(1)?;
    let dir = match command.args.get(2) {
        Some(dir) => dir.as_str(),
        None => {
            let last = url.trim_end_matches('/').rsplit(['/', ':']).next()?;
            last.strip_suffix(".git").unwrap_or(last)
        }
    };
    Some(super::normalize::resolve(dir, command.cwd.as_deref(), home))
}

/// A script or program the command runs from a file (`./x`, `bash x.sh`, `. x`, `python3 x.py`)
/// that an earlier command of the line wrote: walked or scanned when the line spells its text,
/// unresolved when it does not.
pub(super) fn runs_written_file(
    walker: &mut Walker,
    index: usize,
    command: &SimpleCommand,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let name = command.name.as_str();
    let program = command.argv.first()?;
    let (file, lang) = if program.contains('/') {
        (program.as_str(), None)
    } else if SHELLS.contains(&name) {
        (shell_script_file(words.get(1..).unwrap_or(&[]))?, None)
    } else if matches!(name, "source" | ".") {
        (command.args.first()?.as_str(), None)
    } else if let Some(lang) = code::language(name)
        && !code::has_code_option(command)
    {
        (command.args.first()?.as_str(), Some(lang))
    } else {
        return None;
    };
    let path = super::normalize::resolve(file, command.cwd.as_deref(), walker.home.as_deref());
    match written(walker, index, &path)? {
        Script::Known(text) => match lang {
            None => {
                nested(walker, &text, cwd, depth);
                None
            }
            Some(lang) => code::scan_into(walker, lang, name, &text, cwd, depth),
        },
        Script::Unknown(writer) => Some(format!(
            "`{name}` runs `{file}`, which `{writer}` wrote earlier on the line, not known until it runs"
        )),
    }
}

/// The script file a shell's operands name (`bash -e x.sh`), when it runs one and not `-c`.
fn shell_script_file(operands: &[Word]) -> Option<&str> {
    let (at, runs_string) = shell_options(operands);
    operands
        .get(at)
        .filter(|_| !runs_string)
        .map(|w| w.text.as_str())
}
