//! Interpreter one-liners (`python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`, `awk`,
//! `deno eval`, …): the literal code string is read for the shell commands and the deletions it
//! spells out (`os.system("…")`, `subprocess.run([…])`, `shutil.rmtree(p)`, `execSync("…")`,
//! `system("…")`, backquotes, `fs.rmSync(p)`, `open(p, "w")`), which become parts of their own.
//! Code that builds what it runs at run time, or runs a computed string, leaves the interpreter's
//! part unresolved. This is a scan for calls, not a parser of five languages: it errs towards
//! finding a call that would not run (in a comment, in dead code), never towards missing one
//! spelt plainly.

use super::code_calls::{
    DELETE_CALLS, OPAQUE, PERMISSION_CALLS, REACHES, SHELL_CALLS, WRITE_CALLS,
};
use super::command::SimpleCommand;
use super::extract::Walker;
use super::follow::{MAX_CODE_DEPTH, nested, run_words};
use super::literal::{Arg, MAX_CALLS, backquoted, bare_calls, calls};
use super::normalize::Cwd;
use super::word::Word;

/// The longest interpreter code that is read for what it runs (see lang-spec/shell.md).
pub(super) const MAX_CODE: usize = 65_536;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lang {
    Python,
    Js,
    Perl,
    Ruby,
    Php,
    Awk,
    Other,
}

/// The language an interpreter runs, by its program name.
pub(super) fn language(name: &str) -> Option<Lang> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match base {
        "python" | "pypy" | "ipython" => Lang::Python,
        "node" | "nodejs" | "bun" | "deno" | "tsx" | "ts-node" => Lang::Js,
        "perl" => Lang::Perl,
        "ruby" | "jruby" => Lang::Ruby,
        "php" => Lang::Php,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        "lua" | "luajit" | "Rscript" | "osascript" | "pwsh" | "powershell" | "tclsh" | "julia" => {
            Lang::Other
        }
        _ => return None,
    })
}

/// The options that give an interpreter its code as their value.
fn code_options(name: &str) -> &'static [&'static str] {
    match language(name) {
        Some(Lang::Python) => &["-c"],
        Some(Lang::Js) => &["-e", "--eval", "-p", "--print"],
        Some(Lang::Perl | Lang::Ruby) => &["-e", "-E"],
        Some(Lang::Php) => &["-r"],
        Some(Lang::Other) => &["-e", "-c", "-Command", "--eval"],
        Some(Lang::Awk) | None => &[],
    }
}

/// Whether an option word gives the code: `-c`, a cluster ending in the letter (`perl -lne`),
/// `--eval=…`.
fn is_code_option(text: &str, options: &[&str]) -> bool {
    options.iter().any(|option| {
        text == *option
            || (option.len() == 2
                && !text.starts_with("--")
                && text.len() <= 5
                && text.starts_with('-')
                && text.ends_with(option.trim_start_matches('-'))
                && text.chars().skip(1).all(|c| c.is_ascii_alphabetic()))
    })
}

/// Whether the interpreter is given its code on the command line (so it does not read stdin).
pub(super) fn has_code_option(command: &SimpleCommand) -> bool {
    let options = code_options(&command.name);
    command
        .argv
        .iter()
        .skip(1)
        .any(|w| is_code_option(w, options))
        || (language(&command.name) == Some(Lang::Awk) && !command.args.is_empty())
        || (command.name == "deno" && command.args.first().is_some_and(|a| a == "eval"))
}

/// The code an interpreter is given on the command line, when it is: the word after its code
/// option, `deno eval CODE`, or awk's program.
fn code_word<'w>(command: &SimpleCommand, words: &'w [Word]) -> Option<&'w Word> {
    let options = code_options(&command.name);
    let operands = words.get(1..).unwrap_or(&[]);
    for (i, word) in operands.iter().enumerate() {
        if word.text == "--" {
            break;
        }
        if is_code_option(&word.text, options) {
            return operands.get(i + 1);
        }
        if let Some((key, _)) = word.text.split_once('=')
            && options.contains(&key)
            && key.starts_with("--")
        {
            return Some(word);
        }
    }
    if command.name == "deno" {
        let at = operands.iter().position(|w| w.text == "eval")?;
        return operands
            .iter()
            .skip(at + 1)
            .find(|w| !w.text.starts_with('-'));
    }
    if language(&command.name) == Some(Lang::Awk) {
        if command.flags.iter().any(|f| f == "-f" || f == "--file") {
            return None;
        }
        let mut skip_value = false;
        for word in operands {
            if skip_value {
                skip_value = false;
                continue;
            }
            if matches!(
                word.text.as_str(),
                "-F" | "-v" | "--assign" | "--field-separator"
            ) {
                skip_value = true;
                continue;
            }
            if !word.text.starts_with('-') {
                return Some(word);
            }
        }
    }
    None
}

