//! The per-call data native code reads: a flat buffer of fact cells and the frame of values that
//! helpers share with it.
//!
//! A cell is two machine words: a tag and its bits. Scalars live in the bits; strings, lists and
//! JSON live in the frame's value table and the bits hold their index, so native code never
//! dereferences a Rust value and helpers never trust a pointer from native code beyond the frame
//! and the argument cells.

use std::borrow::Cow;

use crate::interp::parses::ShellParses;
use crate::interp::{Facts, Value};
use crate::ir::Program;

pub const MISSING: i64 = 0;
pub const NULL: i64 = 1;
pub const BOOL: i64 = 2;
pub const INT: i64 = 3;
pub const FLOAT: i64 = 4;
/// Bits: index into the frame's value table.
pub const VALUE: i64 = 5;
/// Bits: index into the compiled program's string constants.
pub const CONST: i64 = 6;
/// A fact that does not fit its declared type: reading it fails the rule.
pub const FAULT: i64 = 7;
/// Bits: the slot of a fact that is not a scalar (read from the call's facts, never copied).
pub const FACT: i64 = 8;

/// Where a per-part rule's part sits in its frame's value table: first, put there before the
/// condition runs.
pub const PART_INDEX: i64 = 0;

/// One value as native code sees it. The layout is part of the generated code's contract.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub tag: i64,
    pub bits: i64,
}

/// The size of a cell in bytes, for address arithmetic in generated code.
pub const CELL_SIZE: i64 = 16;

/// A scalar's cell, its value in the bits; `None` for values that live in a table.
fn scalar(value: &Value<'_>) -> Option<Cell> {
    let (tag, bits) = match value {
        Value::Missing => (MISSING, 0),
        Value::Null => (NULL, 0),
        Value::Bool(b) => (BOOL, i64::from(*b)),
        Value::Int(i) => (INT, *i),
        Value::Float(f) => (FLOAT, f.to_bits() as i64),
        _ => return None,
    };
    Some(Cell { tag, bits })
}

/// One call's fact cells; most policies read few fields, which then need no allocation.
pub type Cells = smallvec::SmallVec<[Cell; 8]>;

/// The call's facts as cells: scalars inline, the rest by slot, faults as faults.
pub fn fact_cells(facts: &Facts<'_>) -> Cells {
    facts
        .values
        .iter()
        .enumerate()
        .map(|(slot, value)| match value {
            Ok(value) => scalar(value).unwrap_or(Cell {
                tag: FACT,
                bits: slot as i64,
            }),
            Err(_) => Cell {
                tag: FAULT,
                bits: 0,
            },
        })
        .collect()
}

/// What helpers called from native code share while one condition runs.
pub struct Frame<'a> {
    pub program: &'a Program,
    pub consts: &'a [std::sync::Arc<str>],
    pub facts: &'a [Result<Value<'a>, String>],
    /// The command lines `shell(...)` parsed for this call, shared with the interpreter.
    pub shell: &'a ShellParses,
    /// Values the condition made (strings, lists), named by `VALUE` cells.
    pub values: Vec<Value<'a>>,
}

impl<'a> Frame<'a> {
    pub fn new(
        program: &'a Program,
        consts: &'a [std::sync::Arc<str>],
        facts: &'a Facts<'a>,
    ) -> Self {
        Frame {
            program,
            consts,
            facts: &facts.values,
            shell: facts.shell.get(),
            values: Vec::new(),
        }
    }

    /// A frame for one part of a per-part rule: the part is the value at [`PART_INDEX`].
    pub fn with_part(
        program: &'a Program,
        consts: &'a [std::sync::Arc<str>],
        facts: &'a Facts<'a>,
        part: Value<'a>,
    ) -> Self {
        let mut frame = Frame::new(program, consts, facts);
        // A part's condition reads several of its fields: room for them at once, not by doubling.
        frame.values.reserve(8);
        frame.values.push(part);
        frame
    }

    /// A value as a cell: scalars inline, the rest in the value table.
    pub fn cell(&mut self, value: Value<'a>) -> Cell {
        if let Some(cell) = scalar(&value) {
            return cell;
        }
        let index = self.values.len() as i64;
        self.values.push(value);
        Cell {
            tag: VALUE,
            bits: index,
        }
    }

    /// The value a cell stands for; `None` for a cell no frame could have made.
    pub fn value(&self, cell: Cell) -> Option<Cow<'_, Value<'a>>> {
        let owned = |value| Some(Cow::Owned(value));
        match cell.tag {
            MISSING => owned(Value::Missing),
            NULL => owned(Value::Null),
            BOOL => owned(Value::Bool(cell.bits != 0)),
            INT => owned(Value::Int(cell.bits)),
            FLOAT => owned(Value::Float(f64::from_bits(cell.bits as u64))),
            VALUE => usize::try_from(cell.bits)
                .ok()
                .and_then(|index| self.values.get(index))
                .map(Cow::Borrowed),
            FACT => fact(self.facts, cell).map(Cow::Borrowed),
            CONST => usize::try_from(cell.bits)
                .ok()
                .and_then(|index| self.consts.get(index))
                .map(|text| Cow::Owned(Value::Str(Cow::Borrowed(&**text)))),
            _ => None,
        }
    }
}

/// The fact a `FACT` cell names.
pub fn fact<'f, 'a>(facts: &'f [Result<Value<'a>, String>], cell: Cell) -> Option<&'f Value<'a>> {
    if cell.tag != FACT {
        return None;
    }
    usize::try_from(cell.bits)
        .ok()
        .and_then(|slot| facts.get(slot))?
        .as_ref()
        .ok()
}
