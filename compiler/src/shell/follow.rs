//! Following code where it goes: the script of `bash -c`, the text of `eval`, the command of
//! `find -exec`, commands given as an option's value (`git -c alias.x='!cmd'`, `rg --pre`,
//! `tar --to-command`, `rsync -e`), commands run on another machine (`ssh host cmd`), and
//! scripts fed on standard input to a shell or an interpreter (pipes, heredocs, here-strings).
//! What cannot be read before it runs makes the command unresolved, with the reason.

use super::code;
use super::command::SimpleCommand;
use super::databases::{DATABASES, database, database_input, reads_commands};
use super::environment::environment;
use super::extract::Walker;
use super::launchers::{after_marker, cmake, container, unknown_program};
use super::normalize::{Cwd, normalize_command};
use super::word::Word;
use super::written::runs_written_file;

/// Shells whose `-c` runs a script given as a word, and which read a script on standard input.
pub(super) const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "ash", "fish", "mksh", "yash", "csh", "tcsh", "rbash",
];

/// Git settings whose value is a command git runs (compared in lower case).
const GIT_COMMAND_SETTINGS: &[&str] = &[
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.fsmonitor",
    "core.askpass",
    "core.gitproxy",
    "diff.external",
    "sequence.editor",
    "gpg.program",
    "gpg.ssh.program",
    "uploadpack.packobjectshook",
];

/// The most levels of code inside code (a `python -c` string spelling `bash -c` …) followed
/// before the rest is one unresolved part.
pub(super) const MAX_CODE_DEPTH: usize = 4;

/// Follows what the command at `index` runs in turn, queueing those commands on the walker.
/// Returns why the command itself is unresolved, if following showed it is.
pub(super) fn follow(
    walker: &mut Walker,
    index: usize,
    words: &[Word],
    env: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let command = walker.out.get(index)?.clone();
    let name = command.name.as_str();
    let operands = words.get(1..).unwrap_or(&[]);
    let mut why = environment(walker, env, cwd, depth);
    let own = match name {
        _ if SHELLS.contains(&name) => shell(walker, name, operands, cwd, depth),
        "eval" => {
            let text: Vec<&str> = operands.iter().map(|w| w.text.as_str()).collect();
            nested(walker, &text.join(" "), cwd, depth);
            None
        }
        "source" | "." => operands
            .first()
            .and_then(|script| script.dynamic.as_ref())
            .map(|why| format!("`{name}` runs a script not known until it runs: {why}")),
        "find" => {
            find(walker, &command, operands, cwd, depth);
            None
        }
        "git" => git(walker, &command, words, cwd, depth),
        "ssh" => {
            options_run(walker, &command, &["-o"], cwd, depth);
            (command.args.len() > 1).then(|| {
                format!(
                    "`ssh` runs `{}` on another machine, out of sight",
                    command.args.get(1..).unwrap_or(&[]).join(" ")
                )
            })
        }
        "scp" | "sftp" => {
            options_run(walker, &command, &["-o", "-S"], cwd, depth);
            None
        }

        "tar" => {
            options_run(
                walker,
                &command,
                &[
                    "--to-command",
                    "-I",
                    "--use-compress-program",
                    "--checkpoint-action",
                    "-F",
                    "--info-script",
                    "--new-volume-script",
                    "--rsh-command",
                ],
                cwd,
                depth,
            );
            None
        }

        "go" => {
            options_run(walker, &command, &["-exec", "-toolexec"], cwd, depth);
            None
        }
        name if DATABASES.contains(&name) => {
            database(walker, index, &command);
            None
        }
        "docker" | "podman" | "nerdctl" => {
            container(walker, &command, words, cwd, depth);
            None
        }
        "kubectl" | "oc" => {
            if matches!(
                command.args.first().map(String::as_str),
                Some("exec" | "debug" | "run")
            ) {
                after_marker(walker, &command.name, words, "--", cwd, depth);
            }
            None
        }
        "trap" => {
            // `trap 'cmd' EXIT`: the command runs when the signal comes.
            if command.args.len() >= 2
                && let Some(script) = operands.first()
            {
                nested(walker, &script.text, cwd, depth);
            }
            None
        }
        "alias" => {
            // `alias l='rm -rf ~'`: what the alias stands for runs where it is used.
            for operand in operands {
                if let Some((_, value)) = operand.text.split_once('=') {
                    nested(walker, value, cwd, depth);
                }
            }
            None
        }
        "cmake" => {
            cmake(walker, &command, words, cwd, depth);
            None
        }
        "gdb" | "lldb" | "cgdb" => {
            after_marker(walker, &command.name, words, "--args", cwd, depth);
            None
        }
        _ if code::language(name).is_some() => {
            code::interpreter(walker, &command, words, cwd, depth)
        }
        _ => {
            unknown_program(walker, &command, words, cwd, depth);
            None
        }
    };
    if why.is_none() {
        why = own;
    }
    if why.is_none() {
        why = super::launchers::option_commands(walker, name, words, cwd, depth);
    }
    if why.is_none() {
        why = runs_written_file(walker, index, &command, words, cwd, depth);
    }
    why
}