/// Follows the code an interpreter is given on its command line; why it is unresolved, if the
/// code cannot be read.
pub(super) fn interpreter(
    walker: &mut Walker,
    command: &SimpleCommand,
    words: &[Word],
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let lang = language(&command.name)?;
    let code = code_word(command, words)?;
    if let Some(why) = &code.dynamic {
        return Some(format!(
            "`{}` runs code not known until it runs: {why}",
            command.name
        ));
    }
    scan_into(walker, lang, &command.name, &code.text, cwd, depth)
}

/// Scans `code` and queues the commands it spells; why it is unresolved, if it is.
pub(super) fn scan_into(
    walker: &mut Walker,
    lang: Lang,
    name: &str,
    code: &str,
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    if walker.code_depth >= MAX_CODE_DEPTH {
        return Some(format!(
            "code nested more than {MAX_CODE_DEPTH} levels deep"
        ));
    }
    if code.len() > MAX_CODE {
        return Some(format!(
            "`{name}` code longer than {MAX_CODE} bytes is not read"
        ));
    }
    walker.code_depth += 1;
    let why = scan(walker, lang, name, code, cwd, depth);
    walker.code_depth -= 1;
    why
}

fn scan(
    walker: &mut Walker,
    lang: Lang,
    name: &str,
    code: &str,
    cwd: &Cwd,
    depth: usize,
) -> Option<String> {
    let mut why = None;
    let mut unresolved = |reason: String| {
        if why.is_none() {
            why = Some(reason);
        }
    };
    if let Some(marker) = OPAQUE.iter().find(|m| code.contains(**m)) {
        unresolved(format!(
            "`{name}` code builds what it runs at run time (`{marker}`)"
        ));
    }
    if forks_in_a_loop(code) {
        unresolved(format!("`{name}` code forks in a loop: a fork bomb"));
    }
    if let Some((marker, what)) = REACHES.iter().find(|(m, _)| code.contains(*m)) {
        unresolved(format!("`{name}` code {what} (`{marker}`)"));
    }
    if let Some(keyword) = computed_bare_call(code, lang) {
        unresolved(format!(
            "`{name}` code calls `{keyword}` on a value computed at run time"
        ));
    }
    if lang == Lang::Awk {
        awk_pipes(walker, name, code, cwd, depth, &mut unresolved);
    }
    let bare = if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php) {
        bare_calls(code)
    } else {
        String::new()
    };
    let found = calls(code);
    if found.len() > MAX_CALLS {
        unresolved(format!(
            "`{name}` code makes more than {MAX_CALLS} calls, too many to read"
        ));
    }
    for (callee, args, after) in found.into_iter().take(MAX_CALLS).chain(calls(&bare)) {
        let last = callee.rsplit(['.', ':']).next().unwrap_or(&callee);
        let qualified = callee.contains(['.', ':']);
        if last == "eval" || (last == "exec" && lang == Lang::Python && !qualified) {
            // Code run as code, in the same language.
            match args.first() {
                Some(Arg::Str(inner)) => {
                    if let Some(reason) = scan_into(walker, lang, name, inner, cwd, depth) {
                        unresolved(reason);
                    }
                }
                _ => unresolved(format!(
                    "`{name}` code runs code computed at run time (`{last}`)"
                )),
            }
            continue;
        }
        if last == "open" && lang == Lang::Python && !qualified {
            let writes =
                matches!(args.get(1), Some(Arg::Str(m)) if m.contains(['w', 'a', 'x', '+']));
            match args.first() {
                Some(Arg::Str(path)) => push(
                    walker,
                    name,
                    &[if writes { "tee" } else { "cat" }, path],
                    cwd,
                    depth,
                ),
                _ if writes => unresolved(format!("`{name}` code writes a file named at run time")),
                _ => {}
            }
            continue;
        }
        if last == "Path"
            && lang == Lang::Python
            && [".unlink(", ".rmdir(", ".write_text(", ".write_bytes("]
                .iter()
                .any(|m| after.starts_with(m))
        {
            if let Some(Arg::Str(path)) = args.first() {
                let program = if after.starts_with(".write") {
                    "tee"
                } else {
                    "rm"
                };
                push(walker, name, &[program, path], cwd, depth);
            }
            continue;
        }
        let mode_writes = matches!(args.get(1), Some(Arg::Str(m)) if m.contains(['w', 'a', '+']) || m.starts_with('>'));
        let opens_for_writing = matches!(last, "open" | "fopen" | "sysopen")
            && (lang != Lang::Python || qualified)
            && (mode_writes
                || matches!(args.first(), Some(Arg::Str(p)) if p.starts_with('>') || p.starts_with('+')));
        if matches!(last, "write_text" | "write_bytes") {
            // A method of the path it writes, which was not a literal `Path("…")`.
            unresolved(format!(
                "`{name}` code writes a file named at run time (`{callee}`)"
            ));
            continue;
        }
        if WRITE_CALLS.contains(&last) || opens_for_writing || PERMISSION_CALLS.contains(&last) {
            let program = if PERMISSION_CALLS.contains(&last) {
                "chmod"
            } else {
                "tee"
            };
            match args.first() {
                Some(Arg::Str(path)) => {
                    let path = path.trim_start_matches(['>', '+', '<']).trim();
                    let argv: &[&str] = if program == "chmod" {
                        &["chmod", "777", path]
                    } else {
                        &["tee", path]
                    };
                    push(walker, name, argv, cwd, depth);
                }
                _ => unresolved(format!(
                    "`{name}` code changes a file named at run time (`{callee}`)"
                )),
            }
            continue;
        }
        let shell_call = SHELL_CALLS.contains(&last)
            && (!matches!(last, "run" | "call") || callee.starts_with("subprocess"))
            && !(last == "exec" && lang == Lang::Python);
        if shell_call {
            match command_of(last, &args) {
                Some(Command::Line(line)) => nested(walker, &line, cwd, depth),
                Some(Command::Argv(argv)) => {
                    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                    push(walker, name, &argv, cwd, depth);
                }
                None => unresolved(format!(
                    "`{name}` code runs a command computed at run time (`{callee}`)"
                )),
            }
            continue;
        }
        if DELETE_CALLS.contains(&last) {
            // `list.remove(x)` and `map.delete(k)` are no deletions: a generic name counts when a
            // file module qualifies it, or bare in Perl and PHP.
            let generic = matches!(last, "remove" | "delete" | "rm" | "unlink" | "rmdir");
            if generic
                && !file_module(&callee)
                && (qualified || !matches!(lang, Lang::Perl | Lang::Php))
            {
                continue;
            }
            match args.first() {
                Some(Arg::Str(path)) => push(walker, name, &["rm", "-rf", path], cwd, depth),
                Some(Arg::List(paths)) => {
                    let mut argv = vec!["rm", "-rf"];
                    argv.extend(paths.iter().map(String::as_str));
                    push(walker, name, &argv, cwd, depth);
                }
                _ => unresolved(format!(
                    "`{name}` code deletes a path computed at run time (`{callee}`)"
                )),
            }
        }
    }
    for line in backquoted(code, lang) {
        match line {
            Some(line) => nested(walker, &line, cwd, depth),
            None => unresolved(format!(
                "`{name}` code runs a command line computed at run time"
            )),
        }
    }
    why
}

