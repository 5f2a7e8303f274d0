//! What the effect table and redirections say commands do, and the part records built from them.

use super::*;

const CWD: Option<&str> = Some("/w");

fn effects(line: &str) -> Effects {
    let commands = parse_command(line, CWD);
    assert_eq!(commands.len(), 1, "{commands:#?}");
    let table = EffectTable::built_in();
    commands
        .first()
        .map(|c| table.effects_of(c))
        .unwrap_or_default()
}

#[test]
fn deletes_name_their_operands_resolved() {
    assert_eq!(
        effects("rm -rf build ../x /tmp/y").deletes,
        ["/w/build", "/x", "/tmp/y"]
    );
    assert_eq!(effects("sudo rm -rf ~").deletes, ["~"]);
    assert_eq!(effects("rm -rf $HOME").deletes, ["~"]);
    assert_eq!(effects("rm -rf \"${HOME}/\"").deletes, ["~"]);
    assert_eq!(effects("rm -rf $HOMEDIR").deletes, ["/w/$HOMEDIR"]);
    // `find -delete` deletes what it finds under its start, not the start as a name.
    assert_eq!(effects("find / -delete").deletes, ["/*"]);
    assert_eq!(effects("find / -name core -delete").deletes, ["/**/core"]);
    assert_eq!(
        effects("find . -name '*.pyc' -delete").deletes,
        ["/w/**/*.pyc"]
    );
    assert_eq!(
        effects("find build -type f -delete").deletes,
        ["/w/build/**"]
    );
    assert!(effects("find . -name core").deletes.is_empty());
    assert_eq!(effects("git clean -fdx").deletes, ["/w/**"]);
    assert_eq!(effects("git rm -r docs").deletes, ["/w/docs"]);
}

#[test]
fn copies_moves_and_in_place_edits_write_their_targets() {
    let copy = effects("cp a b dest");
    assert_eq!(
        (copy.reads, copy.writes),
        (
            vec!["/w/a".to_string(), "/w/b".into()],
            vec!["/w/dest".to_string()]
        )
    );
    let moved = effects("mv old new");
    assert_eq!(
        (moved.deletes, moved.writes),
        (vec!["/w/old".to_string()], vec!["/w/new".to_string()])
    );
    assert_eq!(effects("sed -i s/a/b/ ~/.bashrc").writes, ["~/.bashrc"]);
    assert!(effects("sed s/a/b/ ~/.bashrc").writes.is_empty());
    assert_eq!(effects("sed -i s/a/b/ ~/.bashrc").reads, ["~/.bashrc"]);
    assert_eq!(effects("chmod -R 777 /etc").writes, ["/etc"]);
}

#[test]
fn dd_names_its_files_by_prefix() {
    let dd = effects("dd if=/dev/zero of=/dev/sda bs=1M");
    assert_eq!(dd.reads, ["/dev/zero"]);
    assert_eq!(dd.writes, ["/dev/sda"]);
}

#[test]
fn redirections_write_and_read_files_but_not_descriptors() {
    let e = effects("echo 'alias ls=rm' >> ~/.bashrc 2>&1");
    assert_eq!(e.writes, ["~/.bashrc"]);
    assert_eq!(effects("sort < in.txt").reads, ["/w/in.txt"]);
    assert!(effects("ls 2>&1").writes.is_empty());
    assert_eq!(effects("> /etc/passwd").writes, ["/etc/passwd"]);
}

#[test]
fn network_and_execution_come_from_the_table() {
    assert!(effects("curl -fsSL https://x.sh").network);
    assert!(effects("git push origin main").network);
    assert!(!effects("git status").network);
    assert!(effects("npm install left-pad").executes);
    assert!(effects("python3 x.py").executes);
    assert!(!effects("ls").executes);
}

#[test]
fn rows_a_set_adds_apply_after_the_built_in_ones() {
    let row = EffectRow::from_json(&serde_json::json!({
        "command": "terraform", "subcommand": "destroy", "deletes": "cwd", "network": true
    }));
    let table = EffectTable::extended(vec![row.expect("a row")]);
    let commands = parse_command("terraform destroy -auto-approve", CWD);
    let effects = commands
        .first()
        .map(|c| table.effects_of(c))
        .unwrap_or_default();
    assert_eq!(effects.deletes, ["/w"]);
    assert!(effects.network);
    assert!(
        EffectRow::from_json(&serde_json::json!({ "command": "x", "writes": "most" })).is_err()
    );
    assert!(EffectRow::from_json(&serde_json::json!({ "command": [] })).is_err());
    assert!(EffectRow::from_json(&serde_json::json!({ "cmd": "x" })).is_err());
}

#[test]
fn a_part_record_has_every_field_the_checker_types() {
    let commands = parse_command("sudo -u me FOO=1 rm -rf 'a b' > log", CWD);
    let parts = parts_json(&commands, &EffectTable::built_in());
    let part = parts.get(0).and_then(|p| p.as_object()).expect("one part");
    let keys: Vec<&str> = part.keys().map(String::as_str).collect();
    assert_eq!(keys, FIELDS);
    assert_eq!(part["text"], "sudo FOO=1 rm -rf 'a b' >log");
    assert_eq!(part["deletes"], serde_json::json!(["/w/a b"]));
    assert_eq!(part["writes"], serde_json::json!(["/w/log"]));
    assert_eq!(part["cwd"], "/w");
    assert_eq!(part["unresolved"], serde_json::Value::Null);
}