/// The index after a shell's options, and whether `-c` is among them.
pub(super) fn shell_options(operands: &[Word]) -> (usize, bool) {
    let mut runs_script = false;
    let mut at = 0;
    while let Some(word) = operands.get(at) {
        let text = word.text.as_str();
        if text == "--" || text == "-" {
            at += usize::from(text == "--");
            break;
        }
        let Some(cluster) = text.strip_prefix(['-', '+']).filter(|c| !c.is_empty()) else {
            break;
        };
        at += 1;
        if let Some(long) = cluster.strip_prefix('-') {
            if matches!(long, "rcfile" | "init-file") {
                at += 1;
            }
            continue;
        }
        runs_script |= text.starts_with('-') && cluster.contains('c');
        at += cluster.chars().filter(|c| matches!(c, 'o' | 'O')).count();
    }
    (at, runs_script)
}

/// Walks `words` as a command another one runs, one level down, in a copy of `cwd`: what it
/// changes the directory to stays with it.
pub(super) fn run_words(walker: &mut Walker, words: Vec<Word>, cwd: &Cwd, depth: usize) {
    normalize_command(
        walker,
        words,
        Vec::new(),
        Vec::new(),
        &mut cwd.clone(),
        depth + 1,
    );
}

/// Walks `text` as a script run by the command being followed, one level deeper.
pub(super) fn nested(walker: &mut Walker, text: &str, cwd: &Cwd, depth: usize) {
    walker.script(text, &mut cwd.clone(), depth + 1);
}

/// `bash -c SCRIPT` and `bash SCRIPT_FILE`, with the shell's options read as it reads them: `-o`,
/// `+o`, `-O` and `+O` take the next word (`bash -euo pipefail -c …`), as do `--rcfile` and
/// `--init-file`, and `--` ends them.
fn shell(
    walker: &mut Walker,
    name: &str,
    operands: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let (at, runs_script) = shell_options(operands);
    let script = operands.get(at)?;
    if let Some(why) = &script.dynamic {
        return Some(format!(
            "`{name}` runs a script not known until it runs: {why}"
        ));
    }
    if runs_script {
        nested(walker, &script.text, cwd, depth);
    }
    None
}

/// `find … -exec CMD ;`: the command runs on each path found, which `{}` stands for.
fn find(walker: &mut Walker, command: &SimpleCommand, operands: &[Word], cwd: &Cwd, depth: usize) {
    let start = operands
        .iter()
        .take_while(|w| !w.text.starts_with('-') && w.text != "!" && w.text != "(")
        .next()
        .map_or_else(|| ".".to_string(), |w| w.text.clone());
    // What is found under the start: with a test, what matches it anywhere below
    // (`START/**/NAME`, `START/**`); with none, everything (`START/*`), as `-delete` reads it.
    let under = command
        .options
        .iter()
        .find(|(option, _)| option == "-name" || option == "-iname")
        .map(|(_, name)| format!("**/{name}"))
        .unwrap_or_else(|| {
            if command.options.is_empty() {
                "*"
            } else {
                "**"
            }
            .to_string()
        });
    let found = Word::literal(format!("{}/{under}", start.trim_end_matches('/')));
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
                    found.clone()
                } else {
                    w.clone()
                }
            })
            .collect();
        if !inner.is_empty() {
            run_words(walker, inner, cwd, depth);
        }
        rest = after.get(end + 1..).unwrap_or(&[]);
    }
}

