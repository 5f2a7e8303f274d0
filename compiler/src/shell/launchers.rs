//! Programs that run a command given as their operands or as an option's value: containers
//! (`docker run IMAGE CMD`, `kubectl exec POD -- CMD`), debuggers (`gdb --args CMD`), `cmake -E`,
//! options that name a command (`git --upload-pack=CMD`, `rsync --rsync-path=CMD`) or load code
//! (`make --eval`, `openssl -engine`), and programs Sluice knows nothing of, which may be
//! wrappers it has not heard of.

use super::code;
use super::command::SimpleCommand;
use super::extract::Walker;
use super::follow::{SHELLS, nested, run_words};
use super::normalize::Cwd;
use super::word::Word;

/// Walks the words after `marker` (`kubectl exec pod -- CMD`, `gdb --args CMD`) as the
/// command `program` runs.
pub(super) fn after_marker(
    walker: &mut Walker,
    program: &str,
    words: &[Word],
    marker: &str,
    cwd: &Cwd,
    depth: usize,
) {
    let Some(at) = words.iter().position(|w| w.text == marker) else {
        return;
    };
    run_rest(walker, program, words, at + 1, cwd, depth);
}

/// Walks `words[from..]` as a command `program` runs.
fn run_rest(
    walker: &mut Walker,
    program: &str,
    words: &[Word],
    from: usize,
    cwd: &Cwd,
    depth: usize,
) {
    run_as(
        walker,
        program,
        words.get(from..).unwrap_or(&[]).to_vec(),
        cwd,
        depth,
    );
}

/// Walks `words` as a command `program` runs, remembering it as the command's wrapper.
fn run_as(walker: &mut Walker, program: &str, words: Vec<Word>, cwd: &Cwd, depth: usize) {
    if words.is_empty() {
        return;
    }
    let first = walker.out.len();
    run_words(walker, words, cwd, depth);
    for command in walker.out.iter_mut().skip(first) {
        command.wrappers.insert(0, program.to_string());
    }
}

/// Options of `docker run` and `docker exec` that take the next word as their value.
const CONTAINER_VALUES: &[&str] = &[
    "-v",
    "--volume",
    "-w",
    "--workdir",
    "-e",
    "--env",
    "--env-file",
    "-u",
    "--user",
    "--name",
    "--entrypoint",
    "--network",
    "--net",
    "-p",
    "--publish",
    "--mount",
    "--platform",
    "-l",
    "--label",
    "--restart",
    "-h",
    "--hostname",
    "--cpus",
    "-m",
    "--memory",
    "--device",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--add-host",
    "--dns",
    "--log-driver",
    "--log-opt",
    "--tmpfs",
    "--ulimit",
    "--shm-size",
    "--gpus",
    "--runtime",
    "--pull",
    "--cidfile",
    "--stop-signal",
    "--health-cmd",
    "-a",
    "--attach",
    "--detach-keys",
    "--group-add",
    "--label-file",
    "--link",
    "--volumes-from",
    "--expose",
];

/// `docker run [OPTIONS] IMAGE CMD…` and `docker exec [OPTIONS] CONTAINER CMD…`: the command
/// runs inside the container, and is walked as one.
pub(super) fn container(
    walker: &mut Walker,
    command: &SimpleCommand,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) {
    let Some(verb) = words
        .iter()
        .skip(1)
        .position(|w| matches!(w.text.as_str(), "run" | "exec" | "create"))
    else {
        return;
    };
    let mut at = verb + 2;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if !text.starts_with('-') || text == "-" {
            break;
        }
        at += 1;
        if text == "--" {
            break;
        }
        if CONTAINER_VALUES.contains(&text) {
            at += 1;
        }
    }
    // The image or container, then what runs in it.
    run_rest(walker, &command.name, words, at + 1, cwd, depth);
}

/// A program Sluice knows nothing of may be a wrapper it has not heard of (`toybox rm -rf ~`,
/// `proot -b /x rm …`): its first operand that names a program Sluice knows is walked as the
/// command it may run, so an unknown wrapper never hides one.
pub(super) fn unknown_program(
    walker: &mut Walker,
    command: &SimpleCommand,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) {
    let table = super::effects::EffectTable::built_in();
    let runs = |name: &str| {
        table.knows(name)
            || SHELLS.contains(&name)
            || code::language(name).is_some()
            || super::wrappers::is_wrapper(name)
    };
    if command.name.is_empty() || runs(&command.name) || super::options::is_known(&command.name) {
        return;
    }
    let Some(at) = words.iter().skip(1).position(|w| {
        w.dynamic.is_none()
            && !w.text.starts_with('-')
            && (!w.text.contains('/') || w.text.starts_with('/'))
            && runs(super::wrappers::program_name(&w.text))
    }) else {
        return;
    };
    run_rest(walker, &command.name, words, at + 1, cwd, depth);
}

