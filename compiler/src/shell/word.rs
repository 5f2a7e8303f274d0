//! Quote removal: the text a word node stands for, or why it cannot be known before it runs.

use tree_sitter::Node;

/// A word after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The word's text; where part of it is computed at run time, that part as written.
    pub text: String,
    /// Why the text is not what will run (an expansion, a substitution), if it is not.
    pub dynamic: Option<String>,
    /// Whether an unquoted part holds a glob character, so the word may become other words.
    pub glob: bool,
    /// Whether an unquoted part holds a brace expansion (`{a,b}`), which makes it several words.
    pub brace: bool,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            ..Word::default()
        }
    }

    fn push(&mut self, other: Word) {
        self.text.push_str(&other.text);
        if self.dynamic.is_none() {
            self.dynamic = other.dynamic;
        }
        self.glob |= other.glob;
        self.brace |= other.brace;
    }
}

/// The node's source text.
pub fn source<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// The word a node stands for.
pub fn word(node: Node<'_>, src: &str) -> Word {
    let text = source(node, src);
    match node.kind() {
        "word" | "command_name" if node.named_child_count() == 0 => Word {
            glob: has_unescaped_glob(text),
            brace: !text.contains('\\')
                && text.contains('{')
                && text.contains(',')
                && text.contains('}'),
            text: unescape_unquoted(text),
            dynamic: None,
        },
        "command_name" | "concatenation" => {
            let mut out = Word::default();
            let mut previous_end = node.start_byte();
            for (_, child) in super::tree::fields(node) {
                // Text between children (a `$` or `=` that is its own token) is kept as written.
                if let Some(gap) = src.get(previous_end..child.start_byte()) {
                    out.text.push_str(gap);
                }
                out.push(word(child, src));
                previous_end = child.end_byte();
            }
            if let Some(gap) = src.get(previous_end..node.end_byte()) {
                out.text.push_str(gap);
            }
            // The grammar splits an unquoted `{a,b}` into pieces; quoted, it is text.
            out.brace |= !text.contains(['\'', '"', '\\', '$'])
                && text.contains('{')
                && text.contains(',')
                && text.contains('}');
            out
        }
        "raw_string" => Word::literal(
            text.strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .unwrap_or(text),
        ),
        "ansi_c_string" => Word::literal(unescape_ansi_c(
            text.strip_prefix("$'")
                .and_then(|t| t.strip_suffix('\''))
                .unwrap_or(text),
        )),
        "string" | "translated_string" => double_quoted(node, src),
        "number" | "string_content" => Word::literal(text),
        "simple_expansion" | "expansion" => dynamic(text, "a variable expanded at run time"),
        "command_substitution" => dynamic(text, "the output of a command"),
        "process_substitution" => dynamic(text, "a file made by a command"),
        "arithmetic_expansion" => dynamic(text, "arithmetic computed at run time"),
        "brace_expression" => dynamic(text, "a brace expansion into several words"),
        _ => dynamic(text, "a form the shell expands at run time"),
    }
}

fn dynamic(text: &str, what: &str) -> Word {
    Word {
        text: text.to_string(),
        dynamic: Some(format!("`{text}` is {what}")),
        ..Word::default()
    }
}

/// `"..."`: its literal parts with the escapes that double quotes honour, its expansions dynamic.
fn double_quoted(node: Node<'_>, src: &str) -> Word {
    let inner_start = node.start_byte() + source(node, src).find('"').map_or(0, |i| i + 1);
    let inner_end = node.end_byte().saturating_sub(1).max(inner_start);
    let mut out = Word::default();
    let mut previous_end = inner_start;
    for child in super::tree::named_children(node) {
        if let Some(gap) = src.get(previous_end..child.start_byte()) {
            out.text.push_str(&unescape_double_quoted(gap));
        }
        match child.kind() {
            "string_content" => out
                .text
                .push_str(&unescape_double_quoted(source(child, src))),
            _ => out.push(word(child, src)),
        }
        previous_end = child.end_byte();
    }
    if let Some(gap) = src.get(previous_end..inner_end) {
        out.text.push_str(&unescape_double_quoted(gap));
    }
    out
}

