//! Reading code as text for what a scan needs: calls with their literal arguments, string
//! literals in the quoting of the languages an interpreter one-liner is written in, and command
//! lines in backquotes.

use super::code::Lang;

/// How far past a call's `(` its arguments are read (bytes).
const WINDOW: usize = 1_024;

/// The most calls read in one piece of code; past them the code is not read further.
pub(super) const MAX_CALLS: usize = 256;

/// A call's argument as far as a scan can read it.
#[derive(Debug, PartialEq)]
pub(super) enum Arg {
    Str(String),
    List(Vec<String>),
    /// Anything else: a variable, an expression, an interpolated string.
    Other,
}

/// Calls written without parentheses (`system "rm -rf /"`, `unlink "/x"` in Perl and Ruby), as
/// `name("…")`.
pub(super) fn bare_calls(code: &str) -> String {
    let mut out = String::new();
    for name in [
        "system",
        "exec",
        "unlink",
        "rmtree",
        "spawn",
        "FileUtils.rm_rf",
        "FileUtils.rm_r",
    ] {
        let mut rest = code;
        while let Some(at) = rest.find(name) {
            let after = rest.get(at + name.len()..).unwrap_or("");
            let trimmed = after.trim_start();
            if trimmed.len() < after.len() && trimmed.starts_with(['"', '\'']) {
                let mut limit = trimmed.len().min(WINDOW);
                while !trimmed.is_char_boundary(limit) {
                    limit -= 1;
                }
                let end = trimmed
                    .get(..limit)
                    .unwrap_or("")
                    .find([';', '\n'])
                    .unwrap_or(limit);
                out.push_str(&format!("{name}({});\n", trimmed.get(..end).unwrap_or("")));
            }
            rest = after;
        }
    }
    out
}

/// Every `callee(args…)` in the code, with what follows its closing parenthesis.
pub(super) fn calls(code: &str) -> Vec<(String, Vec<Arg>, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(offset) = code.get(at..).and_then(|rest| rest.find('(')) {
        if out.len() > MAX_CALLS {
            break;
        }
        let open = at + offset;
        at = open + 1;
        let start = code
            .get(..open)
            .unwrap_or("")
            .trim_end()
            .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$')))
            .map_or(0, |i| i + 1);
        let callee = code.get(start..open).unwrap_or("").trim().to_string();
        if callee.is_empty() {
            continue;
        }
        // A call's arguments are read within a window, so a line of unclosed calls costs its
        // length times the window, not its length squared.
        let mut limit = code.len().min(open + WINDOW);
        while !code.is_char_boundary(limit) {
            limit -= 1;
        }
        let (args, end) = arguments(code.get(..limit).unwrap_or(""), open + 1);
        out.push((callee, args, code.get(end..).unwrap_or("")));
    }
    out
}

/// The arguments of a call whose `(` ends before `from`, and where its `)` ends.
fn arguments(code: &str, from: usize) -> (Vec<Arg>, usize) {
    let mut args = Vec::new();
    let mut at = from;
    loop {
        at = skip_space(code, at);
        let Some(c) = code.get(at..).and_then(|r| r.chars().next()) else {
            return (args, at);
        };
        if c == ')' {
            return (args, at + 1);
        }
        let (arg, next) = argument(code, at);
        args.push(arg);
        at = skip_space(code, next);
        match code.get(at..).and_then(|r| r.chars().next()) {
            Some(',') => at += 1,
            Some(')') => return (args, at + 1),
            _ => {
                // An expression the scan does not read: the rest of the call is unknown.
                if let Some(last) = args.last_mut() {
                    *last = Arg::Other;
                }
                return (args, at);
            }
        }
    }
}

fn skip_space(code: &str, at: usize) -> usize {
    code.get(at..)
        .map_or(at, |rest| at + (rest.len() - rest.trim_start().len()))
}

/// One argument: a string literal, a list of them, or something else (read up to `,` or `)`).
fn argument(code: &str, at: usize) -> (Arg, usize) {
    let rest = code.get(at..).unwrap_or("");
    if let Some((text, next)) = string(code, at) {
        return (text.map_or(Arg::Other, Arg::Str), next);
    }
    if rest.starts_with('[') {
        let mut items = Vec::new();
        let mut here = at + 1;
        loop {
            here = skip_space(code, here);
            match code.get(here..).and_then(|r| r.chars().next()) {
                Some(']') => return (Arg::List(items), here + 1),
                Some(',') => here += 1,
                _ => match string(code, here) {
                    Some((Some(text), next)) => {
                        items.push(text);
                        here = next;
                    }
                    _ => return (Arg::Other, skip_expression(code, here)),
                },
            }
        }
    }
    (Arg::Other, skip_expression(code, at))
}

