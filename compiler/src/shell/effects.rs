//! What commands do to files and the world: the effect table, as data.
//!
//! The built-in table is `effects.json` beside this file (documented in `lang-spec/shell.md`); a
//! policy set adds rows with `effects` declarations. Each row names commands (and optionally a
//! subcommand, the first operand, and flags of which one must be present) and says which
//! operands the command reads, writes or deletes, and whether it reaches the network or runs
//! other code. Rows that apply to a command add up.

use std::sync::{Arc, LazyLock};

use serde::Deserialize;

use super::command::SimpleCommand;
use super::normalize::resolve;

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
    /// What is inside the working directory, as `CWD/*` (`git clean`, `cargo clean`).
    CwdContents,
    /// Operands written `PREFIX<path>`, such as `of=` for `dd`.
    After(String),
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
            other => match other.strip_prefix("after:") {
                Some(prefix) if !prefix.is_empty() => Operands::After(prefix.to_string()),
                _ => {
                    return Err(format!("unknown operand selector `{other}`"));
                }
            },
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
                out.push(resolve("*", command.cwd.as_deref(), home));
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
    pub flags: Vec<String>,
    pub reads: Option<Operands>,
    pub writes: Option<Operands>,
    pub deletes: Option<Operands>,
    pub network: bool,
    pub executes: bool,
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
    reads: Option<String>,
    #[serde(default)]
    writes: Option<String>,
    #[serde(default)]
    deletes: Option<String>,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    executes: bool,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
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
        let selector = |s: Option<String>| s.as_deref().map(Operands::parse).transpose();
        let row = EffectRow {
            commands: spec.command.into_vec(),
            subcommands: spec.subcommand.map(OneOrMany::into_vec).unwrap_or_default(),
            flags: spec.flags,
            reads: selector(spec.reads)?,
            writes: selector(spec.writes)?,
            deletes: selector(spec.deletes)?,
            network: spec.network,
            executes: spec.executes,
        };
        if row.commands.is_empty() || row.commands.iter().any(String::is_empty) {
            return Err("`command` must name at least one command".into());
        }
        Ok(row)
    }

    fn applies(&self, command: &SimpleCommand) -> bool {
        self.commands.contains(&command.name)
            && (self.subcommands.is_empty()
                || command
                    .args
                    .first()
                    .is_some_and(|first| self.subcommands.contains(first)))
            && (self.flags.is_empty() || self.flags.iter().any(|f| command.flags.contains(f)))
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
}

/// The effect table: the built-in rows, then those a policy set adds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EffectTable {
    rows: Vec<EffectRow>,
}

static BUILT_IN: LazyLock<Arc<EffectTable>> = LazyLock::new(|| {
    let rows = serde_json::from_str::<Vec<serde_json::Value>>(include_str!("effects.json"))
        .unwrap_or_default()
        .iter()
        .filter_map(|row| EffectRow::from_json(row).ok())
        .collect();
    Arc::new(EffectTable { rows })
});

impl Default for EffectTable {
    fn default() -> Self {
        EffectTable::clone(&BUILT_IN)
    }
}

impl EffectTable {
    /// The table shipped with Sluice.
    pub fn built_in() -> Arc<EffectTable> {
        BUILT_IN.clone()
    }

    /// The built-in table with `extra` rows after it.
    pub fn extended(extra: Vec<EffectRow>) -> Arc<EffectTable> {
        if extra.is_empty() {
            return EffectTable::built_in();
        }
        let mut rows = BUILT_IN.rows.clone();
        rows.extend(extra);
        Arc::new(EffectTable { rows })
    }

    pub fn rows(&self) -> &[EffectRow] {
        &self.rows
    }

    /// What `command` does: the rows that apply, added up, and its redirections.
    pub fn effects_of(&self, command: &SimpleCommand) -> Effects {
        self.effects_in(command, None)
    }

    /// [`EffectTable::effects_of`], with `~` and `$HOME` in operands joined to `home`.
    pub fn effects_in(&self, command: &SimpleCommand, home: Option<&str>) -> Effects {
        let mut effects = Effects::default();
        for row in self.rows.iter().filter(|row| row.applies(command)) {
            let skip = usize::from(!row.subcommands.is_empty());
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
        }
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
        effects
    }
}

fn dedup_in_order(list: &mut Vec<String>) {
    let mut seen = rustc_hash::FxHashSet::default();
    list.retain(|item| seen.insert(item.clone()));
}
