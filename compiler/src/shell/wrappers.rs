//! Wrappers: programs that run the command after them (`sudo`, `env`, `timeout 5`, `stdbuf -o0`,
//! `flock FILE`, `su -c 'cmd'`, `watch 'cmd'`). Each is stripped from the front of a command and
//! remembered, with its options read as it reads them (which take a value, how many positional
//! words come before the command), so the real program is what a rule sees.

use super::command::SimpleCommand;
use super::normalize::resolve;
use super::word::Word;
use super::wrapper_table::WRAPPERS;

/// Where the subcommand `sub` of a runner is among `words`, after the options before it (and
/// their values); `0` stands for "not there", since `words[0]` is the program.
fn subcommand_at(words: &[Word], sub: &str, values: &[&str]) -> Option<usize> {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        if word.text == sub {
            return Some(at);
        }
        if !word.text.starts_with('-') {
            return None;
        }
        let key = word.text.split('=').next().unwrap_or(&word.text);
        at += if values.contains(&key) && !word.text.contains('=') {
            2
        } else {
            1
        };
    }
    None
}

/// Whether `name` is a wrapper Sluice strips.
pub(super) fn is_wrapper(name: &str) -> bool {
    WRAPPERS.iter().any(|w| w.names.contains(&name))
}

/// Whether a wrapper's option names the directory the command runs in.
fn changes_directory(wrapper: &str, option: &str) -> bool {
    matches!(
        (wrapper, option),
        ("env", "-C" | "--chdir")
            | ("sudo", "-D" | "--chdir")
            | ("doas", "-C")
            | ("systemd-run", "--working-directory")
            | ("nsenter" | "unshare", "-w" | "--wd")
            | ("npm", "--prefix" | "-C")
            | ("pnpm" | "yarn" | "bun", "-C" | "--dir" | "--cwd")
    )
}

/// The file name of a program word: `/usr/bin/rm` is `rm`.
pub(super) fn program_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

/// `NAME=VALUE` with a shell variable name.
pub(super) fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A script a wrapper runs, as the words `sh -c SCRIPT` that run it the same way.
fn as_shell(script: Word) -> Vec<Word> {
    vec![Word::literal("sh"), Word::literal("-c"), script]
}

/// Words joined by spaces into one script, dynamic when any of them is.
fn joined(words: &[Word]) -> Word {
    let mut out = Word::default();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.text.push(' ');
        }
        out.text.push_str(&word.text);
        if out.dynamic.is_none() {
            out.dynamic.clone_from(&word.dynamic);
        }
    }
    out
}

/// The script a script option at `words[at]` gives, and how many words it took: `-c CMD`,
/// `-cCMD`, `-qc CMD` (a cluster ending in the option's letter) and `--command=CMD`.
fn script_value(options: &[&str], words: &[Word], at: usize) -> Option<(Word, usize)> {
    let word = words.get(at)?;
    let text = word.text.as_str();
    let with = |value: &str| Word {
        text: value.to_string(),
        ..word.clone()
    };
    for option in options {
        if let Some(long) = option.strip_prefix("--") {
            if text == *option {
                return Some((words.get(at + 1).cloned().unwrap_or_default(), 2));
            }
            if let Some(value) = text
                .strip_prefix("--")
                .and_then(|t| t.strip_prefix(long))
                .and_then(|t| t.strip_prefix('='))
            {
                return Some((with(value), 1));
            }
            continue;
        }
        let letter = option.trim_start_matches('-');
        let Some(cluster) = text.strip_prefix('-').filter(|t| !t.starts_with('-')) else {
            continue;
        };
        if cluster == letter
            || (cluster.ends_with(letter)
                && cluster.chars().all(|c| c.is_ascii_alphabetic())
                && cluster.len() <= 4)
        {
            return Some((words.get(at + 1).cloned().unwrap_or_default(), 2));
        }
        if let Some(value) = cluster.strip_prefix(letter).filter(|v| !v.is_empty()) {
            return Some((with(value), 1));
        }
    }
    None
}

