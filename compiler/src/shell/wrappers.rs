//! Wrappers: programs that run the command after them (`sudo`, `env`, `timeout 5`, `stdbuf -o0`,
//! `flock FILE`, `su -c 'cmd'`, `watch 'cmd'`). Each is stripped from the front of a command and
//! remembered, with its options read as it reads them (which take a value, how many positional
//! words come before the command), so the real program is what a rule sees.

use super::command::SimpleCommand;
use super::normalize::resolve;
use super::word::Word;

/// How a wrapper takes its words.
pub(super) struct Wrapper {
    pub names: &'static [&'static str],
    /// Options that take the next word as their value (`-u root`); `-uroot` and `--user=root`
    /// carry it themselves.
    pub options_with_value: &'static [&'static str],
    /// Positional words before the command: the duration of `timeout`, the file of `flock`.
    pub positional: usize,
    /// Whether `NAME=VALUE` words before the command set its environment.
    pub assignments: bool,
    /// Options whose value is a shell script the wrapper runs (`su -c`, `flock -c`).
    pub script_options: &'static [&'static str],
    /// The words after the options are one script, joined by spaces (`watch`, `parallel`).
    pub joins: bool,
    /// Without a script option, the words after the options are not a command (`su root`).
    pub needs_script: bool,
    /// Only a wrapper with this first operand (`uv run`, `bundle exec`).
    pub subcommand: Option<&'static str>,
}

const fn plain(names: &'static [&'static str], values: &'static [&'static str]) -> Wrapper {
    Wrapper {
        names,
        options_with_value: values,
        positional: 0,
        assignments: false,
        script_options: &[],
        joins: false,
        needs_script: false,
        subcommand: None,
    }
}

const fn positional(
    names: &'static [&'static str],
    values: &'static [&'static str],
    count: usize,
) -> Wrapper {
    Wrapper {
        positional: count,
        ..plain(names, values)
    }
}

const fn scripted(
    names: &'static [&'static str],
    values: &'static [&'static str],
    script: &'static [&'static str],
) -> Wrapper {
    Wrapper {
        script_options: script,
        needs_script: true,
        ..plain(names, values)
    }
}

const fn runner(
    name: &'static [&'static str],
    sub: &'static str,
    values: &'static [&'static str],
) -> Wrapper {
    Wrapper {
        subcommand: Some(sub),
        ..plain(name, values)
    }
}