/// `git -c alias.x='!cmd' x`, `git -c core.sshCommand=cmd`, `git grep -O<cmd>`,
/// `git rebase -x cmd`, `git submodule foreach cmd`, `git bisect run cmd`.
fn git(
    walker: &mut Walker,
    command: &SimpleCommand,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let mut why = None;
    for (option, value) in &command.options {
        if option != "-c" {
            continue;
        }
        let Some((key, setting)) = value.split_once('=') else {
            continue;
        };
        let key = key.to_ascii_lowercase();
        if let Some(script) = setting
            .strip_prefix('!')
            .filter(|_| key.starts_with("alias."))
        {
            nested(walker, script, cwd, depth);
        } else if GIT_COMMAND_SETTINGS.contains(&key.as_str())
            || key.starts_with("pager.")
            || (key.starts_with("filter.")
                && [".clean", ".smudge", ".process"]
                    .iter()
                    .any(|s| key.ends_with(s)))
            || (key.starts_with("diff.")
                && [".textconv", ".command"].iter().any(|s| key.ends_with(s)))
            || (key.starts_with("merge.") && key.ends_with(".driver"))
            || (key.starts_with("credential") && setting.starts_with('!'))
        {
            nested(walker, setting.trim_start_matches('!'), cwd, depth);
        } else if key == "core.hookspath" {
            why = Some(format!("`git -c {key}` runs hooks from `{setting}`"));
        }
    }
    let sub = command.args.first().map(String::as_str);
    let after_sub: Vec<&Word> = words
        .iter()
        .skip_while(|w| Some(w.text.as_str()) != sub)
        .skip(1)
        .collect();
    match sub {
        Some("grep") => {
            for word in &after_sub {
                let text = word.text.as_str();
                let pager = text
                    .strip_prefix("--open-files-in-pager")
                    .map(|rest| rest.trim_start_matches('='))
                    .or_else(|| text.strip_prefix("-O"));
                match pager {
                    Some("") => why = Some("`git grep -O` opens the files in a pager".into()),
                    Some(pager) => nested(walker, pager, cwd, depth),
                    None => {}
                }
            }
        }
        Some("rebase" | "difftool" | "filter-branch") => {
            for pair in after_sub.windows(2) {
                if let [option, value] = pair
                    && (matches!(option.text.as_str(), "-x" | "--exec" | "--extcmd")
                        || option.text.ends_with("-filter"))
                {
                    nested(walker, &value.text, cwd, depth);
                }
            }
            for word in &after_sub {
                if let Some(value) = word
                    .text
                    .strip_prefix("--exec=")
                    .or_else(|| word.text.strip_prefix("--extcmd="))
                {
                    nested(walker, value, cwd, depth);
                }
            }
        }
        Some("submodule") if after_sub.first().is_some_and(|w| w.text == "foreach") => {
            let script: Vec<&str> = after_sub
                .iter()
                .skip(1)
                .filter(|w| !w.text.starts_with("--"))
                .map(|w| w.text.as_str())
                .collect();
            nested(walker, &script.join(" "), cwd, depth);
        }
        Some("bisect") if after_sub.first().is_some_and(|w| w.text == "run") => {
            let inner: Vec<Word> = after_sub.iter().skip(1).map(|w| (*w).clone()).collect();
            if !inner.is_empty() {
                run_words(walker, inner, cwd, depth);
            }
        }
        _ => {}
    }
    why
}

/// Options whose value is a command the program runs: `-o ProxyCommand=…` (ssh), `--pre`
/// (rg), `--to-command` and `--checkpoint-action=exec=…` (tar), `-e` (rsync).
fn options_run(
    walker: &mut Walker,
    command: &SimpleCommand,
    which: &[&str],
    cwd: &Cwd,
    depth: usize,
) {
    for (option, value) in &command.options {
        if !which.contains(&option.as_str()) {
            continue;
        }
        let script = match option.as_str() {
            "-o" => {
                let Some((key, value)) = value.split_once(['=', ' ']) else {
                    continue;
                };
                if !matches!(
                    key.to_ascii_lowercase().as_str(),
                    "proxycommand" | "localcommand" | "knownhostscommand"
                ) {
                    continue;
                }
                value
            }
            "--checkpoint-action" => match value.strip_prefix("exec=") {
                Some(script) => script,
                None => continue,
            },
            _ => value.as_str(),
        };
        nested(walker, script, cwd, depth);
    }
}

