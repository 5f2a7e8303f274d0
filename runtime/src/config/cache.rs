//! The compiled-policy cache. A hook is one process per tool call, and compiling the default
//! chain is most of such a process's time; so the chain's lowered programs are stored in one
//! file per configuration, and read back while nothing they were compiled from has changed.
//!
//! A stored chain is used only when every input is as it was: the format and the binary that
//! wrote it, the configuration's text, the files each set is made of (a directory that gains a
//! file is a new set), and every file compiled into it, imports and schemas included, compared
//! by a hash of its text. Anything else (a missing, truncated, corrupt or stale file) is
//! rebuilt from the sources and written anew, never trusted. Writes go to a temporary file that
//! is renamed into place, so a reader sees an old file or a whole new one.
//!
//! The cache is as trusted as the configuration itself: both live where the user (and so the
//! agent) can write, and `builtin:coding-agent` guards both (lang-spec/hooks.md).

use std::borrow::Cow;
use std::hash::Hasher;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use siphasher::sip128::{Hasher128, SipHasher13};
use sluice_compiler::ast::RuleKind;
use sluice_compiler::check::Ty;
use sluice_compiler::executable::Executable;
use sluice_compiler::ir::{Program, stored_types};
use sluice_compiler::jit::Backend;
use sluice_compiler::load::SetSource;
use sluice_compiler::scan::ProgramIndex;
use sluice_compiler::shell::EffectTable;

use super::{Config, ConfigError, chain_of};
use crate::chain::Chain;
use crate::policy::LoadedPolicy;
use crate::registry::Scope;

/// The first bytes of every cache file.
const MAGIC: &[u8; 8] = b"SLUICEPC";

/// How long a chain file stays once nothing has rewritten it: one is kept per configuration
/// ever judged, so the files of projects gone would pile up. A configuration in use whose file
/// goes compiles once more (about 30 ms) and writes it again.
const KEEP_UNWRITTEN: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How long a temporary file may wait to be renamed into place before its writer counts as dead.
const KEEP_TEMPORARY: Duration = Duration::from_secs(24 * 60 * 60);

/// The layout of what follows the magic: a checksum of the rest, the key, then the sets. A file
/// of another format is rebuilt.
const FORMAT: u32 = 7;

/// Where compiled chains are kept.
#[derive(Clone, Debug)]
pub struct PolicyCache {
    dir: PathBuf,
}

/// What became of the cache on one load, for `sluice init --check` and the tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheUse {
    /// The stored chain was current and used.
    Hit,
    /// There was none, or it was stale or unreadable: the chain was compiled and stored.
    Rebuilt,
    /// The chain was compiled, and storing it failed (a read-only directory, a full disk): the
    /// next call compiles again.
    NotStored,
}

/// The rules a caller will run. A hook event judges a call before it runs or its output after
/// it ran, never both; a set with no rule for that stage is not read back, and judges as a set
/// without rules (most of the default chain's post-checks are one set, its pre-checks three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stages {
    /// Every rule.
    All,
    /// Pre-checks, gates and concurrency rules: a call that has not run.
    BeforeRun,
    /// Post-checks: a call's result.
    AfterRun,
}

/// One stored set: what it was compiled from, which stages its rules judge, and what it
/// compiled to.
#[derive(Serialize, Deserialize)]
struct StoredSet<'a> {
    /// The set's name and files as the configuration's sources named them.
    source: String,
    files: Vec<String>,
    /// Every file compiled into the set, with the hash of its text.
    inputs: Vec<(String, u128)>,
    name: String,
    declared: Vec<String>,
    /// Whether the set has rules that judge a call before it runs, and after.
    before_run: bool,
    after_run: bool,
    /// The program in postcard, and the table of the types its nodes name by number, each
    /// apart so that they can be left unread. They are written as sequences of bytes and read
    /// back borrowed: postcard lays out both alike (a length, then the bytes).
    #[serde(borrow)]
    types: Cow<'a, [u8]>,
    #[serde(borrow)]
    program: Cow<'a, [u8]>,
    /// What the field scans and part guards need of each rule (`ProgramIndex`): with it, a
    /// program read back reads a rule's nodes only when a call runs the rule.
    #[serde(borrow)]
    index: Cow<'a, [u8]>,
}

impl StoredSet<'_> {
    fn needed(&self, stages: Stages) -> bool {
        match stages {
            Stages::All => true,
            Stages::BeforeRun => self.before_run,
            Stages::AfterRun => self.after_run,
        }
    }
}

impl PolicyCache {
    pub fn new(dir: impl Into<PathBuf>) -> PolicyCache {
        PolicyCache { dir: dir.into() }
    }

