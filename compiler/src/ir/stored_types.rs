//! Node types as a stored program writes them: each distinct type once, and after that by its
//! number. A record type (a shell part's, a tool's arguments) sits on many nodes and is shared
//! behind one `Arc` in memory; written out whole on each it was most of a stored program, and
//! read back it was one allocation per node. Types are numbered in the order they are written,
//! so reading them in the same order rebuilds the same table, with the sharing.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::check::Ty;

#[derive(Default)]
struct Table {
    written: FxHashMap<Ty, u32>,
    read: Vec<Ty>,
}

thread_local! {
    /// The table of the program being written or read on this thread, if any.
    static TABLE: RefCell<Option<Table>> = const { RefCell::new(None) };
}

/// Runs `work` (writing or reading one stored program) with a fresh table of types.
pub fn with_table<R>(work: impl FnOnce() -> R) -> R {
    let outer = TABLE.with(|table| table.replace(Some(Table::default())));
    let result = work();
    TABLE.with(|table| table.replace(outer));
    result
}

#[derive(Serialize, Deserialize)]
enum Stored<T> {
    /// A type met for the first time; it takes the next number.
    New(T),
    /// A type met before, by number.
    Seen(u32),
}

pub fn serialize<S: Serializer>(ty: &Ty, serializer: S) -> Result<S::Ok, S::Error> {
    let seen = TABLE.with(|table| {
        let mut table = table.borrow_mut();
        let table = table.as_mut()?;
        if let Some(&number) = table.written.get(ty) {
            return Some(number);
        }
        let number = u32::try_from(table.written.len()).unwrap_or(u32::MAX);
        table.written.insert(ty.clone(), number);
        None
    });
    match seen {
        Some(number) => Stored::<&Ty>::Seen(number).serialize(serializer),
        None => Stored::New(ty).serialize(serializer),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Ty, D::Error> {
    match Stored::<Ty>::deserialize(deserializer)? {
        Stored::New(ty) => {
            TABLE.with(|table| {
                if let Some(table) = table.borrow_mut().as_mut() {
                    table.read.push(ty.clone());
                }
            });
            Ok(ty)
        }
        Stored::Seen(number) => TABLE
            .with(|table| {
                let table = table.borrow();
                table.as_ref()?.read.get(number as usize).cloned()
            })
            .ok_or_else(|| serde::de::Error::custom(format!("no stored type {number}"))),
    }
}
