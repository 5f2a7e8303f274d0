//! From words to a command as it runs: wrappers stripped, scripts given to `bash -c` and commands
//! given to `find -exec` followed, flags split, operands resolved as paths, `cd` followed.

use super::command::{Redirect, SimpleCommand};
use super::extract::Walker;
use super::follow::follow;
use super::options;
use super::word::Word;
use super::wrappers::{program_name, strip_wrappers};
use crate::interp::path;

/// The working directory as far as it is known.
pub type Cwd = Option<String>;

/// The longest working directory a line's `cd`s may build (see lang-spec/evaluation.md).
pub const MAX_CWD: usize = 4_096;

/// The most words one simple command may have (see lang-spec/evaluation.md).
pub const MAX_WORDS: usize = 1_024;

/// `text` as a path, resolved lexically against `cwd` when it is known. `~`, `~/…` and a leading
/// `$HOME` or `${HOME}` (the one variable whose meaning policies know) are the home directory:
/// joined to `home` when the policy gives it (`shell(line, cwd, home)`), so `rm -rf ~/..` deletes
/// `/home`, and otherwise kept as `~`, so `rm -rf $HOME` deletes `~`. `~user` is left as written.
pub fn resolve(text: &str, cwd: Option<&str>, home: Option<&str>) -> String {
    let from_home = ["${HOME}", "$HOME", "~"]
        .iter()
        .find_map(|variable| text.strip_prefix(variable))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'));
    match (from_home, home) {
        (Some(rest), Some(home)) => path::normalize(&format!("{home}{rest}"), cwd),
        (Some(rest), None) => path::normalize(&format!("~{rest}"), cwd),
        (None, _) => path::normalize(text, cwd),
    }
}

/// Normalizes one command's words and pushes it, then the commands it runs in turn.
pub(super) fn normalize_command(
    walker: &mut Walker,
    words: Vec<Word>,
    mut env: Vec<Word>,
    redirects: Vec<Redirect>,
    cwd: &mut Cwd,
    depth: usize,
) {
    if !walker.within(depth) {
        return;
    }
    let mut command = SimpleCommand {
        redirects,
        cwd: cwd.clone(),
        ..SimpleCommand::default()
    };
    let mut words: Vec<Word> = if words.iter().any(|w| w.brace) {
        words.iter().flat_map(super::word::expand_braces).collect()
    } else {
        words
    };
    if words.len() > MAX_WORDS {
        // Every word costs each per-part rule that reads the command: past the cap the command
        // is unresolved (asked about), judged on its first words only.
        words.truncate(MAX_WORDS);
        command.mark_unresolved(format!("the command has more than {MAX_WORDS} words"));
    }
    strip_wrappers(&mut words, &mut env, &mut command, walker.home.as_deref());
    for assignment in &env {
        command.env.push(assignment.text.clone());
    }
    if let Some(why) = lookalike(&words) {
        command.mark_unresolved(why);
    }
    match words.first() {
        Some(first) if first.dynamic.is_some() || first.glob => {
            let why = first
                .dynamic
                .clone()
                .unwrap_or_else(|| format!("`{}` is a glob", first.text));
            command.mark_unresolved(format!("the program is not known until it runs: {why}"));
        }
        Some(first) => command.name = program_name(&first.text).to_string(),
        None => {}
    }
    command.argv = words.iter().map(|w| w.text.clone()).collect();
    let home = walker.home.as_deref();
    split_arguments(&mut command, words.get(1..).unwrap_or(&[]), home);
    let name = command.name.clone();
    if name == "eval" {
        command.mark_unresolved("`eval` runs text as a command");
    }
    let index = walker.out.len();
    walker.push(command);
    if walker.out.len() > index
        && let Some(reason) = follow(walker, index, &words, &env, cwd, depth)
        && let Some(command) = walker.out.get_mut(index)
    {
        command.mark_unresolved(reason);
    }
    if walker.out.len() > index {
        walker.last = Some(index);
    }
    if name == "popd" {
        *cwd = None;
    }
    if name == "cd" || name == "pushd" {
        *cwd = change_directory(&words, cwd, walker.home.as_deref());
        if env
            .iter()
            .any(|assignment| assignment.text.starts_with("CDPATH="))
        {
            // `CDPATH=/ cd etc` goes to `/etc` when there is one: where it goes is not known.
            *cwd = None;
        }
        if cwd.as_ref().is_some_and(|c| c.len() > MAX_CWD) {
            // No real directory has such a path (Linux's PATH_MAX is 4096), and a `cd` chain
            // growing it would make every later path cost its length: the `cd` is unresolved and
            // the rest of the line runs in an unknown directory.
            *cwd = None;
            if let Some(command) = walker.out.get_mut(index) {
                command.mark_unresolved(format!(
                    "`cd` makes the working directory longer than {MAX_CWD} bytes"
                ));
            }
        }
    }
}

