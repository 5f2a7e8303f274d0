//! Compiled code at run time: a policy set's native conditions, shareable across threads and
//! freed when dropped.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cranelift_jit::JITModule;

use super::cell::{Cell, Cells, Frame, fact_cells};
use super::helpers::{FALSE, TRUE};
use super::module::call_condition;
use crate::interp::{Facts, Value};
use crate::ir::{Program, RuleIr};
use crate::scan::Scans;

/// A compiled condition: `(frame, fact cells) -> 1 | 0 | FAULT`.
pub type ConditionFn = unsafe extern "C" fn(*mut c_void, *const Cell) -> i64;

/// Turns the address of a finalized condition into a callable function pointer.
///
/// # Safety
/// `address` must be the entry of a function Cranelift compiled with the signature
/// `(i64, i64) -> i64` in the host's default calling convention, and its code memory must
/// outlive every call through the result.
pub(super) unsafe fn condition_fn(address: *const u8) -> ConditionFn {
    // SAFETY: the caller guarantees the address is such a function; function and data
    // pointers have the same size on every target Cranelift supports.
    unsafe { std::mem::transmute::<*const u8, ConditionFn>(address) }
}

/// Owns the module whose memory holds the code, and frees that memory when dropped.
pub struct CodeMemory(Mutex<Option<JITModule>>);

impl CodeMemory {
    pub(super) fn new(module: JITModule) -> Self {
        CodeMemory(Mutex::new(Some(module)))
    }
}

impl Drop for CodeMemory {
    fn drop(&mut self) {
        let module = match self.0.get_mut() {
            Ok(module) => module.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(module) = module {
            // SAFETY: the only function pointers into this memory live in the `NativeCode` that
            // owns this `CodeMemory` and is being dropped, so none can run or be called again.
            unsafe { module.free_memory() };
        }
    }
}

/// How one rule's condition is run: `--emit clif` and `--emit stats` both read this, so they
/// say the same of every rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConditionCode {
    /// A native function (its Cranelift IR is in [`NativeCode::clif`], in rule order).
    Native,
    /// The condition is one test that a field scan answers both ways: no code of its own.
    SettledByScan { field: String },
    /// The translator cannot express it: it runs in the interpreter.
    Interpreted { why: String },
}

/// Counts and timings of one compilation, for `sluice compile --emit stats`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Each rule that has a condition, by name, and how the condition is run, in set order.
    pub conditions: Vec<(String, ConditionCode)>,
    pub rules: usize,
    /// Rules whose condition runs as native code.
    pub compiled: usize,
    /// Rules the translator could not express; they run in the interpreter.
    pub untranslated: Vec<String>,
    pub constants: usize,
    /// Field scans (regex sets) and the rules they can rule out without running.
    pub scans: usize,
    pub guarded: usize,
    /// Rules whose whole condition is one scanned test: no code of their own.
    pub decided_by_scans: usize,
    pub compile_time: Duration,
}

/// A program's conditions as native code. `Send + Sync`: the code is immutable once finalized
/// and every call gets its own frame.
pub struct NativeCode {
    conditions: Vec<Option<ConditionFn>>,
    /// The program's slot count: every frame has exactly this many fact cells.
    slots: usize,
    scans: Scans,
    constants: Vec<Arc<str>>,
    stats: Stats,
    clif: Vec<String>,
    // Declared last so that it is dropped after the function pointers into it.
    _memory: CodeMemory,
}

impl std::fmt::Debug for NativeCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeCode")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl NativeCode {
    pub(super) fn new(
        conditions: Vec<Option<ConditionFn>>,
        slots: usize,
        scans: Scans,
        constants: Vec<Arc<str>>,
        memory: CodeMemory,
        stats: Stats,
        clif: Vec<String>,
    ) -> Self {
        NativeCode {
            conditions,
            slots,
            scans,
            constants,
            stats,
            clif,
            _memory: memory,
        }
    }

    /// The field scans the code was compiled with: rules they decide have no code.
    pub fn scans(&self) -> &Scans {
        &self.scans
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The Cranelift IR of every function, when compiled with `keep_clif`.
    pub fn clif(&self) -> &[String] {
        &self.clif
    }

    /// A frame for one call's facts; `None` if this code was compiled from another program or
    /// the facts were read for another: native code reads a cell for every slot, unchecked.
    pub fn frame<'a>(&'a self, program: &'a Program, facts: &Facts<'a>) -> Option<NativeFrame<'a>> {
        if self.conditions.len() != program.rules.len() || facts.values.len() != self.slots {
            return None;
        }
        Some(NativeFrame {
            code: self,
            program,
            cells: fact_cells(facts),
        })
    }
}

/// One call's facts as native code reads them.
pub struct NativeFrame<'a> {
    code: &'a NativeCode,
    program: &'a Program,
    cells: Cells,
}

impl NativeFrame<'_> {
    /// Whether the rule's condition holds: `None` when it has no native code (rules decided by
    /// their scan have none) or faulted, and the interpreter must answer (with the error, for a
    /// fault).
    pub fn holds(&mut self, rule: &RuleIr, facts: &Facts<'_>) -> Option<bool> {
        if rule.condition.is_none() {
            return Some(true);
        }
        if facts.values.len() != self.cells.len() {
            return None;
        }
        if rule.per_part.is_some() {
            return None;
        }
        let function = (*self.code.conditions.get(rule.index as usize)?)?;
        let mut frame = Frame::new(self.program, &self.code.constants, facts);
        self.run(function, &mut frame)
    }

    /// Whether a per-part rule's condition holds for one part, the part bound in the frame;
    /// `None` as for [`NativeFrame::holds`].
    pub fn holds_part(
        &mut self,
        rule: &RuleIr,
        facts: &Facts<'_>,
        part: &Value<'_>,
    ) -> Option<bool> {
        if rule.per_part.is_none() || facts.values.len() != self.cells.len() {
            return None;
        }
        let Some(_) = rule.condition else {
            return Some(true);
        };
        let function = (*self.code.conditions.get(rule.index as usize)?)?;
        let mut frame = Frame::with_part(self.program, &self.code.constants, facts, part.clone());
        self.run(function, &mut frame)
    }

    fn run(&self, function: ConditionFn, frame: &mut Frame<'_>) -> Option<bool> {
        let frame: *mut Frame<'_> = frame;
        match call_condition(function, frame.cast(), &self.cells) {
            TRUE => Some(true),
            FALSE => Some(false),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn native_code_is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::NativeCode>();
    }
}