    /// The user's cache: `$SLUICE_CACHE_DIR`, else `$XDG_CACHE_HOME/sluice`, else
    /// `$HOME/.cache/sluice`; `None` when none of them is set.
    pub fn for_user() -> Option<PolicyCache> {
        let var = |name| std::env::var_os(name).filter(|value| !value.is_empty());
        var("SLUICE_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|dir| PathBuf::from(dir).join("sluice")))
            .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache/sluice")))
            .map(PolicyCache::new)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `config`'s chain: one per configuration file.
    pub fn file_for(&self, config: &Config) -> PathBuf {
        let path = std::path::absolute(&config.path).unwrap_or_else(|_| config.path.clone());
        let name = format!("chain-{:032x}.bin", hash(path.to_string_lossy().as_bytes()));
        self.dir.join(name)
    }

    /// `config`'s chain for the interpreter, each set ready for one call: from the cache when
    /// it is current, else compiled and stored.
    pub fn chain(&self, config: &Config) -> Result<(Chain, CacheUse), ConfigError> {
        self.chain_and_hash(config)
            .map(|(chain, used, _)| (chain, used))
    }

    /// [`PolicyCache::chain`], with the chain's [`policy_hash`].
    pub fn chain_and_hash(
        &self,
        config: &Config,
    ) -> Result<(Chain, CacheUse, String), ConfigError> {
        self.chain_for(config, Stages::All)
    }

    /// [`PolicyCache::chain_and_hash`] for a caller that runs only `stages`: a stored set with
    /// no rule for them is not read back.
    pub fn chain_for(
        &self,
        config: &Config,
        stages: Stages,
    ) -> Result<(Chain, CacheUse, String), ConfigError> {
        let sources = config.set_sources()?;
        let file = self.file_for(config);
        let key = key(config);
        let stored = key.and_then(|key| read(&file, key, &sources, config, stages));
        if let Some((chain, hash)) = stored {
            return Ok((chain, CacheUse::Hit, hash));
        }
        let compiled = config.compile_sets(&sources, Backend::Interp)?;
        let identity = policy_hash(
            config,
            compiled
                .iter()
                .flat_map(|(_, inputs)| inputs)
                .map(|(path, text)| (path.as_str(), text_hash(text.as_bytes()))),
        );
        let Some(key) = key else {
            return Ok((chain_of(sources, compiled), CacheUse::NotStored, identity));
        };
        let stored: Option<Vec<StoredSet>> = sources
            .iter()
            .zip(&compiled)
            .map(|((source, _), (policy, inputs))| {
                let program = policy.executable.program();
                let kinds = || program.rules.iter().map(|rule| rule.meta.kind);
                let (written, types) = stored_types::write_with(|| postcard::to_stdvec(&**program));
                Some(StoredSet {
                    source: source.name.clone(),
                    files: file_names(source),
                    inputs: inputs
                        .iter()
                        .map(|(path, text)| (path.clone(), hash(text.as_bytes())))
                        .collect(),
                    name: policy.name.clone(),
                    declared: policy.declared().map(str::to_string).collect(),
                    before_run: kinds().any(|kind| kind != RuleKind::Postcheck),
                    after_run: kinds().any(|kind| kind == RuleKind::Postcheck),
                    types: Cow::Owned(postcard::to_stdvec(&types).ok()?),
                    program: Cow::Owned(written.ok()?),
                    index: Cow::Owned(postcard::to_stdvec(&ProgramIndex::of(program)).ok()?),
                })
            })
            .collect();
        let written = stored.map(|stored| write(&file, key, &stored));
        let used = match written {
            Some(Ok(())) => {
                // A rebuild is rare and already slow: the time to look for files gone stale.
                prune(&self.dir, &file, SystemTime::now());
                CacheUse::Rebuilt
            }
            Some(Err(_)) | None => CacheUse::NotStored,
        };
        Ok((chain_of(sources, compiled), used, identity))
    }
}

/// What identifies a chain in decision logs and on `/readyz`: a hash of the configuration's text
/// and of every file compiled into its sets (imports and schemas included), each named by its
/// path. Two processes that report the same hash decide alike.
pub fn policy_hash<'a>(
    config: &Config,
    inputs: impl IntoIterator<Item = (&'a str, u128)>,
) -> String {
    let mut hasher = SipHasher13::new();
    hasher.write(config.text().as_bytes());
    for (path, text) in inputs {
        hasher.write(&(path.len() as u64).to_le_bytes());
        hasher.write(path.as_bytes());
        hasher.write(&text.to_le_bytes());
    }
    format!("{:032x}", hasher.finish128().as_u128())
}

/// The hash of a file's text, as [`policy_hash`] and the cache compare them.
pub fn text_hash(bytes: &[u8]) -> u128 {
    hash(bytes)
}

/// The stored chain, if the file holds one of this format, for this key and these sources,
/// and every file compiled into it is unchanged.
fn read(
    file: &Path,
    key: u128,
    sources: &[(SetSource, Scope)],
    config: &Config,
    stages: Stages,
) -> Option<(Chain, String)> {
    let bytes = std::fs::read(file).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (format, rest) = rest.split_first_chunk::<4>()?;
    if u32::from_le_bytes(*format) != FORMAT {
        return None;
    }
    // A file damaged in place (a disk error, a partial copy) could still read as a program, one
    // that no compiler made; its checksum tells.
    let (checksum, rest) = rest.split_first_chunk::<16>()?;
    if u128::from_le_bytes(*checksum) != hash(rest) {
        return None;
    }
    // The key comes before anything is read back.
    let (stored_key, rest) = rest.split_first_chunk::<16>()?;
    if u128::from_le_bytes(*stored_key) != key {
        return None;
    }
    let stored: Vec<StoredSet> = postcard::from_bytes(rest).ok()?;
    if stored.len() != sources.len() {
        return None;
    }
    let hash = policy_hash(
        config,
        stored
            .iter()
            .flat_map(|set| &set.inputs)
            .map(|(path, hash)| (path.as_str(), *hash)),
    );
    let mut chain = Chain::new();
    for (set, (source, scope)) in stored.into_iter().zip(sources) {
        let current = set.source == source.name
            && set.files == file_names(source)
            && set
                .inputs
                .iter()
                .all(|(path, stored)| unchanged(path, *stored));
        if !current {
            return None;
        }
        let executable = match set.needed(stages) {
            true => {
                let types: Vec<Ty> = postcard::from_bytes(&set.types).ok()?;
                let program: Program =
                    stored_types::read_with(types, || postcard::from_bytes(&set.program)).ok()?;
                let index: ProgramIndex = postcard::from_bytes(&set.index).ok()?;
                if !index.fits(&program) {
                    return None;
                }
                Executable::for_one_call_indexed(Arc::new(program), &index)
            }
            false => {
                Executable::for_one_call(Arc::new(Program::without_rules(EffectTable::built_in())))
            }
        };
        let policy = LoadedPolicy::from_parts(set.name, executable, set.declared);
        chain.push(scope.clone(), Arc::new(policy));
    }
    Some((chain, hash))
}

/// Whether the file at `path` still has the text whose hash is `stored`. A built-in file is
/// part of the binary, which the key already names: only the files on disk are read again.
fn unchanged(path: &str, stored: u128) -> bool {
    path.starts_with(sluice_compiler::builtin::PREFIX)
        || sluice_compiler::load::read_text(Path::new(path))
            .is_ok_and(|text| hash(text.as_bytes()) == stored)
}

/// Writes `stored` to a temporary file beside `file`, then renames it into place.
fn write(file: &Path, key: u128, stored: &[StoredSet]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let sets = postcard::to_stdvec(stored).map_err(std::io::Error::other)?;
    let mut body = Vec::with_capacity(16 + sets.len());
    body.extend_from_slice(&key.to_le_bytes());
    body.extend_from_slice(&sets);
    let temporary = file.with_extension(format!("tmp.{}", std::process::id()));
    let written = (|| {
        let mut out = std::fs::File::create(&temporary)?;
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT.to_le_bytes())?;
        out.write_all(&hash(&body).to_le_bytes())?;
        out.write_all(&body)?;
        out.sync_data()?;
        std::fs::rename(&temporary, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Removes the chain files in `dir`, other than `keep`, that nothing has written for
/// [`KEEP_UNWRITTEN`], and the temporary files of writers that died before renaming theirs.
/// Only the cache's own names are touched: the directory may be shared.
fn prune(dir: &Path, keep: &Path, now: SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(rest) = name.strip_prefix("chain-") else {
            continue;
        };
        let limit = if rest.ends_with(".bin") {
            KEEP_UNWRITTEN
        } else if rest.contains(".tmp.") {
            KEEP_TEMPORARY
        } else {
            continue;
        };
        let stale = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > limit);
        if stale && path != keep {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The set's files as its source lists them.
fn file_names(source: &SetSource) -> Vec<String> {
    source
        .files
        .iter()
        .map(|path| path.display().to_string())
        .collect()
}

/// What every stored chain of this configuration depends on beyond its sets' files: the
/// binary that compiled it (its version, and the file's path, size and modification time, so
/// that a rebuilt binary, with other built-in sets or another compiler, does not read what an
/// older one wrote), and the configuration. `None` when the binary cannot be told apart from
/// another: then nothing is read or stored.
fn key(config: &Config) -> Option<u128> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let mut hasher = SipHasher13::new();
    hasher.write(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.write_u32(FORMAT);
    hasher.write(exe.to_string_lossy().as_bytes());
    hasher.write_u64(meta.len());
    hasher.write_u128(modified.as_nanos());
    hasher.write(config.path.to_string_lossy().as_bytes());
    hasher.write_u8(0);
    hasher.write(config.text.as_bytes());
    Some(hasher.finish128().as_u128())
}

/// The checksum of a stored chain and the hash of each file's text: XXH3, which reads the
/// 100 KB of a default chain's file in a tenth of SipHash's time. Nothing here is a secret or
/// an adversary's choice (whoever can write these files can write the policies), so a fast
/// non-cryptographic hash is enough to tell a changed or damaged file.
fn hash(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}
