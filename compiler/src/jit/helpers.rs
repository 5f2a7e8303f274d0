//! The Rust helpers native code calls, declared to the JIT in one table.
//!
//! Native code does control flow, truth tests and integer comparisons itself; everything that
//! belongs in Rust (string and list operations, regexes, globs, paths, URLs) is a helper that
//! calls the same [`ops`] function the interpreter calls. Every helper takes the frame first and
//! answers with a status: [`FALSE`], [`TRUE`] or [`FAULT`] for predicates, [`OK`] or [`FAULT`]
//! for helpers that write a cell. A panic inside a helper is caught and becomes a fault, because
//! unwinding into generated code is undefined.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::cell::{Cell, Frame};
use crate::check::Builtin;
use crate::interp::{Value, ops};
use crate::ir::RegexId;

pub const FALSE: i64 = 0;
pub const TRUE: i64 = 1;
pub const OK: i64 = 0;
pub const FAULT: i64 = 2;

/// What `sluice_apply` computes; `extra` names the field, builtin or regex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i64)]
pub enum Apply {
    /// `extra`: the field name's constant index, and above [`POSITION_SHIFT`] one more than
    /// its position in a part record (0 for a field parts do not have).
    Member = 0,
    Index = 1,
    List = 2,
    Concat = 3,
    Add = 4,
    In = 5,
    /// `extra`: the builtin's position in [`Builtin::ALL`].
    Builtin = 6,
    /// `extra`: the regex id.
    Redact = 7,
    /// `extra`: the argv pattern id.
    ArgvMatch = 8,
    /// `p.under(path(dir))` or `p.under(path(dir + "suffix"))`; `extra`: one more than the
    /// suffix's constant index, 0 for none.
    UnderNormal = 9,
}

/// Where `Apply::Member`'s `extra` keeps the field's position in a part record.
pub const POSITION_SHIFT: u32 = 32;

/// One imported function: its symbol, how many `i64` parameters it takes, and its address.
pub struct Helper {
    pub name: &'static str,
    pub params: usize,
    pub address: *const u8,
}

/// Every helper, in the order the translator refers to them.
pub fn table() -> [Helper; 8] {
    [
        Helper {
            name: "sluice_equals",
            params: 5,
            address: sluice_equals as *const u8,
        },
        Helper {
            name: "sluice_order",
            params: 6,
            address: sluice_order as *const u8,
        },
        Helper {
            name: "sluice_in_set",
            params: 4,
            address: sluice_in_set as *const u8,
        },
        Helper {
            name: "sluice_matches",
            params: 4,
            address: sluice_matches as *const u8,
        },
        Helper {
            name: "sluice_glob",
            params: 4,
            address: sluice_glob as *const u8,
        },
        Helper {
            name: "sluice_apply",
            params: 6,
            address: sluice_apply as *const u8,
        },
        Helper {
            name: "sluice_length",
            params: 3,
            address: sluice_length as *const u8,
        },
        Helper {
            name: "sluice_element",
            params: 5,
            address: sluice_element as *const u8,
        },
    ]
}

/// Positions in [`table`].
pub mod id {
    pub const EQUALS: usize = 0;
    pub const ORDER: usize = 1;
    pub const IN_SET: usize = 2;
    pub const MATCHES: usize = 3;
    pub const GLOB: usize = 4;
    pub const APPLY: usize = 5;
    pub const LENGTH: usize = 6;
    pub const ELEMENT: usize = 7;
}

/// Runs a helper body on the frame, turning a missing frame or a panic into a fault.
fn guarded(frame: *mut Frame<'_>, body: impl FnOnce(&mut Frame<'_>) -> i64) -> i64 {
    guarded_or(FAULT, frame, body)
}

