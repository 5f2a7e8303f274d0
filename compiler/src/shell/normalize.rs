//! From words to a command as it runs: wrappers stripped, scripts given to `bash -c` and commands
//! given to `find -exec` followed, flags split, operands resolved as paths, `cd` followed.

use super::command::{Redirect, SimpleCommand};
use super::extract::Walker;
use super::word::Word;
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

/// How a wrapper takes its options: those that take a value, and whether a positional word (the
/// duration of `timeout`) comes before the command.
struct Wrapper {
    name: &'static str,
    options_with_value: &'static [&'static str],
    positional: usize,
    /// Whether `NAME=VALUE` words before the command set its environment.
    assignments: bool,
}

/// The wrappers that run the command that follows them.
const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "sudo",
        options_with_value: &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U"],
        positional: 0,
        assignments: true,
    },
    Wrapper {
        name: "doas",
        options_with_value: &["-u", "-C"],
        positional: 0,
        assignments: false,
    },
    Wrapper {
        name: "env",
        options_with_value: &["-u", "-C", "--unset", "--chdir"],
        positional: 0,
        assignments: true,
    },
    Wrapper {
        name: "nice",
        options_with_value: &["-n", "--adjustment"],
        positional: 0,
        assignments: false,
    },
    Wrapper {
        name: "timeout",
        options_with_value: &["-s", "-k", "--signal", "--kill-after"],
        positional: 1,
        assignments: false,
    },
    Wrapper {
        name: "nohup",
        options_with_value: &[],
        positional: 0,
        assignments: false,
    },
    Wrapper {
        name: "command",
        options_with_value: &[],
        positional: 0,
        assignments: false,
    },
    Wrapper {
        name: "exec",
        options_with_value: &["-a"],
        positional: 0,
        assignments: false,
    },
    Wrapper {
        name: "xargs",
        options_with_value: &[
            "-a",
            "-d",
            "-E",
            "-e",
            "-I",
            "-L",
            "-l",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--replace",
        ],
        positional: 0,
        assignments: false,
    },
];

/// Shells whose `-c` runs a script given as a word.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "ash", "fish"];