/// Whether the command reads a script on standard input: a shell with no script operand (or
/// `-s`), `source /dev/stdin`, an interpreter with no program or `-`.
pub(super) fn reads_script(command: &SimpleCommand) -> bool {
    let stdin = |arg: &str| matches!(arg, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    let first = command.args.first().map(String::as_str);
    match command.name.as_str() {
        name if SHELLS.contains(&name) => {
            let runs_string = command
                .flags
                .iter()
                .any(|f| !f.starts_with("--") && f.contains('c'));
            !runs_string && (first.is_none_or(stdin) || command.flags.iter().any(|f| f == "-s"))
        }
        "source" | "." => first.is_some_and(stdin),
        name if code::language(name).is_some() => {
            !code::has_code_option(command) && first.is_none_or(stdin)
        }
        _ => false,
    }
}

/// What a command writes on standard output when it is known from its words: `echo` and
/// `printf` of literal text, `cat` of a heredoc or here-string.
pub(super) fn known_output(command: &SimpleCommand) -> Option<String> {
    let literal = |args: &[String]| {
        let text = args.join(" ");
        (!text.contains('$') && !text.contains('`')).then_some(text)
    };
    match command.name.as_str() {
        "echo" => literal(&command.args),
        "printf" => literal(&command.args).map(|text| text.replace("\\n", "\n")),
        "cat" if command.args.is_empty() => command.redirects.iter().rev().find_map(|r| {
            r.body
                .clone()
                .or_else(|| (r.op == "<<<").then(|| r.target.clone()))
        }),
        _ => None,
    }
}

/// The command at `reader` reads `script` (or, when it is `None`, something unknown) on
/// standard input: a shell's script is walked, an interpreter's code scanned; an unknown script
/// leaves the reader unresolved.
pub(super) fn feed(
    walker: &mut Walker,
    reader: usize,
    script: Option<String>,
    from: &str,
    cwd: &Cwd,
    depth: usize,
) {
    let Some(command) = walker.out.get(reader) else {
        return;
    };
    if let Some(script) = &script
        && DATABASES.contains(&command.name.as_str())
    {
        database_input(walker, reader, script);
        return;
    }
    if script.is_some() && reads_commands(command) {
        let why = format!(
            "`{}` runs commands read from {from}, which Sluice does not read",
            command.name
        );
        if let Some(command) = walker.out.get_mut(reader) {
            command.mark_unresolved(why);
        }
        return;
    }
    if !reads_script(command) {
        return;
    }
    let name = command.name.clone();
    match script {
        Some(script)
            if SHELLS.contains(&name.as_str()) || matches!(name.as_str(), "source" | ".") =>
        {
            nested(walker, &script, cwd, depth);
        }
        Some(script) => {
            let lang = code::language(&name);
            if let Some(lang) = lang
                && let Some(why) = code::scan_into(walker, lang, &name, &script, cwd, depth)
                && let Some(command) = walker.out.get_mut(reader)
            {
                command.mark_unresolved(why);
            }
        }
        None => {
            if let Some(command) = walker.out.get_mut(reader) {
                command.mark_unresolved(format!(
                    "`{name}` runs a script read from {from}, not known until it runs"
                ));
            }
        }
    }
}

/// Feeds the command at `reader` the heredoc or here-string among `redirects` (the last one
/// wins, as in the shell), when it reads a script on standard input.
pub(super) fn feed_redirects(
    walker: &mut Walker,
    reader: usize,
    redirects: &[super::command::Redirect],
    cwd: &Cwd,
    depth: usize,
) {
    let script = redirects.iter().rev().find_map(|r| match r.op.as_str() {
        "<<<" => Some(r.target.clone()),
        op if op.starts_with("<<") => Some(r.body.clone().unwrap_or_default()),
        _ => None,
    });
    if let Some(script) = script {
        feed(walker, reader, Some(script), "a heredoc", cwd, depth);
    }
}

/// The command at `reader` is on the reading side of a pipe from the one at `feeder`.
pub(super) fn pipe(
    walker: &mut Walker,
    feeder: Option<usize>,
    reader: usize,
    cwd: &Cwd,
    depth: usize,
) {
    let script = feeder
        .and_then(|f| walker.out.get(f))
        .and_then(known_output);
    feed(walker, reader, script, "a pipe", cwd, depth);
}
