//! The wrappers Sluice strips from the front of a command, and how each takes its words
//! (lang-spec/shell.md lists them).

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
            "nohup",
            "setsid",
            "unbuffer",
            "busybox",
            "toybox",
            "builtin",
            "command",
            "coproc",
            "{",
            "dbus-launch",
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
        &["unshare"],
        &[
            "-S",
            "-G",
            "-w",
            "-R",
            "--setuid",
            "--setgid",
            "--wd",
            "--root",
            "--propagation",
            "--map-user",
            "--map-group",
            "--setgroups",
        ],
    ),
    plain(
        &["nsenter"],
        &[
            "-t", "-S", "-G", "-w", "--target", "--setuid", "--setgid", "--wd",
        ],
    ),
    plain(
        &["systemd-inhibit"],
        &["--what", "--who", "--why", "--mode"],
    ),
    plain(
        &["run0"],
        &[
            "-u",
            "-g",
            "-D",
            "--user",
            "--group",
            "--chdir",
            "--setenv",
            "--unit",
            "--property",
            "--description",
            "--slice",
            "--nice",
            "--machine",
            "--background",
        ],
    ),
    plain(
        &["proot"],
        &[
            "-r",
            "-b",
            "-m",
            "-w",
            "-q",
            "-k",
            "--rootfs",
            "--bind",
            "--mount",
            "--cwd",
            "--qemu",
            "--kernel-release",
        ],
    ),
    plain(&["ssh-agent"], &["-a", "-E", "-t", "-P", "-O"]),
    runner(
        &["perf"],
        "record",
        &[
            "-o", "-e", "-p", "-F", "-c", "-C", "--output", "--event", "--pid", "--freq",
        ],
    ),
    runner(
        &["perf"],
        "stat",
        &[
            "-o", "-e", "-p", "-r", "-C", "--output", "--event", "--pid", "--repeat",
        ],
    ),
    runner(
        &["perf"],
        "trace",
        &["-o", "-e", "-p", "--output", "--event", "--pid"],
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
    runner(
        &["npm"],
        "exec",
        &["-p", "--package", "-w", "--workspace", "--prefix", "-C"],
    ),
    runner(
        &["pnpm", "yarn", "bun"],
        "exec",
        &["-C", "--dir", "--cwd", "--filter", "-F"],
    ),
    Wrapper {
        script_options: &["-s"],
        ..plain(&["entr"], &[])
    },
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
