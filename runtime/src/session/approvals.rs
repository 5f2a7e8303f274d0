//! The calls a person approved, for `sluice allow --last`. A hook cannot see the person answer,
//! but it sees the result: a call the chain asked about whose output later arrives ran, so
//! someone approved it. The pre-tool hook notes each call it asked about in its session's
//! `…asked.jsonl`; the post-tool hook finds the call there and appends it to `approved.jsonl`,
//! one file for every session, so the latest approval is its last line.
//!
//! Appends take the file's lock and go out in one write, not synced; a torn line is skipped on
//! reading.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sluice_compiler::call::Call;

use super::line;

/// The most of either file read: older approvals are not worth a hook's time.
const MAX_BYTES: u64 = 4 << 20;

/// One call, with when and in which session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Noted {
    pub call: Call,
    pub at: u64,
    pub session: String,
}

/// The approvals kept in a directory (the file store's).
#[derive(Clone, Debug)]
pub struct Approvals {
    dir: PathBuf,
}

impl Approvals {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Approvals { dir: dir.into() }
    }

    fn asked_path(&self, session: &str) -> PathBuf {
        self.dir
            .join(format!("{}.asked.jsonl", line::name(session)))
    }

    fn approved_path(&self) -> PathBuf {
        self.dir.join("approved.jsonl")
    }

    /// Notes calls the chain asked a person about.
    pub fn asked(&self, session: &str, calls: &[Call]) -> std::io::Result<()> {
        let at = super::unix_now();
        let lines: Vec<Noted> = calls
            .iter()
            .map(|call| Noted {
                call: bare(call),
                at,
                session: session.to_string(),
            })
            .collect();
        append(&self.dir, &self.asked_path(session), &lines)
    }

    /// After a call ran: when it had been asked about in its session, it was approved. Whether
    /// it was.
    pub fn ran(&self, session: &str, call: &Call) -> std::io::Result<bool> {
        let path = self.asked_path(session);
        if !path.is_file() {
            return Ok(false);
        }
        let ran = bare(call);
        let asked = read(&path)?
            .into_iter()
            .any(|noted| noted.session == session && same(&noted.call, &ran));
        if asked {
            let noted = Noted {
                call: ran,
                at: super::unix_now(),
                session: session.to_string(),
            };
            append(&self.dir, &self.approved_path(), &[noted])?;
        }
        Ok(asked)
    }

    /// The latest approved call, of `session` or of any.
    pub fn last(&self, session: Option<&str>) -> std::io::Result<Option<Noted>> {
        let path = self.approved_path();
        if !path.is_file() {
            return Ok(None);
        }
        Ok(read(&path)?
            .into_iter()
            .rev()
            .find(|noted| session.is_none_or(|s| noted.session == s)))
    }
}

/// The call as it is judged again: what the host gave, without what the session or a result
/// added.
fn bare(call: &Call) -> Call {
    Call {
        session: None,
        result: None,
        ..call.clone()
    }
}

/// The same call: the tool and its arguments (the context holds ids that change per event).
fn same(a: &Call, b: &Call) -> bool {
    a.tool == b.tool && a.args == b.args
}

fn append(dir: &Path, path: &Path, lines: &[Noted]) -> std::io::Result<()> {
    let mut text = String::new();
    for noted in lines {
        text.push_str(&serde_json::to_string(noted).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.lock()?;
    // A torn line before is ended, so this one reads whole.
    let torn = std::fs::read(path).is_ok_and(|bytes| bytes.last().is_some_and(|b| *b != b'\n'));
    if torn {
        text.insert(0, '\n');
    }
    // Not synced: an approval lost to a power cut only means proposing an older one.
    file.write_all(text.as_bytes())
}

fn read(path: &Path) -> std::io::Result<Vec<Noted>> {
    let file = std::fs::File::open(path)?;
    file.lock_shared()?;
    let length = file.metadata()?.len();
    let mut bytes = Vec::new();
    let mut file = file;
    // The newest lines are the last: a file past the bound is read from its end.
    if length > MAX_BYTES {
        use std::io::Seek;
        file.seek(std::io::SeekFrom::Start(length - MAX_BYTES))?;
    }
    file.take(MAX_BYTES).read_to_end(&mut bytes)?;
    Ok(bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_call_asked_about_that_then_ran_is_the_last_approved() {
        let dir = std::env::temp_dir().join(format!("sluice-approvals-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let approvals = Approvals::new(&dir);
        let push = Call::new("bash", serde_json::json!({ "command": "git push" }));
        let ls = Call::new("bash", serde_json::json!({ "command": "ls" }));
        approvals.asked("s1", std::slice::from_ref(&push)).unwrap();
        // A call that was not asked about ran on its own.
        assert!(!approvals.ran("s1", &ls).unwrap());
        assert!(approvals.last(None).unwrap().is_none());
        // Another session's identical call was never asked about there.
        assert!(!approvals.ran("s2", &push).unwrap());
        assert!(approvals.ran("s1", &push).unwrap());
        let last = approvals.last(None).unwrap().unwrap();
        assert_eq!(
            (last.call.tool.as_str(), last.session.as_str()),
            ("bash", "s1")
        );
        assert!(approvals.last(Some("s2")).unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
