//! What commands do to files and the world: the effect table, as data.
//!
//! The built-in table is `effects.json` beside this file (documented in `lang-spec/shell.md`); a
//! policy set adds rows with `effects` declarations. Each row names commands (and optionally a
//! subcommand, the first operand, and flags of which one must be present) and says which
//! operands the command reads, writes or deletes, and whether it reaches the network or runs
//! other code. Rows that apply to a command add up.

use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use super::command::SimpleCommand;
use super::normalize::resolve;
use super::tables::{self, EFFECT_NAMES, EFFECT_ROWS, EFFECTS_TEXT};

/// Which operands an effect applies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Operands {
    /// Every operand.
    All,
    First,
    Last,
    AllButFirst,
    AllButLast,
    /// The working directory itself (`tar -x`, `wget`).
    Cwd,
    /// Some of what is under the working directory, as `CWD/**` (`git clean`, `cargo clean`).
    CwdContents,
    /// Operands written `PREFIX<path>`, such as `of=` for `dd`.
    After(String),
    /// What is under the first operand: `FIRST/*`, or with a test `FIRST/**` or
    /// `FIRST/**/NAME` (`find DIR -name NAME -delete`).
    FirstContents,
    /// The values of these options (`sort -o FILE`, `curl -T FILE`).
    Option(Vec<String>),
    /// Of these options' values, the files named after an `@` (`curl -d @file`,
    /// `curl -F f=@file;type=text/plain`).
    OptionFile(Vec<String>),
    /// A fixed path, relative to the working directory (`git config` writes `.git/config`).
    Fixed(String),
}

impl Operands {
    /// Reads a selector as the table writes it.
    pub fn parse(text: &str) -> Result<Operands, String> {
        Ok(match text {
            "operands" => Operands::All,
            "first" => Operands::First,
            "last" => Operands::Last,
            "all_but_first" => Operands::AllButFirst,
            "all_but_last" => Operands::AllButLast,
            "cwd" => Operands::Cwd,
            "cwd_contents" => Operands::CwdContents,
            "first_contents" => Operands::FirstContents,
            other => {
                if let Some(prefix) = other.strip_prefix("after:").filter(|p| !p.is_empty()) {
                    Operands::After(prefix.to_string())
                } else if let Some(names) = other.strip_prefix("option:").filter(|p| !p.is_empty())
                {
                    Operands::Option(names.split(',').map(str::to_string).collect())
                } else if let Some(names) = other.strip_prefix("option@:").filter(|p| !p.is_empty())
                {
                    Operands::OptionFile(names.split(',').map(str::to_string).collect())
                } else if let Some(path) = other.strip_prefix("path:").filter(|p| !p.is_empty()) {
                    Operands::Fixed(path.to_string())
                } else {
                    return Err(format!("unknown operand selector `{other}`"));
                }
            }
        })
    }