fn guarded_or(fault: i64, frame: *mut Frame<'_>, body: impl FnOnce(&mut Frame<'_>) -> i64) -> i64 {
    // SAFETY: native code passes on the frame pointer that `NativeCode::run` made from a live
    // `&mut Frame` for the duration of the call, and nothing else aliases it meanwhile.
    let Some(frame) = (unsafe { frame.as_mut() }) else {
        return fault;
    };
    catch_unwind(AssertUnwindSafe(|| body(frame))).unwrap_or(fault)
}

fn status(result: Result<bool, ops::Fault>) -> i64 {
    match result {
        Ok(true) => TRUE,
        Ok(false) => FALSE,
        Err(_) => FAULT,
    }
}

fn cell(tag: i64, bits: i64) -> Cell {
    Cell { tag, bits }
}

extern "C" fn sluice_equals(frame: *mut Frame<'_>, lt: i64, lb: i64, rt: i64, rb: i64) -> i64 {
    guarded(frame, |frame| {
        match (frame.value(cell(lt, lb)), frame.value(cell(rt, rb))) {
            (Some(l), Some(r)) => status(Ok(l.equals(&r))),
            _ => FAULT,
        }
    })
}

extern "C" fn sluice_order(
    frame: *mut Frame<'_>,
    op: i64,
    lt: i64,
    lb: i64,
    rt: i64,
    rb: i64,
) -> i64 {
    let Some(&wanted) = usize::try_from(op)
        .ok()
        .and_then(|op| ops::ORDERINGS.get(op))
    else {
        return FAULT;
    };
    guarded(frame, |frame| {
        match (frame.value(cell(lt, lb)), frame.value(cell(rt, rb))) {
            (Some(l), Some(r)) => status(ops::order(wanted, &l, &r)),
            _ => FAULT,
        }
    })
}

extern "C" fn sluice_in_set(frame: *mut Frame<'_>, set: i64, tag: i64, bits: i64) -> i64 {
    guarded(frame, |frame| {
        let set = usize::try_from(set)
            .ok()
            .and_then(|i| frame.program.sets.get(i));
        match frame.value(cell(tag, bits)) {
            Some(needle) => status(ops::in_set(&needle, set)),
            None => FAULT,
        }
    })
}

extern "C" fn sluice_matches(frame: *mut Frame<'_>, regex: i64, tag: i64, bits: i64) -> i64 {
    guarded(frame, |frame| {
        let regex = u32::try_from(regex)
            .ok()
            .and_then(|i| frame.program.regex(RegexId(i)));
        match frame.value(cell(tag, bits)) {
            Some(text) => status(ops::matches(&text, regex)),
            None => FAULT,
        }
    })
}

extern "C" fn sluice_glob(frame: *mut Frame<'_>, glob: i64, tag: i64, bits: i64) -> i64 {
    guarded(frame, |frame| {
        let glob = usize::try_from(glob)
            .ok()
            .and_then(|i| frame.program.globs.get(i))
            .and_then(crate::ir::PolicyGlob::matcher);
        match frame.value(cell(tag, bits)) {
            Some(text) => status(ops::glob(&text, glob)),
            None => FAULT,
        }
    })
}

extern "C" fn sluice_apply(
    frame: *mut Frame<'_>,
    code: i64,
    extra: i64,
    args: *const Cell,
    count: i64,
    out: *mut Cell,
) -> i64 {
    let Ok(count) = usize::try_from(count) else {
        return FAULT;
    };
    // SAFETY: native code passes a stack slot holding `count` cells it has just written, and a
    // distinct one-cell stack slot for the answer; both outlive this call.
    let (args, out) = unsafe {
        if args.is_null() && count > 0 {
            return FAULT;
        }
        let args = if count == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(args, count)
        };
        let Some(out) = out.as_mut() else {
            return FAULT;
        };
        (args, out)
    };
    guarded(frame, |frame| {
        let result = match args {
            // The common arities borrow their operands from the frame; only longer argument
            // lists (string interpolation, list literals) are copied.
            [] => apply(frame, code, extra, &[]),
            [a] => match frame.value(*a) {
                Some(a) => apply(frame, code, extra, &[a]),
                None => return FAULT,
            },
            [a, b] => match (frame.value(*a), frame.value(*b)) {
                (Some(a), Some(b)) => apply(frame, code, extra, &[a, b]),
                _ => return FAULT,
            },
            _ => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    match frame.value(*arg) {
                        Some(value) => values.push(value),
                        None => return FAULT,
                    }
                }
                apply(frame, code, extra, &values)
            }
        };
        match result {
            Ok(value) => {
                *out = frame.cell(value);
                OK
            }
            Err(_) => FAULT,
        }
    })
}