/// The file name of a program word: `/usr/bin/rm` is `rm`.
fn program_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
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
    let mut words = words;
    if words.len() > MAX_WORDS {
        // Every word costs each per-part rule that reads the command: past the cap the command
        // is unresolved (asked about), judged on its first words only.
        words.truncate(MAX_WORDS);
        command.mark_unresolved(format!("the command has more than {MAX_WORDS} words"));
    }
    strip_wrappers(&mut words, &mut env, &mut command);
    for assignment in &env {
        command.env.push(assignment.text.clone());
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
    split_arguments(
        &mut command,
        words.get(1..).unwrap_or(&[]),
        cwd.as_deref(),
        home,
    );
    let name = command.name.clone();
    if name == "eval" {
        command.mark_unresolved("`eval` runs text as a command");
    }
    let index = walker.out.len();
    walker.push(command);
    if let Some(reason) = follow(walker, &name, &words, cwd, depth)
        && let Some(command) = walker.out.get_mut(index)
    {
        command.mark_unresolved(reason);
    }
    if name == "cd" {
        *cwd = change_directory(&words, cwd, walker.home.as_deref());
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

/// Strips the wrappers at the front of `words`, remembering them and the assignments `env` makes.
fn strip_wrappers(words: &mut Vec<Word>, env: &mut Vec<Word>, command: &mut SimpleCommand) {
    loop {
        let Some(first) = words.first() else { return };
        if first.dynamic.is_some() {
            return;
        }
        let name = program_name(&first.text);
        let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == name) else {
            return;
        };
        let mut rest = 1;
        let mut positional = wrapper.positional;
        while let Some(word) = words.get(rest) {
            let text = word.text.as_str();
            if text == "--" {
                rest += 1;
                break;
            }
            if wrapper.assignments && is_assignment(text) {
                env.push(word.clone());
                rest += 1;
                continue;
            }
            if wrapper.name == "command" && matches!(text, "-v" | "-V") {
                // `command -v x` only says where `x` is.
                return;
            }
            if wrapper.name == "env"
                && (text.starts_with("-S") || text.starts_with("--split-string"))
            {
                command.mark_unresolved("`env -S` splits a word into the command it runs");
            }
            if text.starts_with('-') && text.len() > 1 {
                let key = text.split('=').next().unwrap_or(text);
                let takes_value = wrapper.options_with_value.contains(&key) && !text.contains('=');
                rest += if takes_value { 2 } else { 1 };
                continue;
            }
            if positional > 0 {
                positional -= 1;
                rest += 1;
                continue;
            }
            break;
        }
        command.wrappers.push(name.to_string());
        let inner = words.split_off(rest.min(words.len()));
        *words = inner;
        if words.is_empty() && wrapper.name == "xargs" {
            // `xargs` with no command runs `echo`.
            words.push(Word::literal("echo"));
        }
    }
}

/// Flags, operands and their paths.
fn split_arguments(
    command: &mut SimpleCommand,
    words: &[Word],
    cwd: Option<&str>,
    home: Option<&str>,
) {
    let mut options_ended = false;
    for word in words {
        let text = word.text.as_str();
        if options_ended || text == "-" || !text.starts_with('-') || is_negative_number(text) {
            command.args.push(text.to_string());
            command.paths.push(resolve(text, cwd, home));
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            match long.split_once('=') {
                Some((key, value)) => {
                    command.flags.push(format!("--{key}"));
                    command.args.push(value.to_string());
                    command.paths.push(resolve(value, cwd, home));
                }
                None => command.flags.push(text.to_string()),
            }
            continue;
        }
        command.flags.push(text.to_string());
        let letters = text.strip_prefix('-').unwrap_or(text);
        if letters.chars().count() > 1 && letters.chars().all(|c| c.is_ascii_alphanumeric()) {
            command
                .flags
                .extend(letters.chars().map(|c| format!("-{c}")));
        }
    }
}

/// `NAME=VALUE` with a shell variable name.
fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_negative_number(text: &str) -> bool {
    text.strip_prefix('-')
        .is_some_and(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
}

/// What `cd` leaves as the working directory.
fn change_directory(words: &[Word], cwd: &Cwd, home: Option<&str>) -> Cwd {
    let target = words
        .iter()
        .skip(1)
        .find(|w| !w.text.starts_with('-') || w.text == "-");
    match target {
        None => Some(home.unwrap_or("~").to_string()),
        Some(word) if word.dynamic.is_some() || word.text == "-" => None,
        Some(word) => Some(resolve(&word.text, cwd.as_deref(), home)),
    }
}

/// Follows what the command runs in turn — the script of `bash -c`, the command of
/// `find -exec`, the text of `eval` — queueing those commands on the walker. Returns why the
/// command itself is unresolved, if following showed it is.
fn follow(
    walker: &mut Walker,
    name: &str,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let operands = words.get(1..).unwrap_or(&[]);
    if SHELLS.contains(&name) {
        let runs_script = operands
            .iter()
            .take_while(|w| w.text.starts_with('-'))
            .any(|w| !w.text.starts_with("--") && w.text.contains('c'));
        if !runs_script {
            return None;
        }
        let script = operands.iter().find(|w| !w.text.starts_with('-'))?;
        if let Some(why) = &script.dynamic {
            return Some(format!(
                "`{name} -c` runs a script not known until it runs: {why}"
            ));
        }
        walker.script(&script.text, &mut cwd.clone(), depth + 1);
        return None;
    }
    if name == "eval" {
        let text: Vec<&str> = operands.iter().map(|w| w.text.as_str()).collect();
        walker.script(&text.join(" "), &mut cwd.clone(), depth + 1);
        return None;
    }
    if name == "find" {
        // `{}` stands for each path found, the starting points included.
        let start = operands
            .iter()
            .take_while(|w| !w.text.starts_with('-') && w.text != "!" && w.text != "(")
            .next()
            .cloned()
            .unwrap_or_else(|| Word::literal("."));
        let mut rest = operands;
        while let Some(at) = rest
            .iter()
            .position(|w| matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
        {
            let after = rest.get(at + 1..).unwrap_or(&[]);
            let end = after
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .unwrap_or(after.len());
            let inner: Vec<Word> = after
                .get(..end)
                .unwrap_or(&[])
                .iter()
                .map(|w| {
                    if w.text == "{}" {
                        start.clone()
                    } else {
                        w.clone()
                    }
                })
                .collect();
            if !inner.is_empty() {
                normalize_command(
                    walker,
                    inner,
                    Vec::new(),
                    Vec::new(),
                    &mut cwd.clone(),
                    depth + 1,
                );
            }
            rest = after.get(end + 1..).unwrap_or(&[]);
        }
    }
    None
}
