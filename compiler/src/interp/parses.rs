//! The command lines one call's rules parse. A line is parsed once per call however many rules
//! and sets read it: a chain hands one memo to every set it evaluates, so `shell-safety`,
//! `git-guard` and `coding-agent` share the parse of the same command. The parts are borrowed
//! from here like the call's own JSON.

use std::borrow::Borrow;
use std::cell::RefCell;
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};
use serde_json::Value as Json;

use super::ops::{OpResult, string};
use super::value::Value;
use crate::shell::EffectTable;

/// One parsed line: what it was parsed against, and its parts as the language reads them.
struct Parsed {
    key: Key,
    parts: Json,
}

/// What a parse depends on: the line, the working and home directories, and the effect table
/// (sets that declare effects of their own have their own table, so their parts differ).
struct Key {
    table: usize,
    line: String,
    cwd: Option<String>,
    home: Option<String>,
}

/// The lines parsed for one call, indexed by a hash of their key. A key whose hash another key
/// already holds is parsed and kept without an index entry: a collision costs a parse, never a
/// wrong answer, and a hostile policy that parses many lines still finds each in constant time.
#[derive(Default)]
pub struct ShellParses {
    parsed: elsa::FrozenVec<Box<Parsed>>,
    index: RefCell<FxHashMap<u64, usize>>,
    /// Whether the bash grammar's time budget is lifted: for a policy's own examples, checked
    /// when it loads, whose verdict must not depend on how busy the machine is.
    untimed: bool,
}

impl ShellParses {
    /// Parses without the grammar's time budget (the other limits hold).
    pub fn untimed() -> ShellParses {
        ShellParses {
            untimed: true,
            ..ShellParses::default()
        }
    }

    /// How many lines were parsed (for tests of sharing).
    pub fn len(&self) -> usize {
        self.parsed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parsed.is_empty()
    }

    fn parts(
        &self,
        table: &EffectTable,
        line: &str,
        cwd: Option<&str>,
        home: Option<&str>,
    ) -> &Json {
        let address = std::ptr::from_ref(table) as usize;
        let hash = {
            let mut hasher = FxHasher::default();
            (address, line, cwd, home).hash(&mut hasher);
            hasher.finish()
        };
        let found = self.index.borrow().get(&hash).copied();
        if let Some(at) = found
            && let Some(parsed) = self.parsed.get(at)
        {
            let key = &parsed.key;
            if key.table == address
                && key.line == line
                && key.cwd.as_deref() == cwd
                && key.home.as_deref() == home
            {
                return &parsed.parts;
            }
        }
        let dirs = crate::shell::Dirs { cwd, home };
        let mut limits = crate::shell::Limits::default();
        if self.untimed {
            limits.grammar_time = std::time::Duration::from_secs(60);
        }
        let commands = crate::shell::parse_command_in(line, dirs, limits);
        let parts = crate::shell::parts_json_in(&commands, table, home);
        let at = self.parsed.len();
        let parsed = self.parsed.push_get(Box::new(Parsed {
            key: Key {
                table: address,
                line: line.to_string(),
                cwd: cwd.map(str::to_string),
                home: home.map(str::to_string),
            },
            parts,
        }));
        if found.is_none() {
            self.index.borrow_mut().insert(hash, at);
        }
        &parsed.parts
    }
}

/// The parses a call's facts read: their own, or the call's, shared by every set of a chain.
pub enum Parses<'a> {
    Own(ShellParses),
    Shared(&'a ShellParses),
}

impl Default for Parses<'_> {
    fn default() -> Self {
        Parses::Own(ShellParses::default())
    }
}

impl Parses<'_> {
    pub fn get(&self) -> &ShellParses {
        match self {
            Parses::Own(parses) => parses,
            Parses::Shared(parses) => parses,
        }
    }
}

/// `shell(line)`, `shell(line, cwd)` or `shell(line, cwd, home)`: the line's simple commands as
/// part records. Both backends call this.
pub fn shell<'a, V: Borrow<Value<'a>>>(
    args: &[V],
    parses: &'a ShellParses,
    effects: &EffectTable,
) -> OpResult<'a> {
    // A directory that is missing or null is as if it were left out.
    let text = |n: usize| match args.get(n).map(Borrow::borrow) {
        Some(value) if n > 0 && value.is_absent() => Ok(None),
        Some(value) => string(n, value).map(Some),
        None => Ok(None),
    };
    let line = text(0)?.unwrap_or_default();
    let cwd = text(1)?;
    let home = text(2)?;
    Ok(Value::Json(parses.parts(effects, line, cwd, home)))
}