/// Strips the wrappers at the front of `words`, remembering them and the assignments `env` makes.
pub(super) fn strip_wrappers(
    words: &mut Vec<Word>,
    env: &mut Vec<Word>,
    command: &mut SimpleCommand,
    home: Option<&str>,
) {
    // Each round strips one wrapper word or more, so this ends; the cap guards the rewrite to
    // `sh -c`, which a hostile line could otherwise make spin (`su -c 'su -c …'` is followed as
    // nested scripts, not here).
    for _ in 0..64 {
        let Some(first) = words.first() else { return };
        if first.dynamic.is_some() {
            return;
        }
        let name = program_name(&first.text).to_string();
        let Some((wrapper, sub_at)) = WRAPPERS.iter().find_map(|w| {
            if !w.names.contains(&name.as_str()) {
                return None;
            }
            match w.subcommand {
                None => Some((w, 0)),
                Some(sub) => subcommand_at(words, sub, w.options_with_value).map(|at| (w, at)),
            }
        }) else {
            return;
        };
        // `npm --prefix ~ exec CMD`: the options before the subcommand may move the directory.
        for at in 1..sub_at {
            let (Some(word), next) = (words.get(at), words.get(at + 1)) else {
                break;
            };
            let key = word.text.split('=').next().unwrap_or(&word.text);
            if changes_directory(&name, key) {
                let dir = word
                    .text
                    .split_once('=')
                    .map(|(_, d)| d.to_string())
                    .or_else(|| next.map(|w| w.text.clone()));
                if let Some(dir) = dir {
                    command.cwd = Some(resolve(&dir, command.cwd.as_deref(), home));
                }
            }
        }
        let mut rest = 1 + sub_at;
        let mut executes_words = false;
        let mut replace: Option<String> = None;
        let mut positional = wrapper.positional;
        let mut script: Option<Word> = None;
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
            if name == "command" && matches!(text, "-v" | "-V") {
                // `command -v x` only says where `x` is.
                return;
            }
            if text.starts_with('-') && text.len() > 1 {
                let key = text.split('=').next().unwrap_or(text);
                if let Some((value, used)) = script_value(wrapper.script_options, words, rest) {
                    script = Some(value);
                    if name == "env" {
                        // `env -S 'a b' c` runs the words of its string, then the rest.
                        let mut all = vec![script.take().unwrap_or_default()];
                        all.extend(words.get(rest + used..).unwrap_or(&[]).iter().cloned());
                        script = Some(joined(&all));
                    }
                    break;
                }
                let takes_value = wrapper.options_with_value.contains(&key) && !text.contains('=');
                executes_words |= name == "watch" && matches!(text, "-x" | "--exec");
                if name == "xargs" {
                    replace = replace_string(text, words.get(rest + 1).map(|w| w.text.as_str()))
                        .or(replace);
                }
                if changes_directory(&name, key) {
                    let dir = match text.split_once('=') {
                        Some((_, dir)) => Some(dir.to_string()),
                        None => words.get(rest + 1).map(|w| w.text.clone()),
                    };
                    if let Some(dir) = dir {
                        command.cwd = Some(resolve(&dir, command.cwd.as_deref(), home));
                    }
                }
                rest += if takes_value { 2 } else { 1 };
                continue;
            }
            if positional > 0 || wrapper.needs_script {
                // `su root -c CMD`: a user name before the script option.
                positional = positional.saturating_sub(1);
                rest += 1;
                continue;
            }
            break;
        }
        if script.is_none() && (wrapper.needs_script || (rest >= words.len() && name != "xargs")) {
            // `su root`, and a wrapper with no command after it (`env`, `time`): the wrapper is
            // the program.
            return;
        }
        command.wrappers.push(name.clone());
        if let Some(script) = script {
            *words = as_shell(script);
            return;
        }
        let mut inner = words.split_off(rest.min(words.len()));
        if wrapper.joins && !executes_words {
            // `parallel CMD ::: A B`: each argument after `:::` is put in for `{}`, or after
            // the command; all of them at once stand for every run.
            let mut given = Vec::new();
            if let Some(end) = inner.iter().position(|w| w.text.starts_with(":::")) {
                given = inner.split_off(end);
                given.retain(|w| !w.text.starts_with(":::"));
            }
            if !inner.is_empty() {
                let mut script = joined(&inner);
                if !given.is_empty() {
                    let arguments = joined(&given);
                    if script.text.contains("{}") {
                        script.text = script.text.replace("{}", &arguments.text);
                    } else {
                        script.text = format!("{} {}", script.text, arguments.text);
                    }
                    if script.dynamic.is_none() {
                        script.dynamic = arguments.dynamic;
                    }
                }
                inner = as_shell(script);
            }
        }
        *words = inner;
        if name == "xargs" || name == "parallel" {
            from_input(words, replace.as_deref(), &name);
        }
        if words.is_empty() && name == "xargs" {
            // `xargs` with no command runs `echo`.
            words.push(Word::literal("echo"));
        }
    }
    command.mark_unresolved("more wrappers than can be followed");
}

/// The string `xargs -I R` (or `-iR`, `--replace=R`, `-i`) replaces with each line it reads.
fn replace_string(option: &str, next: Option<&str>) -> Option<String> {
    match option {
        "-I" => next.map(str::to_string),
        "-i" | "--replace" => Some("{}".to_string()),
        _ => option
            .strip_prefix("--replace=")
            .or_else(|| option.strip_prefix("-I"))
            .or_else(|| option.strip_prefix("-i"))
            .filter(|r| !r.is_empty())
            .map(str::to_string),
    }
}

/// What `xargs` and `parallel` put in the command's words comes from their input: a word holding
/// the replace string is not known until it runs, and a shell given `-c` with no script takes
/// the first line read as its script.
fn from_input(words: &mut [Word], replace: Option<&str>, name: &str) {
    let why = format!("`{name}` fills it in from what it reads");
    let replace = replace.or((name == "parallel").then_some("{}"));
    for word in words.iter_mut().skip(1) {
        if replace.is_some_and(|r| !r.is_empty() && word.text.contains(r)) && word.dynamic.is_none()
        {
            word.dynamic = Some(why.clone());
        }
    }
    let Some(program) = words.first() else { return };
    let shell = super::follow::SHELLS.contains(&program_name(&program.text));
    let script_follows = words
        .iter()
        .skip(1)
        .position(|w| !w.text.starts_with('-'))
        .is_some();
    if shell
        && !script_follows
        && words.iter().any(|w| w.text == "-c")
        && let Some(program) = words.first_mut()
    {
        program.dynamic.get_or_insert(why);
    }
}
