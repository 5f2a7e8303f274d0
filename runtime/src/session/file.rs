//! Sessions on disk, one append-only JSON Lines file per session, safe against a process killed
//! mid-write and against several processes writing one session.
//!
//! A file is named by a hash of the session id (ids are untrusted: `../..`, NUL bytes, megabytes)
//! and every line carries the id it belongs to, one event each:
//!
//! ```text
//! {"call":"Bash","at":1764000000,"session":"s-1"}
//! {"label":"secret-read","calls":3,"at":1764000000,"session":"s-1"}
//! {"label":"x","seconds":600,"at":1764000000,"session":"s-1"}
//! {"label":"y","at":1764000000,"session":"s-1"}
//! ```
//!
//! Lines of another id (two ids whose hashes collide share a file) are ignored, so each session
//! still reads only its own events. A line that does not parse is skipped: it is the torn tail of
//! a write that was killed, and skipping it keeps every event before and after it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::line::{self, MAX_LINE_BYTES};
use super::{SessionEvent, SessionState, SessionStore, StoreError, unix_now};

/// The largest session file read: a hostile or runaway file must not exhaust memory. Recording
/// refuses to grow a file past it, so every event recorded can be read back.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// The longest session id kept on disk: it is repeated on every line.
pub const MAX_SESSION_ID_BYTES: usize = 4096;