/// Programs whose first operand is a pattern or a script, unless an option gives it.
const SCRIPT_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "sed", "gsed", "awk", "gawk", "mawk",
    "nawk", "jq", "gojq", "jaq", "yq",
];

/// The options that give those programs their pattern or script instead.
const SCRIPT_OPTIONS: &[&str] = &[
    "-e",
    "-f",
    "--regexp",
    "--file",
    "--expression",
    "--from-file",
];

/// A long option written as an abbreviation: each option it abbreviates is added to the flags,
/// and the one it is read as when a value follows (the first that takes one) is returned.
fn abbreviated(
    command: &mut SimpleCommand,
    known: &options::ProgramOptions,
    written: &str,
) -> Option<String> {
    let completions = known.completions(written);
    command
        .flags
        .extend(completions.iter().map(|option| option.to_string()));
    completions
        .into_iter()
        .find(|option| known.value.contains(option))
        .map(str::to_string)
}

/// Flags, operands, the values of options known to take one, and the operands' paths, resolved
/// in the directory an option such as `git -C` names, which becomes the command's `cwd`.
fn split_arguments(command: &mut SimpleCommand, words: &[Word], home: Option<&str>) {
    // `tar czf a.tgz src`: tar's first word is its options even without a dash.
    let dashed;
    let words = match words.split_first() {
        Some((first, rest))
            if command.name == "tar"
                && !first.text.starts_with('-')
                && !first.text.is_empty()
                && first
                    .text
                    .chars()
                    .all(|c| "AcdtruxzjJvfpkOmwWlSGhbCTXZaPR".contains(c)) =>
        {
            dashed = std::iter::once(Word::literal(format!("-{}", first.text)))
                .chain(rest.iter().cloned())
                .collect::<Vec<_>>();
            dashed.as_slice()
        }
        _ => words,
    };
    let cwd = command.cwd.clone();
    let cwd = cwd.as_deref();
    let known = options::of(&command.name);
    let takes = |option: &str| known.value.contains(&option);
    let mut options_ended = false;
    let mut pending: Option<String> = None;
    for word in words {
        let text = word.text.as_str();
        if let Some(option) = pending.take() {
            command.options.push((option, text.to_string()));
            continue;
        }
        if options_ended || text == "-" || !text.starts_with('-') || is_negative_number(text) {
            command.args.push(text.to_string());
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        if let Some((key, value)) = text.split_once('=') {
            // `--key=value`, and the single-dash long options of `terraform -chdir=DIR`.
            if key.starts_with("--") || takes(key) {
                command.flags.push(key.to_string());
                let read_as = abbreviated(command, known, key).unwrap_or_else(|| key.to_string());
                if takes(&read_as) {
                    command.options.push((read_as, value.to_string()));
                } else {
                    command.args.push(value.to_string());
                }
                continue;
            }
        }
        command.flags.push(text.to_string());
        if text.starts_with("--") || takes(text) {
            let read_as = abbreviated(command, known, text).unwrap_or_else(|| text.to_string());
            if takes(&read_as) {
                pending = Some(read_as);
            }
            continue;
        }
        let letters = text.strip_prefix('-').unwrap_or(text);
        let mut chars = letters.chars();
        if let Some(first) = chars.next() {
            let short = format!("-{first}");
            let rest = chars.as_str();
            if !rest.is_empty() && takes(&short) {
                // `-n5`, `-C/dir`, `-oProxyCommand=…`: the value follows the letter.
                command.flags.push(short.clone());
                command.options.push((short, rest.to_string()));
                continue;
            }
        }
        if letters.chars().count() > 1 && letters.chars().all(|c| c.is_ascii_alphanumeric()) {
            command
                .flags
                .extend(letters.chars().map(|c| format!("-{c}")));
            // `curl -fsSLo FILE`: a cluster's last letter may take the next word.
            if let Some(last) = letters.chars().last().map(|c| format!("-{c}"))
                && takes(&last)
            {
                pending = Some(last);
            }
        }
    }
    if SCRIPT_FIRST.contains(&command.name.as_str())
        && !command
            .options
            .iter()
            .any(|(option, _)| SCRIPT_OPTIONS.contains(&option.as_str()))
        && !command
            .flags
            .iter()
            .any(|f| f == "--files" || f == "--type-list")
        && !command.args.is_empty()
    {
        // `grep PATTERN FILE…`, `sed SCRIPT FILE…`: the first operand is no file.
        let script = command.args.remove(0);
        command.options.push(("-e".to_string(), script));
    }
    let chdir = command
        .options
        .iter()
        .rev()
        .find(|(option, _)| known.cwd.contains(&option.as_str()))
        .map(|(_, dir)| resolve(dir, cwd, home));
    if let Some(dir) = chdir {
        command.cwd = Some(dir);
    }
    let cwd = command.cwd.clone();
    command.paths = command
        .args
        .iter()
        .map(|arg| resolve(arg, cwd.as_deref(), home))
        .collect();
}

fn is_negative_number(text: &str) -> bool {
    text.strip_prefix('-')
        .is_some_and(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
}

/// What `cd` (or `pushd`) leaves as the working directory.
fn change_directory(words: &[Word], cwd: &Cwd, home: Option<&str>) -> Cwd {
    let target = words
        .iter()
        .skip(1)
        .find(|w| !w.text.starts_with('-') || w.text == "-");
    match target {
        None => Some(home.unwrap_or("~").to_string()),
        Some(word) if word.dynamic.is_some() || word.text == "-" || word.text.starts_with('+') => {
            None
        }
        Some(word) => Some(resolve(&word.text, cwd.as_deref(), home)),
    }
}

/// Characters that show as nothing: the shell keeps them in the word, a reader never sees them.
fn invisible(c: char) -> bool {
    matches!(c, '\r' | '\u{ad}' | '\u{34f}' | '\u{115f}' | '\u{1160}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}' | '\u{e0000}'..='\u{e007f}')
}

/// Characters the shell does not split on or read as syntax, but a reader takes for a space or
/// for the path characters `/`, `~`, `.`, `*`, `?` and `$` (full-width and other forms).
fn path_lookalike(c: char) -> bool {
    matches!(
        c,
        '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{ff0f}'
                | '\u{ff5e}'
                | '\u{ff0e}'
                | '\u{ff0a}'
                | '\u{ff1f}'
                | '\u{ff04}'
                | '\u{2215}'
                | '\u{2044}'
                | '\u{29f8}'
                | '\u{301c}'
                | '\u{2024}'
                | '\u{ff3c}'
    )
}

/// A Greek, Cyrillic or Armenian letter in a word that also holds a Latin one (`lodаsh` with a
/// Cyrillic `а`, `gіt.example`): the classic homoglyph of a package or a host name. Words of
/// one script alone, as in a message in Russian or Greek, are text.
fn mixed_script(text: &str) -> Option<char> {
    let foreign = |c: char| (0x0370..=0x058F).contains(&u32::from(c));
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|piece| piece.chars().any(|c| c.is_ascii_alphabetic()))
        .find_map(|piece| piece.chars().find(|c| foreign(*c)))
}

/// Dashes that look like `-` but that no program reads as one.
fn dash_lookalike(c: char) -> bool {
    matches!(
        c,
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}'
    )
}

