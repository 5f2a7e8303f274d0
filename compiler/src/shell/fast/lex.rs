//! Lexing for the fast path: words (plain text, quotes, `$NAME`, `${NAME}` and simple `$(…)`),
//! operators and redirections, or `None` at the first thing the fast path leaves to the grammar.

use super::super::command::Redirect;
use super::super::word::Word;

/// Words that begin compound commands or declarations: their lines go to the grammar.
pub(super) const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "coproc", "in", "export", "declare", "typeset", "local",
    "readonly", "unset",
];

/// Characters that mean more than text to the shell somewhere this path does not follow (`$`
/// is read on its own).
fn declines(c: char) -> bool {
    matches!(
        c,
        '`' | '\\' | '(' | ')' | '{' | '}' | '[' | ']' | '#' | '!' | '\n' | '\r' | '\t'
    ) || c.is_control()
}

/// A word as lexed.
#[derive(Debug)]
pub(super) struct Lexed {
    pub word: Word,
    /// Whether the text before the first `=` is unquoted and unexpanded, so it can assign.
    pub assignable: bool,
    /// Whether it is written as a reserved word glued to something other than a name
    /// (`if'x'`, `if$x`), which the grammar reads as the keyword.
    pub keyword: bool,
    /// The scripts of its `$(…)` substitutions, in order.
    pub substitutions: Vec<String>,
}

#[derive(Debug)]
pub(super) enum Token {
    Word(Lexed),
    Redirect(Redirect),
    And,
    Or,
    Pipe,
    /// `;` or `&`: the end of a statement.
    End,
}

/// The fast path leaves the line to the grammar.
#[derive(Debug)]
pub(super) struct Declined;

/// The tokens of a line, lexed as the parser asks for them: a line the parser stops reading
/// early (past its cap of commands) is never lexed to its end.
pub(super) struct Lexer<'a> {
    text: &'a str,
    at: usize,
    lexed: usize,
}

pub(super) fn lex(text: &str) -> Lexer<'_> {
    Lexer {
        text,
        at: 0,
        lexed: 0,
    }
}

impl Iterator for Lexer<'_> {
    type Item = Result<Token, Declined>;

    fn next(&mut self) -> Option<Self::Item> {
        let (token, length) = loop {
            let rest = self.text.get(self.at..)?;
            let c = rest.chars().next()?;
            if c == ' ' {
                self.at += 1;
                continue;
            }
            break match next_token(rest, c) {
                Some(lexed) => lexed,
                None => {
                    // Declined for good: the rest is never read.
                    self.at = self.text.len();
                    return Some(Err(Declined));
                }
            };
        };
        self.at += length;
        self.lexed += 1;
        // A long line is lexed against the decision's clock; out of time, the line goes to the
        // grammar, whose deadline (already passed) ends the parse with the reason.
        if self.lexed.is_multiple_of(1024) && crate::budget::passed() {
            self.at = self.text.len();
            return Some(Err(Declined));
        }
        Some(Ok(token))
    }
}

/// The token that `rest` starts with (its first character `c`, not a space) and its length.
fn next_token(rest: &str, c: char) -> Option<(Token, usize)> {
    if declines(c) {
        return None;
    }
    Some(match rest.as_bytes() {
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
                _ => word_token(rest)?,
            }
        }
    })
}

