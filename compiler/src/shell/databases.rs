//! Database clients and other programs that read commands of their own: SQL or shell escapes
//! given on the line or on standard input, and programs whose input is a script Sluice does not
//! read (`ssh HOST <<EOF`, `ed`, `vim -es`, `make -f -`, `tclsh`).

use super::code;
use super::command::SimpleCommand;
use super::extract::Walker;

/// Database clients, whose commands (given with `-c`/`-e`/`--eval` or as operands, or on standard
/// input) may destroy data no path names.
pub(super) const DATABASES: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "sqlite3",
    "duckdb",
    "mongosh",
    "mongo",
    "redis-cli",
    "cqlsh",
    "clickhouse-client",
    "sqlcmd",
    "cockroach",
];

/// SQL or database commands given on the command line that drop, truncate or delete data.
pub(super) fn database(walker: &mut Walker, index: usize, command: &SimpleCommand) {
    let given = command
        .options
        .iter()
        .filter(|(option, _)| {
            matches!(
                option.as_str(),
                "-c" | "--command" | "-e" | "--execute" | "--eval" | "-cmd" | "-q" | "--query"
            )
        })
        .map(|(_, value)| value.as_str())
        .chain(command.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    if destroys_data(&given)
        && let Some(command) = walker.out.get_mut(index)
    {
        command.destroys = true;
    }
}

/// Whether database commands drop, truncate or delete data.
fn destroys_data(commands: &str) -> bool {
    let lower = commands.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|pair| {
        matches!(
            pair,
            [
                "drop",
                "table"
                    | "database"
                    | "schema"
                    | "collection"
                    | "index"
                    | "user"
                    | "view"
                    | "keyspace"
                    | "owned"
            ] | ["truncate", _]
                | ["delete", "from"]
                | ["config", "set"]
        )
    }) || words.iter().any(|w| {
        matches!(
            *w,
            "flushall" | "flushdb" | "dropdatabase" | "deletemany" | "del" | "unlink" | "drop"
        )
    })
}

/// A database client fed commands on standard input: what destroys data is marked, and an
/// escape to the shell (`.shell`, `\!`, `.system`) is not known until it runs.
pub(super) fn database_input(walker: &mut Walker, reader: usize, script: &str) {
    let Some(command) = walker.out.get_mut(reader) else {
        return;
    };
    if !DATABASES.contains(&command.name.as_str()) {
        return;
    }
    if destroys_data(script) {
        command.destroys = true;
    }
    if script.contains(".shell") || script.contains(".system") || script.contains("\\!") {
        command.mark_unresolved(format!(
            "`{}` is given a shell escape on its input",
            command.name
        ));
    }
}

/// Whether the command runs what it reads on standard input as commands of its own language,
/// which Sluice does not scan: `ssh HOST` with no command, `ed`, `vim -es`, `m4`, `make -f -`,
/// `sftp`, or an interpreter of a language the scan does not read (`tclsh`, `lua`).
pub(super) fn reads_commands(command: &SimpleCommand) -> bool {
    let stdin = |arg: &str| matches!(arg, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    match command.name.as_str() {
        "ssh" => command.args.len() <= 1,
        "ed" | "ex" | "m4" | "sftp" | "ftp" | "lftp" | "expect" | "gdb" | "lldb" | "sqlplus" => {
            true
        }
        "vim" | "vi" | "nvim" => command
            .flags
            .iter()
            .any(|f| !f.starts_with("--") && (f.contains('e') || f.contains('s'))),
        "make" | "gmake" | "bmake" => command.options.iter().any(|(option, value)| {
            matches!(option.as_str(), "-f" | "--file" | "--makefile") && stdin(value)
        }),
        name => code::language(name) == Some(code::Lang::Other),
    }
}