/// Why the words are not what they look like: invisible characters or a carriage return
/// anywhere, lookalikes of a space or of a path character (`／`, `～`, a no-break space) in any
/// word, a program name that is not plain ASCII (full-width or Cyrillic letters), or a word that
/// starts with a lookalike of `-`. The shell reads each of them literally, so the
/// part is unresolved rather than read as what it resembles.
fn lookalike(words: &[Word]) -> Option<String> {
    let code = |c: char| format!("U+{:04X}", u32::from(c));
    for word in words {
        if let Some(c) = word.text.chars().find(|c| invisible(*c)) {
            return Some(format!(
                "`{}` holds an invisible character ({})",
                word.text,
                code(c)
            ));
        }
        if let Some(c) = word.text.chars().find(|c| path_lookalike(*c)) {
            return Some(format!(
                "`{}` holds {}, which looks like a space or a path character but is not one",
                word.text,
                code(c)
            ));
        }
        if let Some(c) = mixed_script(&word.text) {
            return Some(format!(
                "`{}` mixes Latin letters with {}, a letter of another script that looks like one",
                word.text,
                code(c)
            ));
        }
        if let Some(c) = word.text.chars().next().filter(|c| dash_lookalike(*c)) {
            return Some(format!(
                "`{}` starts with {}, which looks like `-` but is not one",
                word.text,
                code(c)
            ));
        }
    }
    let program = words.first()?;
    // No program a developer runs has a name outside ASCII; one that does looks like one that
    // does not (`ѕh` with a Cyrillic `ѕ`).
    let odd = program.text.chars().find(|c| !c.is_ascii())?;
    Some(format!(
        "the program `{}` holds {}, a lookalike of a plain character",
        program.text,
        code(odd)
    ))
}
