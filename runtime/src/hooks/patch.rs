//! Codex's `apply_patch` format, read far enough to know what each file would become:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: PATH        then `+` lines, the new file
//! *** Delete File: PATH
//! *** Update File: PATH     optionally `*** Move to: PATH`, then `@@` hunks of ` `, `-`, `+` lines
//! *** End Patch
//! ```

/// One file the patch touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChange {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        /// Where the file moves, if it does.
        move_to: Option<String>,
        /// The lines the hunks remove or keep, and the lines they leave.
        old_text: String,
        new_text: String,
    },
}

/// Why a patch cannot be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("the patch does not start with `*** Begin Patch`")]
    NoBegin,
    #[error("the patch does not end with `*** End Patch`")]
    NoEnd,
    #[error("line {0} of the patch is not part of any file: `{1}`")]
    Stray(usize, String),
    #[error("the patch changes no file")]
    Empty,
}

pub fn parse(patch: &str) -> Result<Vec<FileChange>, PatchError> {
    let mut lines = patch.lines().enumerate().map(|(i, l)| (i + 1, l));
    let first = lines.by_ref().find(|(_, l)| !l.trim().is_empty());
    if first.map(|(_, l)| l.trim()) != Some("*** Begin Patch") {
        return Err(PatchError::NoBegin);
    }
    let mut changes: Vec<FileChange> = Vec::new();
    let mut ended = false;
    for (number, line) in lines {
        if ended {
            if line.trim().is_empty() {
                continue;
            }
            return Err(PatchError::Stray(number, line.to_string()));
        }
        if line.trim() == "*** End Patch" {
            ended = true;
        } else if let Some(path) = line.strip_prefix("*** Add File: ") {
            changes.push(FileChange::Add {
                path: path.trim().to_string(),
                content: String::new(),
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            changes.push(FileChange::Delete {
                path: path.trim().to_string(),
            });
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            changes.push(FileChange::Update {
                path: path.trim().to_string(),
                move_to: None,
                old_text: String::new(),
                new_text: String::new(),
            });
        } else if let Some(target) = line.strip_prefix("*** Move to: ") {
            match changes.last_mut() {
                Some(FileChange::Update { move_to, .. }) => *move_to = Some(target.trim().into()),
                _ => return Err(PatchError::Stray(number, line.to_string())),
            }
        } else {
            body_line(changes.last_mut(), number, line)?;
        }
    }
    if !ended {
        return Err(PatchError::NoEnd);
    }
    if changes.is_empty() {
        return Err(PatchError::Empty);
    }
    Ok(changes)
}

fn body_line(change: Option<&mut FileChange>, number: usize, line: &str) -> Result<(), PatchError> {
    let stray = || PatchError::Stray(number, line.to_string());
    match change {
        Some(FileChange::Add { content, .. }) => {
            let added = line.strip_prefix('+').ok_or_else(stray)?;
            push_line(content, added);
        }
        Some(FileChange::Update {
            old_text, new_text, ..
        }) => {
            if line.starts_with("@@") || line == "*** End of File" {
                return Ok(());
            }
            match line.chars().next() {
                Some('-') => push_line(old_text, line.get(1..).unwrap_or_default()),
                Some('+') => push_line(new_text, line.get(1..).unwrap_or_default()),
                // A context line, or an empty one (a context line whose space was trimmed).
                Some(' ') | None => {
                    let kept = line.get(1..).unwrap_or_default();
                    push_line(old_text, kept);
                    push_line(new_text, kept);
                }
                Some(_) => return Err(stray()),
            }
        }
        Some(FileChange::Delete { .. }) | None => {
            if !line.trim().is_empty() {
                return Err(stray());
            }
        }
    }
    Ok(())
}

fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    text.push('\n');
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_change() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@ fn main\n keep\n-old\n+new\n*** Delete File: gone.txt\n*** End Patch\n";
        let changes = parse(patch).unwrap();
        assert_eq!(
            changes,
            vec![
                FileChange::Add {
                    path: "new.txt".into(),
                    content: "hello\nworld\n".into()
                },
                FileChange::Update {
                    path: "src/a.rs".into(),
                    move_to: Some("src/b.rs".into()),
                    old_text: "keep\nold\n".into(),
                    new_text: "keep\nnew\n".into(),
                },
                FileChange::Delete {
                    path: "gone.txt".into()
                },
            ]
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert_eq!(parse("hello"), Err(PatchError::NoBegin));
        assert_eq!(
            parse("*** Begin Patch\n*** Add File: a\n+x\n"),
            Err(PatchError::NoEnd)
        );
        assert_eq!(
            parse("*** Begin Patch\n*** End Patch\n"),
            Err(PatchError::Empty)
        );
        assert_eq!(
            parse("*** Begin Patch\n*** Add File: a\nx\n*** End Patch"),
            Err(PatchError::Stray(3, "x".into()))
        );
        assert!(matches!(
            parse("*** Begin Patch\n*** Delete File: a\n*** End Patch\nrm -rf /"),
            Err(PatchError::Stray(4, _))
        ));
    }
}