    /// The selected operands' paths.
    fn select(
        &self,
        command: &SimpleCommand,
        skip: usize,
        out: &mut Vec<String>,
        home: Option<&str>,
    ) {
        let paths = command.paths.get(skip..).unwrap_or(&[]);
        let args = command.args.get(skip..).unwrap_or(&[]);
        let chosen: &[String] = match self {
            Operands::All => paths,
            Operands::First => paths.get(..1).unwrap_or(&[]),
            Operands::Last => paths.get(paths.len().saturating_sub(1)..).unwrap_or(&[]),
            Operands::AllButFirst => paths.get(1..).unwrap_or(&[]),
            Operands::AllButLast => paths.get(..paths.len().saturating_sub(1)).unwrap_or(&[]),
            Operands::Cwd => {
                out.push(command.cwd.clone().unwrap_or_else(|| ".".to_string()));
                return;
            }
            Operands::CwdContents => {
                out.push(resolve("**", command.cwd.as_deref(), home));
                return;
            }
            Operands::FirstContents => {
                // With a test (`find . -name '*.pyc' -delete`), what matches anywhere under the
                // start: `START/**/NAME`, or `START/**`; with none, everything: `START/*`.
                let name = command
                    .options
                    .iter()
                    .find(|(option, _)| option == "-name" || option == "-iname")
                    .map(|(_, name)| format!("**/{name}"));
                let under = name.unwrap_or_else(|| {
                    if command.options.is_empty() {
                        "*"
                    } else {
                        "**"
                    }
                    .to_string()
                });
                for first in args.get(..1).unwrap_or(&[]) {
                    let first = first.trim_end_matches('/');
                    out.push(resolve(
                        &format!("{first}/{under}"),
                        command.cwd.as_deref(),
                        home,
                    ));
                }
                return;
            }
            Operands::Option(names) => {
                for (option, value) in &command.options {
                    if names.contains(option) && !value.is_empty() && value != "-" {
                        out.push(resolve(value, command.cwd.as_deref(), home));
                    }
                }
                return;
            }
            Operands::OptionFile(names) => {
                for (option, value) in &command.options {
                    let file = value
                        .split_once('@')
                        .map(|(_, file)| file.split(';').next().unwrap_or(file));
                    if names.contains(option)
                        && let Some(file) = file.filter(|f| !f.is_empty() && *f != "-")
                    {
                        out.push(resolve(file, command.cwd.as_deref(), home));
                    }
                }
                return;
            }
            Operands::Fixed(path) => {
                out.push(resolve(path, command.cwd.as_deref(), home));
                return;
            }
            Operands::After(prefix) => {
                for arg in args {
                    if let Some(rest) = arg.strip_prefix(prefix.as_str()) {
                        out.push(resolve(rest, command.cwd.as_deref(), home));
                    }
                }
                return;
            }
        };
        out.extend(chosen.iter().cloned());
    }
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct EffectRow {
    pub commands: Vec<String>,
    pub subcommands: Vec<String>,
    /// Words of which one must be among the operands (`gcloud … delete`).
    pub operands: Vec<String>,
    pub flags: Vec<String>,
    pub reads: Option<Operands>,
    pub writes: Option<Operands>,
    pub deletes: Option<Operands>,
    pub network: bool,
    pub executes: bool,
    /// Destroys data no path names: cloud resources, clusters, databases.
    pub destroys: bool,
    /// Changes the system or other processes: services, users, mounts, signals.
    pub system: bool,
    /// Only reads: with no other row adding an effect, the command is read-only.
    pub read_only: bool,
}

/// A row as JSON writes it (the built-in table, and `effects` declarations).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowSpec {
    command: OneOrMany,
    #[serde(default)]
    subcommand: Option<OneOrMany>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    operand: Option<OneOrMany>,
    #[serde(default)]
    reads: Option<String>,
    #[serde(default)]
    writes: Option<String>,
    #[serde(default)]
    deletes: Option<String>,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    executes: bool,
    #[serde(default)]
    destroys: bool,
    #[serde(default)]
    system: bool,
    #[serde(default)]
    read_only: bool,
}

/// A name or a list of names. Read by hand: an untagged enum buffers every value and tries
/// each form in turn, which was most of the cost of loading the built-in table.
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> serde::de::Visitor<'de> for Names {
            type Value = OneOrMany;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a name or a list of names")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany::One(name.to_string()))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<OneOrMany, A::Error> {
                let mut names = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(OneOrMany::Many(names))
            }
        }
        deserializer.deserialize_any(Names)
    }
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        }
    }
}

impl EffectRow {
    /// A row from its JSON form, or why it is not one.
    pub fn from_json(json: &serde_json::Value) -> Result<EffectRow, String> {
        let spec: RowSpec = serde::Deserialize::deserialize(json).map_err(|e| e.to_string())?;
        EffectRow::from_spec(spec)
    }

    fn from_spec(spec: RowSpec) -> Result<EffectRow, String> {
        let selector = |s: Option<String>| s.as_deref().map(Operands::parse).transpose();
        let row = EffectRow {
            commands: spec.command.into_vec(),
            subcommands: spec.subcommand.map(OneOrMany::into_vec).unwrap_or_default(),
            flags: spec.flags,
            operands: spec.operand.map(OneOrMany::into_vec).unwrap_or_default(),
            reads: selector(spec.reads)?,
            writes: selector(spec.writes)?,
            deletes: selector(spec.deletes)?,
            network: spec.network,
            executes: spec.executes,
            destroys: spec.destroys,
            system: spec.system,
            read_only: spec.read_only,
        };
        if row.commands.is_empty() || row.commands.iter().any(String::is_empty) {
            return Err("`command` must name at least one command".into());
        }
        Ok(row)
    }