/// Past an expression, to the `,` or `)` that ends it at its own nesting.
fn skip_expression(code: &str, at: usize) -> usize {
    let mut nesting = 0usize;
    for (i, c) in code.get(at..).unwrap_or("").char_indices() {
        match c {
            '(' | '[' | '{' => nesting += 1,
            ')' | ']' | '}' if nesting == 0 => return at + i,
            ')' | ']' | '}' => nesting -= 1,
            ',' if nesting == 0 => return at + i,
            _ => {}
        }
    }
    code.len()
}

/// A string literal at `at`: its text (`None` when it interpolates), and where it ends.
fn string(code: &str, at: usize) -> Option<(Option<String>, usize)> {
    let rest = code.get(at..)?;
    let prefix_len = rest.find(['\'', '"', '`']).filter(|&i| {
        i <= 2
            && rest
                .get(..i)
                .is_some_and(|p| p.chars().all(|c| "rRbBuUfF".contains(c)))
    })?;
    let prefix = rest.get(..prefix_len)?;
    let body = rest.get(prefix_len..)?;
    let quote = body.chars().next()?;
    let triple: String = std::iter::repeat_n(quote, 3).collect();
    let delimiter = if body.starts_with(&triple) {
        triple.as_str()
    } else {
        &body[..1]
    };
    let inner_start = at + prefix_len + delimiter.len();
    let raw = prefix.contains(['r', 'R']);
    let mut text = String::new();
    let mut chars = code.get(inner_start..)?.char_indices();
    while let Some((i, c)) = chars.next() {
        if code.get(inner_start + i..)?.starts_with(delimiter) {
            let interpolates = prefix.contains(['f', 'F'])
                || (quote == '`' && text.contains("${"))
                || (quote == '"' && text.contains("#{"));
            let end = inner_start + i + delimiter.len();
            return Some(((!interpolates).then_some(text), end));
        }
        if c == '\\' && !raw {
            match chars.next() {
                Some((_, 'n')) => text.push('\n'),
                Some((_, 't')) => text.push('\t'),
                Some((_, next)) => text.push(next),
                None => {}
            }
            continue;
        }
        text.push(c);
    }
    None
}

/// Command lines in backquotes (Perl, Ruby, PHP, shell-in-awk), `%x(…)` and `qx(…)`: each
/// literal line, or `None` for one that interpolates.
pub(super) fn backquoted(code: &str, lang: Lang) -> Vec<Option<String>> {
    let mut out = Vec::new();
    if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php) {
        let mut parts = code.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
            let interpolates = inside.contains('$') || inside.contains("#{");
            out.push((!interpolates).then(|| inside.to_string()));
        }
        for opener in ["%x(", "qx(", "qx{", "%x{"] {
            let mut rest = code;
            while let Some(at) = rest.find(opener) {
                let after = rest.get(at + opener.len()..).unwrap_or("");
                let close = if opener.ends_with('(') { ')' } else { '}' };
                let inside = after.split(close).next().unwrap_or("");
                let interpolates = inside.contains('$') || inside.contains("#{");
                out.push((!interpolates).then(|| inside.to_string()));
                rest = after;
            }
        }
    }
    if lang == Lang::Awk {
        // `"cmd" | getline` and `print … | "cmd"` run `cmd` in a shell.
        let mut at = 0;
        while let Some(offset) = code.get(at..).and_then(|r| r.find('|')) {
            let bar = at + offset;
            at = bar + 1;
            let after = code.get(bar + 1..).unwrap_or("").trim_start();
            if after.starts_with('"') {
                let start = code.len() - after.len();
                if let Some((Some(text), _)) = string(code, start) {
                    out.push(Some(text));
                }
            } else if after.starts_with("getline") {
                let before = code.get(..bar).unwrap_or("").trim_end();
                if before.ends_with('"') {
                    let open = before.get(..before.len() - 1).and_then(|b| b.rfind('"'));
                    if let Some(open) = open
                        && let Some((Some(text), _)) = string(code, open)
                    {
                        out.push(Some(text));
                    }
                } else {
                    out.push(None);
                }
            }
        }
    }
    out
}