/// The wrappers that run the command that follows them (lang-spec/shell.md lists them).
pub(super) const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        assignments: true,
        ..plain(
            &["sudo"],
            &[
                "-u",
                "-g",
                "-h",
                "-p",
                "-C",
                "-D",
                "-r",
                "-t",
                "-T",
                "-U",
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--close-from",
                "--chdir",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
            ],
        )
    },
    plain(&["doas"], &["-u", "-C"]),
    plain(&["pkexec"], &["--user"]),
    Wrapper {
        assignments: true,
        script_options: &["-S", "--split-string"],
        ..plain(
            &["env"],
            &["-u", "-C", "--unset", "--chdir", "-a", "--argv0"],
        )
    },
    plain(&["nice"], &["-n", "--adjustment"]),
    positional(
        &["timeout", "gtimeout"],
        &["-s", "-k", "--signal", "--kill-after"],
        1,
    ),
    plain(
        &[
            "nohup", "setsid", "unbuffer", "busybox", "builtin", "command",
        ],
        &[],
    ),
    plain(&["exec"], &["-a"]),
    plain(&["time"], &["-f", "-o", "--format", "--output"]),
    plain(
        &["stdbuf", "gstdbuf"],
        &["-i", "-o", "-e", "--input", "--output", "--error"],
    ),
    Wrapper {
        script_options: &["-c", "--command"],
        ..positional(
            &["flock"],
            &["-w", "-E", "--timeout", "--wait", "--conflict-exit-code"],
            1,
        )
    },
    positional(&["chroot"], &["--userspec", "--groups"], 1),
    plain(
        &["strace", "ltrace"],
        &[
            "-o",
            "-e",
            "-p",
            "-s",
            "-u",
            "-a",
            "-b",
            "-E",
            "-I",
            "-O",
            "-P",
            "-S",
            "-X",
            "-n",
            "--output",
            "--trace",
            "--string-limit",
            "--user",
            "--env",
        ],
    ),
    plain(
        &["ionice"],
        &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
    ),
    positional(&["taskset"], &[], 1),
    positional(
        &["chrt"],
        &[
            "-T",
            "-P",
            "-D",
            "--sched-runtime",
            "--sched-period",
            "--sched-deadline",
        ],
        1,
    ),
    plain(&["prlimit"], &["-p", "--pid"]),
    positional(&["faketime"], &[], 1),
    plain(
        &[
            "firejail",
            "valgrind",
            "torsocks",
            "eatmydata",
            "catchsegv",
            "dbus-run-session",
            "dumb-init",
            "tini",
            "caffeinate",
        ],
        &["-t", "-w", "-s", "-p"],
    ),
    plain(
        &["systemd-run"],
        &[
            "-u",
            "-p",
            "-E",
            "-M",
            "-H",
            "--unit",
            "--property",
            "--setenv",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
            "--slice",
            "--description",
            "--machine",
            "--host",
        ],
    ),
    plain(
        &["unshare", "nsenter"],
        &[
            "-t", "-S", "-G", "-w", "-r", "--target", "--setuid", "--setgid", "--wd",
        ],
    ),
    plain(
        &["numactl"],
        &[
            "-C",
            "-N",
            "-m",
            "-i",
            "-p",
            "--physcpubind",
            "--cpunodebind",
            "--membind",
            "--interleave",
            "--preferred",
        ],
    ),
    plain(&["cgexec"], &["-g"]),
    plain(&["proxychains", "proxychains4"], &["-f"]),
    plain(&["fakeroot"], &["-l", "-s", "-i", "--lib", "--faked"]),
    plain(
        &["xvfb-run"],
        &[
            "-n",
            "-s",
            "-f",
            "-e",
            "-p",
            "-w",
            "--server-num",
            "--server-args",
        ],
    ),
    plain(&["arch"], &["-arch"]),
    plain(&["sandbox-exec"], &["-f", "-p", "-n", "-D"]),
    positional(&["direnv"], &[], 2),
    scripted(
        &["su"],
        &["-s", "-g", "-G", "--shell", "--group"],
        &["-c", "--command"],
    ),
    Wrapper {
        needs_script: false,
        ..scripted(
            &["runuser"],
            &["-u", "-g", "-G", "-s", "--user", "--group", "--shell"],
            &["-c", "--command"],
        )
    },
    scripted(&["sg"], &[], &["-c"]),
    scripted(
        &["script"],
        &[
            "-O",
            "-I",
            "-T",
            "-t",
            "-E",
            "--log-out",
            "--log-in",
            "--log-timing",
            "--echo",
        ],
        &["-c", "--command"],
    ),
    scripted(
        &["nix-shell"],
        &["-p", "-A", "-I", "--packages", "--attr"],
        &["--run", "--command"],
    ),
    Wrapper {
        joins: true,
        ..plain(&["watch"], &["-n", "--interval", "-d", "-q", "--equexit"])
    },
    Wrapper {
        joins: true,
        ..plain(
            &["parallel"],
            &[
                "-j",
                "-N",
                "-n",
                "-P",
                "-S",
                "-a",
                "-d",
                "-I",
                "-E",
                "--jobs",
                "--sshlogin",
                "--arg-file",
                "--delay",
                "--colsep",
                "--timeout",
                "--joblog",
                "--results",
            ],
        )
    },
    Wrapper {
        assignments: false,
        ..plain(
            &["xargs"],
            &[
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
        )
    },
    runner(
        &["uv", "poetry", "pipenv", "pdm", "hatch", "rye"],
        "run",
        &[
            "--with",
            "--python",
            "-p",
            "--env",
            "-e",
            "--directory",
            "--project",
            "--package",
        ],
    ),
    Wrapper {
        script_options: &["-c", "--call"],
        ..plain(&["npx", "bunx", "pnpx"], &["-p", "--package"])
    },
    runner(&["pnpm", "yarn"], "dlx", &["-p", "--package"]),
    runner(&["npm"], "exec", &["-p", "--package", "-w", "--workspace"]),
    runner(
        &["bundle", "mise", "rtx", "asdf", "rbenv", "pyenv", "nodenv"],
        "exec",
        &[],
    ),
    runner(
        &["conda", "mamba", "micromamba"],
        "run",
        &["-n", "-p", "--name", "--prefix"],
    ),
    runner(&["aws-vault"], "exec", &["-d", "--duration", "--region"]),
    runner(
        &["op", "doppler", "dotenvx"],
        "run",
        &["--env-file", "-p", "--project", "-c", "--config"],
    ),
];

/// Whether a wrapper's option names the directory the command runs in.
fn changes_directory(wrapper: &str, option: &str) -> bool {
    matches!(
        (wrapper, option),
        ("env", "-C" | "--chdir")
            | ("sudo", "-D" | "--chdir")
            | ("doas", "-C")
            | ("systemd-run", "--working-directory")
            | ("nsenter" | "unshare", "-w" | "--wd")
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
        let Some(wrapper) = WRAPPERS.iter().find(|w| w.names.contains(&name.as_str())) else {
            return;
        };
        let mut rest = 1;
        if let Some(sub) = wrapper.subcommand {
            match words.get(1) {
                Some(word) if word.text == sub => rest = 2,
                _ => return,
            }
        }
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
        if wrapper.joins {
            if let Some(end) = inner.iter().position(|w| w.text.starts_with(":::")) {
                inner.truncate(end);
            }
            if !inner.is_empty() {
                inner = as_shell(joined(&inner));
            }
        }
        *words = inner;
        if words.is_empty() && name == "xargs" {
            // `xargs` with no command runs `echo`.
            words.push(Word::literal("echo"));
        }
    }
    command.mark_unresolved("more wrappers than can be followed");
}