/// Perl's, Ruby's and PHP's calls written without parentheses on something other than a literal
/// string (`unlink glob("$ENV{HOME}/…")`, `system $cmd`).
fn computed_bare_call(code: &str, lang: Lang) -> Option<&'static str> {
    if !matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php) {
        return None;
    }
    ["unlink", "rmtree", "system", "exec"]
        .into_iter()
        .find(|keyword| {
            code.match_indices(keyword).any(|(at, _)| {
                let before = code.get(..at).and_then(|b| b.chars().next_back());
                let after = code.get(at + keyword.len()..).unwrap_or("");
                let next = after.trim_start().chars().next();
                // Inside a string (an odd number of quotes before it) it is text.
                let quoted = code
                    .get(..at)
                    .is_some_and(|b| b.matches('"').count() % 2 == 1);
                !quoted
                    && before
                        .is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '.' && c != ':')
                    && after.starts_with(char::is_whitespace)
                    && next.is_some_and(|c| !matches!(c, '(' | '"' | '\'' | ';' | '}'))
            })
        })
}

/// Whether code forks inside a loop (`fork while fork`, `while True: os.fork()`).
fn forks_in_a_loop(code: &str) -> bool {
    code.contains("fork")
        && ["while", "for ", "for(", "loop", "until", "each", "times"]
            .iter()
            .any(|l| code.contains(l))
}