/// Sessions as files in one directory.
#[derive(Clone, Debug)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store keeping its files in `dir`, which is created (private to the user) on the first
    /// record.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileStore { dir: dir.into() }
    }

    /// `$XDG_STATE_HOME/sluice/sessions`, else `$HOME/.local/state/sluice/sessions`; `None` when
    /// neither is set to an absolute path.
    pub fn default_dir() -> Option<PathBuf> {
        let absolute = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let state = absolute("XDG_STATE_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".local").join("state")))?;
        Some(state.join("sluice").join("sessions"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `session`: always directly inside the store's directory, whatever the
    /// id.
    pub fn session_path(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{}.jsonl", line::name(session)))
    }

    /// [`SessionStore::record`] with an explicit time, for replay and tests.
    pub fn record_at(
        &self,
        session: &str,
        events: &[SessionEvent],
        at_unix: u64,
    ) -> Result<(), StoreError> {
        check_id(session)?;
        if events.is_empty() {
            return Ok(());
        }
        let path = self.session_path(session);
        let mut lines = encode(&path, session, events, at_unix)?;
        self.create_dir()?;
        exists_as_file(&path)?;
        let io_error = |action| {
            let path = path.clone();
            move |source| StoreError::Io {
                action,
                path,
                source,
            }
        };
        let mut file = open_for_append(&path).map_err(io_error("open"))?;
        // Exclusive for the whole append, so the lines of concurrent writers (threads or
        // processes) never interleave and the torn-tail check below sees a settled file.
        file.lock().map_err(io_error("lock"))?;
        let meta = file.metadata().map_err(io_error("inspect"))?;
        if !meta.is_file() {
            return Err(StoreError::NotAFile { path });
        }
        let len = meta.len();
        if len > 0 && last_byte(&mut file).map_err(io_error("read"))? != b'\n' {
            // A writer was killed mid-line: end its torn line so ours parses on its own.
            lines.insert(0, b'\n');
        }
        let size = len.saturating_add(lines.len() as u64);
        if size > MAX_FILE_BYTES {
            return Err(StoreError::TooLarge {
                path,
                size,
                limit: MAX_FILE_BYTES,
            });
        }
        // One write, then, for a group with a label, one sync: the durability point of the whole
        // group. Calls alone are not synced: a sync costs milliseconds (about 4 on this
        // project's machines), every pre-tool event records a call, and a count lost to a power
        // cut only holds a label for more calls, never fewer. A process that dies after the
        // write loses nothing either way.
        file.write_all(&lines).map_err(io_error("write"))?;
        if events.iter().any(|e| matches!(e, SessionEvent::Label(_))) {
            file.sync_data().map_err(io_error("sync"))?;
            if len == 0 {
                self.sync_dir();
            }
        }
        Ok(())
    }

    fn create_dir(&self) -> Result<(), StoreError> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.dir).map_err(|source| StoreError::Io {
            action: "create the directory of",
            path: self.dir.clone(),
            source,
        })
    }

    /// Makes a new file's name durable, not only its contents. Best effort: some file systems
    /// refuse to sync a directory, and the events themselves are already synced.
    fn sync_dir(&self) {
        #[cfg(unix)]
        if let Ok(dir) = File::open(&self.dir) {
            let _ = dir.sync_all();
        }
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
        let io_error = |action| {
            move |source| StoreError::Io {
                action,
                path: path.to_path_buf(),
                source,
            }
        };
        if !exists_as_file(path)? {
            return Ok(None);
        }
        let file = match File::open(path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            other => other.map_err(io_error("open"))?,
        };
        // Shared: readers do not wait for each other, only for a writer mid-append.
        file.lock_shared().map_err(io_error("lock"))?;
        let meta = file.metadata().map_err(io_error("inspect"))?;
        if !meta.is_file() {
            return Err(StoreError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let too_large = |size| StoreError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_FILE_BYTES,
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(too_large(meta.len()));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // Bounded even if a writer that ignores the lock grows the file meanwhile.
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error("read"))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(Some(bytes))
    }
}

impl SessionStore for FileStore {
    fn load(&self, session: &str) -> Result<SessionState, StoreError> {
        check_id(session)?;
        let mut state = SessionState::default();
        let Some(bytes) = self.read(&self.session_path(session))? else {
            return Ok(state);
        };
        for line in bytes.split(|b| *b == b'\n') {
            if let Some((event, at)) = line::decode(session, line) {
                state.apply(&event, at);
            }
        }
        Ok(state)
    }

    fn record(&self, session: &str, events: &[SessionEvent]) -> Result<(), StoreError> {
        self.record_at(session, events, unix_now())
    }
}

fn check_id(session: &str) -> Result<(), StoreError> {
    if session.len() > MAX_SESSION_ID_BYTES {
        return Err(StoreError::SessionIdTooLong {
            len: session.len(),
            limit: MAX_SESSION_ID_BYTES,
        });
    }
    Ok(())
}

fn encode(
    path: &Path,
    session: &str,
    events: &[SessionEvent],
    at: u64,
) -> Result<Vec<u8>, StoreError> {
    let mut lines = Vec::new();
    for event in events {
        let encoded = line::encode(session, event, at).map_err(|error| StoreError::Io {
            action: "encode an event for",
            path: path.to_path_buf(),
            source: io::Error::other(error),
        })?;
        let len = encoded.len();
        lines.extend_from_slice(encoded.as_bytes());
        // A line the reader would skip must not be reported as recorded.
        if len > MAX_LINE_BYTES {
            return Err(StoreError::EventTooLarge {
                path: path.to_path_buf(),
                len,
                limit: MAX_LINE_BYTES,
            });
        }
        lines.push(b'\n');
    }
    Ok(lines)
}

/// Whether `path` is an existing regular file; anything else in its place is an error. Checked
/// before opening, so a FIFO or device there is refused rather than blocked on.
fn exists_as_file(path: &Path) -> Result<bool, StoreError> {
    match std::fs::metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(StoreError::Io {
            action: "inspect",
            path: path.to_path_buf(),
            source,
        }),
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(_) => Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        }),
    }
}

fn open_for_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

fn last_byte(file: &mut File) -> io::Result<u8> {
    file.seek(SeekFrom::End(-1))?;
    let mut byte = [0u8; 1];
    file.read_exact(&mut byte)?;
    let [byte] = byte;
    Ok(byte)
}