fn apply<'a>(
    frame: &Frame<'a>,
    code: i64,
    extra: i64,
    values: &[Cow<'_, Value<'a>>],
) -> Result<Value<'a>, ops::Fault> {
    let internal = || ops::Fault::Failed("internal: malformed helper call".into());
    let extra_index = usize::try_from(extra).map_err(|_| internal());
    let missing = Value::Missing;
    let first: &Value<'a> = values.first().map_or(&missing, |v| v);
    let second: &Value<'a> = values.get(1).map_or(&missing, |v| v);
    match code {
        c if c == Apply::Member as i64 => {
            let constant = usize::try_from(extra & ((1 << POSITION_SHIFT) - 1));
            let field = frame.consts.get(constant.map_err(|_| internal())?);
            let position = usize::try_from(extra >> POSITION_SHIFT).map_err(|_| internal())?;
            ops::member_at(first, field.ok_or_else(internal)?, position.checked_sub(1))
        }
        c if c == Apply::Index as i64 => ops::index(first, second),
        c if c == Apply::List as i64 => Ok(ops::list(
            values.iter().map(|v| v.clone().into_owned()).collect(),
        )),
        c if c == Apply::Concat as i64 => ops::concat(values),
        c if c == Apply::Add as i64 => ops::add(first, second),
        c if c == Apply::In as i64 => ops::contained(first, second).map(Value::Bool),
        c if c == Apply::Builtin as i64 => {
            match Builtin::ALL.get(extra_index?).ok_or_else(internal)? {
                Builtin::Shell => {
                    crate::interp::parses::shell(values, frame.shell, &frame.program.effects)
                }
                builtin => ops::builtin(*builtin, values),
            }
        }
        c if c == Apply::UnderNormal as i64 => {
            let suffix = match extra_index?.checked_sub(1) {
                Some(index) => Some(&**frame.consts.get(index).ok_or_else(internal)?),
                None => None,
            };
            ops::under_normal(first, second, suffix)
        }
        c if c == Apply::ArgvMatch as i64 => {
            let pattern = frame.program.patterns.get(extra_index?);
            ops::argv_match(first, pattern.map(|p| &**p)).map(Value::Bool)
        }
        c if c == Apply::Redact as i64 => {
            let regex = frame
                .program
                .regexes
                .get(extra_index?)
                .and_then(|r| r.regex());
            ops::redact(first, regex, second)
        }
        _ => Err(internal()),
    }
}

extern "C" fn sluice_length(frame: *mut Frame<'_>, tag: i64, bits: i64) -> i64 {
    guarded_or(-1, frame, |frame| {
        frame
            .value(cell(tag, bits))
            .and_then(|list| list.list_len())
            .map_or(-1, |len| len as i64)
    })
}

extern "C" fn sluice_element(
    frame: *mut Frame<'_>,
    tag: i64,
    bits: i64,
    index: i64,
    out: *mut Cell,
) -> i64 {
    // SAFETY: native code passes a one-cell stack slot that outlives this call.
    let Some(out) = (unsafe { out.as_mut() }) else {
        return FAULT;
    };
    guarded(frame, |frame| {
        let Ok(index) = usize::try_from(index) else {
            return FAULT;
        };
        let item = frame
            .value(cell(tag, bits))
            .and_then(|list| list.element(index));
        match item {
            Some(item) => {
                *out = frame.cell(item);
                OK
            }
            None => FAULT,
        }
    })
}