    /// Whether the row applies, and how many operands its subcommand takes (`s3 rm` is two).
    fn applies(&self, command: &SimpleCommand) -> Option<usize> {
        if !self.commands.contains(&command.name)
            || !(self.flags.is_empty() || self.flags.iter().any(|f| command.flags.contains(f)))
            || !(self.operands.is_empty() || command.args.iter().any(|a| self.operands.contains(a)))
        {
            return None;
        }
        if self.subcommands.is_empty() {
            return Some(0);
        }
        self.subcommands.iter().find_map(|sub| {
            let words = sub.split(' ').count();
            let given = command.args.get(..words)?;
            given
                .iter()
                .map(String::as_str)
                .eq(sub.split(' '))
                .then_some(words)
        })
    }
}

/// What one command does, by the table.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Effects {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
    pub deletes: Vec<String>,
    pub network: bool,
    pub executes: bool,
    pub destroys: bool,
    pub system: bool,
    /// Some row names the program.
    pub known: bool,
    /// Some row says it only reads, and nothing else it does writes, deletes, reaches the
    /// network, runs code or changes the system.
    pub read_only: bool,
}

/// The effect table: the built-in rows, then those a policy set adds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EffectTable {
    /// The rows the set adds after the built-in ones, which every table shares.
    own: Vec<EffectRow>,
    /// The rows that name each program, in table order: a part looks up its own rows instead of
    /// scanning the names of every row.
    by_name: NameIndex,
}

/// Every name of every row as one word, its hash above the row's position, sorted: a lookup is
/// a binary search, and the row's own names confirm it (two names may share a hash). One
/// allocation, where a map from names to rows was one per name and a copy of each. Built from
/// the rows alone, so it compares and hashes as nothing beyond them.
#[derive(Clone, Debug, Default)]
struct NameIndex(Vec<u64>);

impl PartialEq for NameIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for NameIndex {}

impl std::hash::Hash for NameIndex {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// The lower half of an index word: the row's position.
const ROW_BITS: u64 = 0xFFFF_FFFF;

/// A name's hash in the upper half of an index word.
fn name_key(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name) & !ROW_BITS
}

/// The built-in rows, each read from its text in `effects.json` the first time a command names
/// it: a hook's call names a few programs of the hundreds the table knows, and reading every
/// row was a tenth of such a process. The table is tested whole (every row reads), so a row
/// that does not is a build that fails its tests.
static BUILT_IN_ROWS: [OnceLock<Option<EffectRow>>; EFFECT_ROWS.len()] =
    [const { OnceLock::new() }; EFFECT_ROWS.len()];

fn built_in_row(number: u32) -> Option<&'static EffectRow> {
    let number = number as usize;
    let place = *EFFECT_ROWS.get(number)?;
    BUILT_IN_ROWS
        .get(number)?
        .get_or_init(|| {
            let spec = serde_json::from_str::<RowSpec>(tables::entry(EFFECTS_TEXT, place)).ok()?;
            EffectRow::from_spec(spec).ok()
        })
        .as_ref()
}

/// The numbers of the built-in rows that name the program `name`, in table order.
fn built_in_named(name: &str) -> impl Iterator<Item = u32> + '_ {
    let first = EFFECT_NAMES.partition_point(|&(named, _)| named < name);
    EFFECT_NAMES
        .iter()
        .skip(first)
        .take_while(move |&&(named, _)| named == name)
        .map(|&(_, number)| number)
}

impl EffectTable {
    fn new(own: Vec<EffectRow>) -> EffectTable {
        let mut index: Vec<u64> = own
            .iter()
            .enumerate()
            .flat_map(|(at, row)| {
                let at = (at as u64) & ROW_BITS;
                row.commands.iter().map(move |name| name_key(name) | at)
            })
            .collect();
        index.sort_unstable();
        index.dedup();
        EffectTable {
            own,
            by_name: NameIndex(index),
        }
    }

