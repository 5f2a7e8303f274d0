//! The fast path: plain command lines lexed and parsed by hand in one pass.
//!
//! Most lines an agent runs are plain — words, quotes without expansions, `&&`, `||`, `;`, `&`,
//! `|` and simple redirections — and the bash grammar's general parser costs far more than they
//! need. This path accepts exactly such lines and gives the walker the same commands, in the same
//! order, with the same working directories, that walking the bash syntax tree would. Anything
//! else (`$`, backquotes, backslashes, parentheses, braces, `#`, `!`, newlines, keywords,
//! declarations, heredocs) makes it decline before it emits anything, and the line goes to the
//! grammar. A property test checks that both paths agree on every line this one accepts.

use super::command::Redirect;
use super::extract::Walker;
use super::normalize::{Cwd, normalize_command, resolve};
use super::word::Word;

/// Words that begin compound commands or declarations: their lines go to the grammar.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "coproc", "in", "export", "declare", "typeset", "local",
    "readonly", "unset",
];

/// Characters that mean more than text to the shell somewhere this path does not follow.
fn declines(c: char) -> bool {
    matches!(
        c,
        '$' | '`' | '\\' | '(' | ')' | '{' | '}' | '[' | ']' | '#' | '!' | '\n' | '\r' | '\t'
    ) || c.is_control()
}

#[derive(Debug)]
enum Token {
    /// A word, whether the text before its first `=` is unquoted (so it can assign), and
    /// whether it is written as a reserved word glued to a quote (`if'x'`), which the grammar
    /// reads as the keyword.
    Word(Word, bool, bool),
    Redirect(Redirect),
    And,
    Or,
    Pipe,
    /// `;` or `&`: the end of a statement.
    End,
}

/// A simple command: its assignments, words and redirections.
#[derive(Debug, Default)]
struct Command {
    env: Vec<Word>,
    words: Vec<Word>,
    redirects: Vec<Redirect>,
}

/// Parses and walks `text` if it is plain; `false` (having emitted nothing) if it is not.
pub(super) fn script(walker: &mut Walker, text: &str, cwd: &mut Cwd, depth: usize) -> bool {
    let Some(tokens) = lex(text) else {
        return false;
    };
    let Some(statements) = parse(tokens) else {
        return false;
    };
    // As the grammar's tree is walked: statements and `&&`/`||` lists share the working
    // directory; each part of a pipeline has its own copy; a command with redirections sits
    // one level deeper.
    for list in statements {
        for pipeline in list {
            let single = pipeline.len() == 1;
            for command in pipeline {
                let depth = depth + 1 + usize::from(!command.redirects.is_empty());
                if single {
                    emit(walker, command, cwd, depth);
                } else {
                    emit(walker, command, &mut cwd.clone(), depth);
                }
            }
        }
    }
    true
}

fn emit(walker: &mut Walker, mut command: Command, cwd: &mut Cwd, depth: usize) {
    // Files are resolved where the command runs, after the `cd`s before it.
    for redirect in &mut command.redirects {
        if !redirect.op.ends_with('&') {
            redirect.path = resolve(&redirect.target, cwd.as_deref());
        }
    }
    let first = walker.out.len();
    normalize_command(walker, command.words, command.env, Vec::new(), cwd, depth);
    // The redirections apply to what the command runs in turn too (`bash -c 'x' > f`).
    for pushed in walker.out.iter_mut().skip(first) {
        pushed.redirects.extend(command.redirects.iter().cloned());
    }
}

/// Statements of `&&`/`||` lists of pipelines of commands, or `None` for any line the grammar
/// would read otherwise or not at all.
fn parse(tokens: Vec<Token>) -> Option<Vec<Vec<Vec<Command>>>> {
    let mut statements = Vec::new();
    let mut list: Vec<Vec<Command>> = Vec::new();
    let mut pipeline: Vec<Command> = Vec::new();
    let mut command = Command::default();
    for token in tokens {
        match token {
            Token::Word(mut word, assignable, keyword) => {
                if !command.redirects.is_empty() {
                    return None;
                }
                if command.words.is_empty() && assignable && is_assignment(&word) {
                    // The grammar reads an assignment's value as text, never as a glob.
                    word.glob = false;
                    command.env.push(word);
                } else {
                    // The grammar reads a reserved word, a leading `-`, an `=` or a glob in
                    // command position otherwise.
                    if command.words.is_empty()
                        && (keyword
                            || RESERVED.contains(&word.text.as_str())
                            || word.text.starts_with('-')
                            || word.text.contains('=')
                            || word.glob)
                    {
                        return None;
                    }
                    command.words.push(word);
                }
            }
            Token::Redirect(redirect) => {
                if command.words.is_empty() {
                    return None;
                }
                command.redirects.push(redirect);
            }
            Token::Pipe | Token::And | Token::Or | Token::End => {
                if command.words.is_empty() {
                    return None;
                }
                pipeline.push(std::mem::take(&mut command));
                if matches!(token, Token::Pipe) {
                    continue;
                }
                list.push(std::mem::take(&mut pipeline));
                if matches!(token, Token::End) {
                    statements.push(std::mem::take(&mut list));
                }
            }
        }
    }
    if command.words.is_empty() {
        // A line may end with `;` or `&`, never with `|`, `&&` or `||`, and is not empty.
        if !pipeline.is_empty() || !list.is_empty() || statements.is_empty() {
            return None;
        }
    } else {
        pipeline.push(command);
        list.push(pipeline);
        statements.push(list);
    }
    // The grammar reads `a && b > f | c` as if the redirection closed the `&&` list; the shell
    // does not. Such lines are left to the grammar, so both paths keep giving one answer.
    let ambiguous = statements.iter().any(|list| {
        list.len() > 1
            && list.iter().any(|pipeline| {
                let before_last = pipeline.len().saturating_sub(1);
                pipeline
                    .iter()
                    .take(before_last)
                    .any(|c| !c.redirects.is_empty())
            })
    });
    (!ambiguous).then_some(statements)
}