fn word_token(rest: &str) -> Option<(Token, usize)> {
    let (lexed, length) = word(rest)?;
    // The grammar reads the digits that end `-n2>` as a descriptor.
    let glued = rest
        .as_bytes()
        .get(length)
        .is_some_and(|b| matches!(b, b'>' | b'<'));
    let ends_in_digit = length
        .checked_sub(1)
        .and_then(|last| rest.as_bytes().get(last))
        .is_some_and(u8::is_ascii_digit);
    if glued && ends_in_digit {
        return None;
    }
    Some((Token::Word(lexed), length))
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

/// A redirection: the operator's `length` bytes, spaces, then the target word (whose path is
/// resolved when its command is emitted, against the directory it runs in).
fn redirect(text: &str, fd: Option<u32>, length: usize) -> Option<(Token, usize)> {
    let op = text.get(..length)?.to_string();
    let after = text.get(length..)?;
    let spaces = after.bytes().take_while(|b| *b == b' ').count();
    let (target, word_length) = word(after.get(spaces..)?)?;
    // A substitution in a target runs after the command in the grammar's walk; left to it.
    if target.word.text.is_empty() || target.word.glob || !target.substitutions.is_empty() {
        return None;
    }
    // `2>&1` names a descriptor, not a file; the grammar reads `<&-` as one operator.
    let names_descriptor =
        op.ends_with('&') && target.word.text.chars().all(|c| c.is_ascii_digit());
    if op.ends_with('&') && !names_descriptor {
        return None;
    }
    let redirect = Redirect {
        fd,
        op,
        target: target.word.text,
        path: String::new(),
        body: None,
    };
    Some((Token::Redirect(redirect), length + spaces + word_length))
}

/// One word at the start of `text`, up to a space or an operator, and its length in bytes.
fn word(text: &str) -> Option<(Lexed, usize)> {
    let mut lexed = Lexed {
        word: Word::default(),
        assignable: true,
        keyword: RESERVED.iter().any(|r| {
            text.strip_prefix(r).is_some_and(|after| {
                !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ' ')
                    && !after.is_empty()
            })
        }),
        substitutions: Vec::new(),
    };
    let mut seen_equals = false;
    // Whether an expansion came before the first `=`, and whether a plain name did.
    let mut expanded = false;
    let mut named = false;
    let mut equals = 0;
    let mut at = 0;
    while let Some(&b) = text.as_bytes().get(at) {
        match b {
            b' ' | b'&' | b'|' | b';' | b'<' | b'>' => break,
            b'\'' => {
                lexed.assignable &= seen_equals;
                let inner = text.get(at + 1..)?;
                let end = inner.find('\'')?;
                let quoted = inner.get(..end)?;
                if quoted.contains(['\n', '\r']) {
                    return None;
                }
                lexed.word.text.push_str(quoted);
                at += end + 2;
            }
            b'"' => {
                lexed.assignable &= seen_equals;
                at += 1 + double_quoted(text.get(at + 1..)?, &mut lexed)?;
            }
            b'$' => {
                // The grammar splits `x/A=$B` and `A=x=$B` oddly (though not `A=$B`); left to
                // it.
                let before = at.checked_sub(1).and_then(|p| text.as_bytes().get(p));
                if seen_equals && (!named || (before == Some(&b'=') && equals > 1)) {
                    return None;
                }
                // Nor does it read an unquoted expansion after other text (`'x'$Y`, `a$B`,
                // `$A-$B`) as part of one word.
                if !lexed.word.text.is_empty() || matches!(before, Some(b'\'' | b'"')) {
                    return None;
                }
                lexed.assignable &= seen_equals;
                expanded |= !seen_equals;
                at += expansion(text.get(at..)?, &mut lexed)?;
            }
            _ => {
                let c = text.get(at..)?.chars().next()?;
                // The grammar splits `$A=$B` oddly; left to it.
                if declines(c) || (c == '=' && expanded) {
                    return None;
                }
                lexed.word.glob |= matches!(c, '*' | '?');
                if c == '=' && !seen_equals {
                    named = lexed.assignable && is_name(&lexed.word.text);
                }
                equals += usize::from(c == '=');
                seen_equals |= c == '=';
                lexed.word.text.push(c);
                at += c.len_utf8();
            }
        }
    }
    lexed.assignable &= seen_equals;
    (at > 0).then_some((lexed, at))
}

fn is_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The inside of `"…"` and its closing quote: text, and expansions kept as written; the bytes
/// read.
fn double_quoted(text: &str, lexed: &mut Lexed) -> Option<usize> {
    let mut at = 0;
    loop {
        let c = text.get(at..)?.chars().next()?;
        match c {
            '"' => return Some(at + 1),
            '$' => at += expansion(text.get(at..)?, lexed)?,
            '`' | '\\' | '\n' | '\r' => return None,
            _ if c.is_control() => return None,
            _ => {
                lexed.word.text.push(c);
                at += c.len_utf8();
            }
        }
    }
}

/// `$NAME`, `${NAME}` or `$(script)` at the start of `text`, kept as written and marking the
/// word dynamic as the grammar's walk does; the bytes read.
fn expansion(text: &str, lexed: &mut Lexed) -> Option<usize> {
    let after = text.get(1..)?;
    let name_length = |s: &str| {
        let starts = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        let length = s
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        starts.then_some(length)
    };
    let (length, what) = if let Some(inner) = after.strip_prefix('{') {
        let name = name_length(inner)?;
        inner.get(name..)?.starts_with('}').then_some(())?;
        (name + 3, "a variable expanded at run time")
    } else if let Some(inner) = after.strip_prefix('(') {
        // Only a script without parentheses, quotes or expansions of its own.
        let end = inner.find(')')?;
        let script = inner.get(..end)?;
        if script.contains(['(', '\'', '"', '$', '`', '\\', '\n']) || script.trim().is_empty() {
            return None;
        }
        lexed.substitutions.push(script.to_string());
        (end + 3, "the output of a command")
    } else {
        (name_length(after)? + 1, "a variable expanded at run time")
    };
    let written = text.get(..length)?;
    lexed.word.text.push_str(written);
    if lexed.word.dynamic.is_none() {
        lexed.word.dynamic = Some(format!("`{written}` is {what}"));
    }
    Some(length)
}