    /// The rows that name the program `name`, in table order.
    fn rows_named<'t>(&'t self, name: &'t str) -> impl Iterator<Item = &'t EffectRow> + 't {
        let key = name_key(name);
        let index = &self.by_name.0;
        let first = index.partition_point(|&word| word < key);
        let own = index
            .iter()
            .skip(first)
            .take_while(move |&&word| word & !ROW_BITS == key)
            .filter_map(|&word| self.own.get((word & ROW_BITS) as usize))
            .filter(move |row| row.commands.iter().any(|command| command == name));
        let built_in = built_in_named(name)
            .filter_map(|number| -> Option<&'t EffectRow> { built_in_row(number) });
        built_in.chain(own)
    }
}

static BUILT_IN: OnceLock<Arc<EffectTable>> = OnceLock::new();

impl EffectTable {
    /// The table shipped with Sluice.
    pub fn built_in() -> Arc<EffectTable> {
        BUILT_IN.get_or_init(Arc::default).clone()
    }

    /// The built-in table with `extra` rows after it.
    pub fn extended(extra: Vec<EffectRow>) -> Arc<EffectTable> {
        if extra.is_empty() {
            return EffectTable::built_in();
        }
        Arc::new(EffectTable::new(extra))
    }

    /// Every row: the built-in ones (each read now, if no command named it yet), then the
    /// set's own.
    pub fn rows(&self) -> impl Iterator<Item = &EffectRow> + '_ {
        (0..EFFECT_ROWS.len() as u32)
            .filter_map(|number| -> Option<&EffectRow> { built_in_row(number) })
            .chain(&self.own)
    }

    /// The rows the set adds after the built-in ones.
    pub fn own_rows(&self) -> &[EffectRow] {
        &self.own
    }

    /// Whether the table has a row for the program `name`.
    pub fn knows(&self, name: &str) -> bool {
        self.rows_named(name).next().is_some()
    }

    /// What `command` does: the rows that apply, added up, and its redirections.
    pub fn effects_of(&self, command: &SimpleCommand) -> Effects {
        self.effects_in(command, None)
    }

    /// [`EffectTable::effects_of`], with `~` and `$HOME` in operands joined to `home`.
    pub fn effects_in(&self, command: &SimpleCommand, home: Option<&str>) -> Effects {
        let mut effects = Effects::default();
        let mut read_only = false;
        for row in self.rows_named(&command.name) {
            effects.known = true;
            let Some(skip) = row.applies(command) else {
                continue;
            };
            read_only |= row.read_only;
            let selections = [
                (&row.reads, &mut effects.reads),
                (&row.writes, &mut effects.writes),
                (&row.deletes, &mut effects.deletes),
            ];
            for (selector, out) in selections {
                if let Some(selector) = selector {
                    selector.select(command, skip, out, home);
                }
            }
            effects.network |= row.network;
            effects.executes |= row.executes;
            effects.destroys |= row.destroys;
            effects.system |= row.system;
        }
        // What cannot be known may run anything.
        effects.executes |= command.unresolved.is_some();
        effects.destroys |= command.destroys;
        for redirect in &command.redirects {
            if redirect.path.is_empty() {
                continue;
            }
            match redirect.op.as_str() {
                "<" | "<>" => effects.reads.push(redirect.path.clone()),
                op if op.contains('>') => effects.writes.push(redirect.path.clone()),
                _ => {}
            }
        }
        for list in [
            &mut effects.reads,
            &mut effects.writes,
            &mut effects.deletes,
        ] {
            dedup_in_order(list);
        }
        // Writes to the null device and the standard streams change nothing; a path computed at
        // run time (`cat $(…)`) could be any file.
        let harmless = |p: &String| {
            matches!(
                p.as_str(),
                "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
            ) || p.starts_with("/dev/fd/")
        };
        effects.read_only = read_only
            && effects.writes.iter().all(harmless)
            && !effects
                .reads
                .iter()
                .any(|p| p.contains('$') || p.contains('`'))
            && effects.deletes.is_empty()
            && !effects.network
            && !effects.executes
            && !effects.destroys
            && !effects.system;
        effects
    }
}

fn dedup_in_order(list: &mut Vec<String>) {
    let mut seen = rustc_hash::FxHashSet::default();
    list.retain(|item| seen.insert(item.clone()));
}