/// Outside quotes a backslash quotes the next character, and a backslash-newline disappears.
fn unescape_unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            },
            _ => out.push(c),
        }
    }
    out
}

/// Inside double quotes a backslash quotes only `$`, `` ` ``, `"`, `\` and a newline.
fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('$' | '`' | '"' | '\\')) => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            ('\\', Some('\n')) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// `$'...'`: the C escapes bash honours there.
fn unescape_ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('e' | 'E') => out.push('\u{1b}'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('x') => out.extend(char::from_u32(digits(&mut chars, 16, 2, 0))),
            Some('u') => out.extend(char::from_u32(digits(&mut chars, 16, 4, 0))),
            Some('U') => out.extend(char::from_u32(digits(&mut chars, 16, 8, 0))),
            Some('c') => {
                // `\cX` is the control character of X.
                if let Some(next) = chars.next() {
                    out.extend(char::from_u32(u32::from(next) & 0x1f));
                }
            }
            Some(first @ '0'..='7') => {
                let first = first.to_digit(8).unwrap_or(0);
                out.extend(char::from_u32(digits(&mut chars, 8, 2, first)));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn has_unescaped_glob(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// Reads up to `max` more digits of `radix` onto `code`.
fn digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max: usize,
    code: u32,
) -> u32 {
    let mut code = code;
    for _ in 0..max {
        match chars.peek().and_then(|c| c.to_digit(radix)) {
            Some(digit) => {
                code = code * radix + digit;
                chars.next();
            }
            None => break,
        }
    }
    code
}

/// The words a brace expansion makes of `word` (`{/,}` is `/` and the empty word;
/// `{rm,-rf,/}` is `rm -rf /`), at most `MAX_BRACE_WORDS` of them: expanded as bash does for
/// comma lists, innermost braces included; a word without one is itself.
pub fn expand_braces(word: &Word) -> Vec<Word> {
    if !word.brace {
        return vec![word.clone()];
    }
    if word.text.len() > MAX_BRACE_TEXT {
        // Finding the braces of a longer word could cost its length squared.
        return vec![Word {
            dynamic: Some(format!(
                "a brace expansion longer than {MAX_BRACE_TEXT} bytes"
            )),
            ..word.clone()
        }];
    }
    let mut done = Vec::new();
    let mut pending = vec![word.text.clone()];
    while let Some(text) = pending.pop() {
        if done.len() + pending.len() >= MAX_BRACE_WORDS {
            done.push(text);
            continue;
        }
        match first_brace(&text) {
            Some((open, close, commas)) => {
                let (prefix, body, suffix) = (
                    text.get(..open).unwrap_or(""),
                    text.get(open + 1..close).unwrap_or(""),
                    text.get(close + 1..).unwrap_or(""),
                );
                let mut start = 0;
                let mut alternatives = Vec::new();
                for comma in commas.iter().copied().chain(std::iter::once(body.len())) {
                    alternatives.push(format!(
                        "{prefix}{}{suffix}",
                        body.get(start..comma).unwrap_or("")
                    ));
                    start = comma + 1;
                }
                pending.extend(alternatives.into_iter().rev());
            }
            None => done.push(text),
        }
    }
    done.into_iter()
        .map(|text| Word {
            text,
            ..word.clone()
        })
        .map(|mut w| {
            w.brace = false;
            w
        })
        .collect()
}

/// The longest word whose brace expansion is followed.
const MAX_BRACE_TEXT: usize = 4_096;

/// The most words one brace expansion may make; past it the rest stay as written.
pub const MAX_BRACE_WORDS: usize = 256;

/// The first `{…}` with a comma at its own level: its braces' offsets and its commas' offsets
/// within the body.
fn first_brace(text: &str) -> Option<(usize, usize, Vec<usize>)> {
    let bytes = text.as_bytes();
    for (open, _) in text.match_indices('{') {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (i, &b) in bytes.iter().enumerate().skip(open + 1) {
            match b {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    if !commas.is_empty() {
                        return Some((open, i, commas));
                    }
                    break;
                }
                b'}' => depth -= 1,
                b',' if depth == 0 => commas.push(i - open - 1),
                _ => {}
            }
        }
    }
    None
}