/// Options whose value is a command line the program runs, by program.
const COMMAND_OPTIONS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "--sendmail-cmd",
        ],
    ),
    ("rg", &["--pre"]),
    ("rsync", &["-e", "--rsh", "--rsync-path"]),
    ("zip", &["-TT", "--unzip-command"]),
    ("gpg", &["--photo-viewer"]),
    ("gpg2", &["--photo-viewer"]),
    ("ansible", &["-a", "--args"]),
];

/// Options whose value is code the program loads or runs in a language of its own, by program.
const LOADING_OPTIONS: &[(&str, &[&str])] = &[
    ("make", &["--eval", "-E"]),
    ("gmake", &["--eval", "-E"]),
    ("openssl", &["-engine", "-provider", "-provider-path"]),
    ("cargo", &["--config"]),
    ("gdb", &["-p", "--pid"]),
];

/// The values of `options` in `words`: `--opt VALUE`, `--opt=VALUE` and `-oVALUE`.
fn option_values(words: &[Word], options: &[&str]) -> Vec<Word> {
    let mut out = Vec::new();
    let mut at = 1;
    while let Some(word) = words.get(at) {
        at += 1;
        if word.text == "--" {
            break;
        }
        for option in options {
            if word.text == *option {
                out.extend(words.get(at).cloned());
            } else if let Some(rest) = word.text.strip_prefix(option) {
                let value = match rest.strip_prefix('=') {
                    Some(value) => value,
                    None if !option.starts_with("--") && !rest.is_empty() => rest,
                    None => continue,
                };
                out.push(Word {
                    text: value.to_string(),
                    ..word.clone()
                });
            }
        }
    }
    out
}

/// Follows the commands the options of `program` name; why the command is unresolved, if an
/// option makes it load code or its command is not known until it runs.
pub(super) fn option_commands(
    walker: &mut Walker,
    program: &str,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let mut why = None;
    if let Some((_, options)) = COMMAND_OPTIONS.iter().find(|(p, _)| *p == program) {
        for word in option_values(words, options) {
            let script = word.text.as_str();
            match &word.dynamic {
                Some(reason) => {
                    why.get_or_insert(format!(
                        "`{program}` runs a command not known until it runs: {reason}"
                    ));
                }
                None => nested(walker, script, cwd, depth),
            }
        }
    }
    if let Some((_, options)) = LOADING_OPTIONS.iter().find(|(p, _)| *p == program)
        && let Some(word) = option_values(words, options).first()
    {
        why.get_or_insert(format!(
            "`{program}` loads code or attaches to a process named by an option (`{}`)",
            word.text
        ));
    }
    if program == "git"
        && let Some(word) = words.iter().find(|w| w.text.starts_with("ext::"))
    {
        why.get_or_insert(format!(
            "`git` runs the command of the `ext::` transport (`{}`)",
            word.text
        ));
    }
    why
}

/// `cmake -E rm|remove|remove_directory PATH…` deletes, and `cmake -E chdir DIR CMD…` runs a
/// command in another directory.
pub(super) fn cmake(
    walker: &mut Walker,
    command: &SimpleCommand,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) {
    let Some(at) = words.iter().position(|w| w.text == "-E") else {
        return;
    };
    let tool = words.get(at + 1).map(|w| w.text.as_str());
    let rest = words.get(at + 2..).unwrap_or(&[]);
    match tool {
        Some("rm" | "remove" | "remove_directory") => {
            let mut argv = vec![Word::literal("rm"), Word::literal("-rf")];
            argv.extend(rest.iter().filter(|w| !w.text.starts_with('-')).cloned());
            run_as(walker, &command.name, argv, cwd, depth);
        }
        Some("chdir") => {
            let Some(dir) = rest.first() else { return };
            let moved = if dir.dynamic.is_some() {
                None
            } else {
                Some(super::normalize::resolve(
                    &dir.text,
                    cwd.as_deref(),
                    walker.home.as_deref(),
                ))
            };
            run_as(
                walker,
                &command.name,
                rest.get(1..).unwrap_or(&[]).to_vec(),
                &moved,
                depth,
            );
        }
        _ => {}
    }
}