/// awk's `print … | "cmd"` and `"cmd" | getline`: the string is a command line awk runs, and
/// what it prints to a shell is a script not known until it runs.
fn awk_pipes(
    walker: &mut Walker,
    name: &str,
    code: &str,
    cwd: &Cwd,
    depth: usize,
    unresolved: &mut impl FnMut(String),
) {
    let mut rest = code;
    while let Some(at) = rest.find('|') {
        let after = rest.get(at + 1..).unwrap_or("").trim_start();
        let before = rest.get(..at).unwrap_or("").trim_end();
        rest = rest.get(at + 1..).unwrap_or("");
        let line = if let Some(quoted) = after.strip_prefix('"') {
            quoted.split('"').next()
        } else if before.ends_with('"') && after.starts_with("getline") {
            before
                .get(..before.len() - 1)
                .and_then(|b| b.rsplit('"').next())
        } else {
            None
        };
        if let Some(line) = line {
            let program = line.split_whitespace().next().unwrap_or("");
            if super::follow::SHELLS.contains(&program) {
                unresolved(format!(
                    "`{name}` prints a script to `{line}`, not known until it runs"
                ));
            }
            nested(walker, line, cwd, depth);
        }
    }
}

/// A command a call runs: a line for the shell, or the words of a program.
enum Command {
    Line(String),
    Argv(Vec<String>),
}

fn command_of(callee: &str, args: &[Arg]) -> Option<Command> {
    // `os.spawnlp(os.P_WAIT, "rm", "rm", "-rf", p)`: a mode first, then the program's path.
    let args = match args {
        [Arg::Other, rest @ ..] if rest.iter().any(|a| matches!(a, Arg::Str(_))) => rest,
        _ => args,
    };
    match args {
        [Arg::List(argv), ..] => Some(Command::Argv(argv.clone())),
        // `os.execvp("sh", ["sh", "-c", …])`: the list is the whole argv, its own first word
        // included.
        [Arg::Str(_), Arg::List(argv), ..]
            if matches!(
                callee,
                "execv"
                    | "execvp"
                    | "execve"
                    | "execvpe"
                    | "spawnv"
                    | "spawnvp"
                    | "spawnve"
                    | "spawnvpe"
            ) && !argv.is_empty() =>
        {
            Some(Command::Argv(argv.clone()))
        }
        [Arg::Str(program), Arg::List(rest), ..] => {
            let mut argv = vec![program.clone()];
            argv.extend(rest.iter().cloned());
            Some(Command::Argv(argv))
        }
        [Arg::Str(first), rest @ ..] if rest.iter().any(|a| matches!(a, Arg::Str(_))) => {
            // Perl's and PHP's list form: `system("rm", "-rf", "/")`.
            let mut argv = vec![first.clone()];
            argv.extend(rest.iter().map_while(|a| match a {
                Arg::Str(s) => Some(s.clone()),
                _ => None,
            }));
            Some(Command::Argv(argv))
        }
        [Arg::Str(line), ..] => Some(Command::Line(line.clone())),
        _ => None,
    }
}

/// Queues the command `argv` as a part the interpreter `name` runs.
fn push(walker: &mut Walker, name: &str, argv: &[&str], cwd: &Cwd, depth: usize) {
    let words = argv.iter().map(|w| Word::literal(*w)).collect();
    let first = walker.out.len();
    run_words(walker, words, cwd, depth);
    for command in walker.out.iter_mut().skip(first) {
        command.wrappers.insert(0, name.to_string());
    }
}

/// Whether a callee names a file-system module (`os.remove`, `fs.rm`, `FileUtils.rm`).
fn file_module(callee: &str) -> bool {
    [
        "os.",
        "fs.",
        "fsPromises.",
        "shutil.",
        "FileUtils",
        "File.",
        "Dir.",
        "Deno.",
        "pathlib",
        "fse.",
        "promises.",
    ]
    .iter()
    .any(|module| callee.starts_with(module) || callee.contains(&format!(".{module}")))
}
