//! Node types as a stored program writes them: by number, in a table of the program's distinct
//! types stored beside it. A record type (a shell part's, a tool's arguments) sits on many nodes
//! and is shared behind one `Arc` in memory; written out whole on each it was most of a stored
//! program, and read back it was one allocation per node. A node's type is now a number: the
//! table is read first, and each node's type is a lookup in it (the form before, a type written
//! whole where first met and by number after, took about a sixth of the instructions a hook
//! spends reading its chain back).

use std::cell::RefCell;

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::check::Ty;

struct Table {
    /// While writing: each type met, with its number.
    written: FxHashMap<Ty, u32>,
    /// The types by number, as met while writing.
    types: Vec<Ty>,
    /// The stored table while reading: kept by each rule whose nodes are read later
    /// (`ir::nodes`).
    read: Arc<[Ty]>,
    /// The strings read back so far: a field name, a literal or a rule's file recurs on many
    /// nodes, and each is one allocation shared, where serde's own `Arc<str>` is three.
    strings: FxHashSet<Arc<str>>,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            written: FxHashMap::default(),
            types: Vec::new(),
            read: Arc::from([]),
            strings: FxHashSet::default(),
        }
    }
}

thread_local! {
    /// The table of the program being written or read on this thread, if any.
    static TABLE: RefCell<Option<Table>> = const { RefCell::new(None) };
}

/// Runs `work` (writing one stored program) with a fresh table, and returns what it made with
/// the table of types it wrote, by number: [`read_with`] needs that table to read it back.
pub fn write_with<R>(work: impl FnOnce() -> R) -> (R, Vec<Ty>) {
    let (result, table) = within(Table::default(), work);
    (result, table.types)
}

/// Runs `work` (reading one stored program) with `types`, the table [`write_with`] returned
/// when it was written.
pub fn read_with<R>(types: impl Into<Arc<[Ty]>>, work: impl FnOnce() -> R) -> R {
    let table = Table {
        read: types.into(),
        ..Table::default()
    };
    within(table, work).0
}

/// The table of the program being read on this thread, if any.
pub fn types_read() -> Option<Arc<[Ty]>> {
    TABLE.with(|table| Some(Arc::clone(&table.borrow().as_ref()?.read)))
}

fn within<R>(table: Table, work: impl FnOnce() -> R) -> (R, Table) {
    let outer = TABLE.with(|slot| slot.replace(Some(table)));
    let result = work();
    let table = TABLE.with(|slot| slot.replace(outer)).unwrap_or_default();
    (result, table)
}

pub fn serialize<S: Serializer>(ty: &Ty, serializer: S) -> Result<S::Ok, S::Error> {
    let number = TABLE.with(|table| {
        let mut table = table.borrow_mut();
        let table = table.as_mut()?;
        if let Some(&number) = table.written.get(ty) {
            return Some(number);
        }
        let number = u32::try_from(table.types.len()).ok()?;
        table.written.insert(ty.clone(), number);
        table.types.push(ty.clone());
        Some(number)
    });
    match number {
        Some(number) => number.serialize(serializer),
        None => Err(serde::ser::Error::custom(
            "a node's type is written only with a table (stored_types::write_with)",
        )),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Ty, D::Error> {
    let number = u32::deserialize(deserializer)?;
    TABLE
        .with(|table| {
            let table = table.borrow();
            table.as_ref()?.read.get(number as usize).cloned()
        })
        .ok_or_else(|| serde::de::Error::custom(format!("no stored type {number}")))
}

/// Reads a string that the program shares: once per distinct text while a table is read.
pub fn shared_str<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Arc<str>, D::Error> {
    deserializer.deserialize_str(Text { shared: true })
}

/// Reads a string into one allocation, not looked up among those read: a literal set's strings
/// (most of a stored program's) are mostly distinct, and looking each up cost more than it saved.
fn own_str<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Arc<str>, D::Error> {
    deserializer.deserialize_str(Text { shared: false })
}

struct Text {
    shared: bool,
}

impl serde::de::Visitor<'_> for Text {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    // Borrowed or not, the text is looked up before anything is allocated.
    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Arc<str>, E> {
        if !self.shared {
            return Ok(Arc::from(text));
        }
        Ok(TABLE.with(|table| {
            let mut table = table.borrow_mut();
            let Some(table) = table.as_mut() else {
                return Arc::from(text);
            };
            if let Some(shared) = table.strings.get(text) {
                return Arc::clone(shared);
            }
            let shared: Arc<str> = Arc::from(text);
            table.strings.insert(Arc::clone(&shared));
            shared
        }))
    }
}

/// [`shared_str`] for each string of a list.
pub fn shared_strs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Arc<str>>, D::Error> {
    #[derive(Deserialize)]
    struct Shared(#[serde(deserialize_with = "shared_str")] Arc<str>);
    let strings = Vec::<Shared>::deserialize(deserializer)?;
    Ok(strings.into_iter().map(|Shared(text)| text).collect())
}

/// The program's literal sets, each string read in one allocation ([`own_str`]): the sets hold
/// most of a stored program's strings, and serde's own `Arc<str>` is three allocations for each.
pub fn shared_str_sets<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<FxHashSet<Arc<str>>>, D::Error> {
    #[derive(Deserialize)]
    struct Set(#[serde(deserialize_with = "shared_str_set")] FxHashSet<Arc<str>>);
    let sets = Vec::<Set>::deserialize(deserializer)?;
    Ok(sets.into_iter().map(|Set(set)| set).collect())
}

fn shared_str_set<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<FxHashSet<Arc<str>>, D::Error> {
    struct Strings;
    impl<'de> serde::de::Visitor<'de> for Strings {
        type Value = FxHashSet<Arc<str>>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a set of strings")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            #[derive(Deserialize)]
            struct Own(#[serde(deserialize_with = "own_str")] Arc<str>);
            let mut set = FxHashSet::default();
            set.reserve(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(Own(text)) = seq.next_element()? {
                set.insert(text);
            }
            Ok(set)
        }
    }
    deserializer.deserialize_seq(Strings)
}
