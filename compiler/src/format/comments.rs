//! Finding comments in source text, outside strings.

/// A `# …` comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub start: usize,
    pub text: String,
    /// Code precedes it on its line.
    pub trailing: bool,
    /// An empty line follows it in the source; the formatter keeps one.
    pub blank_after: bool,
    /// It starts in the first column: a comment about what follows, not about the clause
    /// before it.
    pub first_column: bool,
}

pub fn extract_comments(text: &str) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut comments = Vec::new();
    let mut i = 0;
    let mut line_has_code = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' => {
                line_has_code = false;
                i += 1;
            }
            b'#' => {
                let end = text
                    .get(i..)
                    .and_then(|rest| rest.find('\n'))
                    .map_or(text.len(), |n| i + n);
                let body = text.get(i..end).unwrap_or("").trim_end().to_string();
                let after = text.get(end..).unwrap_or("");
                let blank_after = after.strip_prefix('\n').is_some_and(|rest| {
                    rest.trim_start_matches([' ', '\t', '\r']).starts_with('\n')
                });
                let first_column = i == 0 || bytes.get(i - 1) == Some(&b'\n');
                comments.push(Comment {
                    start: i,
                    text: body,
                    trailing: line_has_code,
                    blank_after,
                    first_column,
                });
                i = end;
            }
            b'"' => {
                i = skip_string(bytes, i + 1);
                line_has_code = true;
            }
            b'r' if is_raw_start(bytes, i) => {
                i = skip_raw(bytes, i);
                line_has_code = true;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            _ => {
                line_has_code = true;
                i += 1;
            }
        }
    }
    comments
}

fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' | b'\n' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

fn is_raw_start(bytes: &[u8], i: usize) -> bool {
    let preceded_by_ident = i > 0
        && bytes
            .get(i - 1)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if preceded_by_ident {
        return false;
    }
    let mut j = i + 1;
    while bytes.get(j) == Some(&b'#') {
        j += 1;
    }
    bytes.get(j) == Some(&b'"')
}

fn skip_raw(bytes: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    let mut hashes = 0;
    while bytes.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    j += 1;
    while j < bytes.len() {
        if bytes.get(j) == Some(&b'"') && (1..=hashes).all(|k| bytes.get(j + k) == Some(&b'#')) {
            return j + 1 + hashes;
        }
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::extract_comments;

    #[test]
    fn ignores_hashes_in_strings() {
        let comments = extract_comments("a \"#x\" r#\"#\"# # real\n# own\n");
        assert_eq!(comments.len(), 2);
        assert!(comments[0].trailing);
        assert_eq!(comments[0].text, "# real");
        assert!(!comments[1].trailing);
    }
}