/// `NAME=VALUE` before the command: an assignment, as the grammar reads it.
fn is_assignment(word: &Word) -> bool {
    word.text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn lex(text: &str) -> Option<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = text.get(at..)?;
        let c = rest.chars().next()?;
        if c == ' ' {
            at += 1;
            continue;
        }
        if declines(c) {
            return None;
        }
        let (token, length) = match rest.as_bytes() {
            [b'&', b'&', ..] => (Token::And, 2),
            [b'|', b'|', ..] => (Token::Or, 2),
            [b'|', b'&', ..] | [b';', b';', ..] | [b'&', b'>', b'>', ..] => return None,
            [b'|', ..] => (Token::Pipe, 1),
            [b';', ..] => (Token::End, 1),
            [b'&', b'>', ..] => redirect(rest, None, 2)?,
            [b'&', ..] => (Token::End, 1),
            [b'>' | b'<', ..] => redirect(rest, None, operator(rest)?)?,
            _ => {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                match rest.as_bytes().get(digits) {
                    Some(b'>' | b'<') if digits > 0 => {
                        let fd = rest.get(..digits)?.parse().ok();
                        let after = rest.get(digits..)?;
                        let (token, length) = redirect(after, fd, operator(after)?)?;
                        (token, digits + length)
                    }
                    _ => {
                        let (word, length, assignable) = word(rest)?;
                        // The grammar reads the digits that end `-n2>` as a descriptor.
                        let glued = rest
                            .as_bytes()
                            .get(length)
                            .is_some_and(|b| matches!(b, b'>' | b'<'));
                        if glued
                            && rest
                                .as_bytes()
                                .get(length.wrapping_sub(1))
                                .is_some_and(u8::is_ascii_digit)
                        {
                            return None;
                        }
                        let keyword = RESERVED.iter().any(|r| {
                            rest.strip_prefix(r)
                                .is_some_and(|after| after.starts_with(['\'', '"']))
                        });
                        (Token::Word(word, assignable, keyword), length)
                    }
                }
            }
        };
        tokens.push(token);
        at += length;
    }
    Some(tokens)
}

/// The length of the redirection operator at the start of `text`.
fn operator(text: &str) -> Option<usize> {
    match text.as_bytes() {
        [b'>', b'>', ..] | [b'>', b'&', ..] | [b'<', b'&', ..] => Some(2),
        [b'>', b'|', ..] | [b'<', b'<', ..] | [b'<', b'>', ..] => None,
        [b'>' | b'<', ..] => Some(1),
        _ => None,
    }
}

/// A redirection: the operator's `length` bytes, spaces, then the target word.
fn redirect(text: &str, fd: Option<u32>, length: usize) -> Option<(Token, usize)> {
    let op = text.get(..length)?.to_string();
    let after = text.get(length..)?;
    let spaces = after.bytes().take_while(|b| *b == b' ').count();
    let (target, word_length, _) = word(after.get(spaces..)?)?;
    if target.text.is_empty() || target.glob {
        return None;
    }
    // `2>&1` names a descriptor, not a file; the grammar reads `<&-` as one operator.
    let names_descriptor = op.ends_with('&') && target.text.chars().all(|c| c.is_ascii_digit());
    if op.ends_with('&') && !names_descriptor {
        return None;
    }
    // The path is resolved when the command is emitted, against its working directory.
    let redirect = Redirect {
        fd,
        op,
        target: target.text,
        path: String::new(),
    };
    Some((Token::Redirect(redirect), length + spaces + word_length))
}

/// One word at the start of `text`: plain text and quoted strings without expansions, up to a
/// space or an operator; its length in bytes, and whether its text up to the first `=` is
/// unquoted.
fn word(text: &str) -> Option<(Word, usize, bool)> {
    let mut out = Word::default();
    let mut at = 0;
    let mut assignable = true;
    let mut seen_equals = false;
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(at) {
        match b {
            b' ' | b'&' | b'|' | b';' | b'<' | b'>' => break,
            b'\'' | b'"' => {
                assignable &= seen_equals;
                let inner = text.get(at + 1..)?;
                let end = inner.find(char::from(b))?;
                let quoted = inner.get(..end)?;
                if b == b'"' && quoted.chars().any(declines) {
                    return None;
                }
                if quoted.contains(['\n', '\r']) {
                    return None;
                }
                out.text.push_str(quoted);
                at += end + 2;
            }
            _ => {
                let c = text.get(at..)?.chars().next()?;
                if declines(c) {
                    return None;
                }
                out.glob |= matches!(c, '*' | '?');
                seen_equals |= c == '=';
                out.text.push(c);
                at += c.len_utf8();
            }
        }
    }
    (at > 0).then_some((out, at, assignable && seen_equals))
}

/// Whether the fast path takes `text`.
#[cfg(test)]
pub(super) fn accepts(text: &str) -> bool {
    lex(text).and_then(parse).is_some()
}
