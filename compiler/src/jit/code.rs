//! Compiled code at run time: a policy set's native conditions, shareable across threads and
//! freed when dropped.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cranelift_jit::JITModule;

use super::cell::{Cell, Frame, fact, fact_cells};
use super::helpers::{FALSE, TRUE};
use super::module::call_condition;
use super::scan::Scans;
use crate::ast::RuleKind;
use crate::interp::{Facts, Value};
use crate::ir::{Program, RuleIr};

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

/// Counts and timings of one compilation, for `sluice compile --emit stats`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
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
            scanned: Vec::new(),
        })
    }
}

/// One call's facts as native code reads them.
pub struct NativeFrame<'a> {
    code: &'a NativeCode,
    program: &'a Program,
    cells: Vec<Cell>,
    /// Each scan's matches, made when a rule first needs them.
    scanned: Vec<Option<Scanned>>,
}

/// What one scan found in its field.
#[derive(Clone, Debug)]
enum Scanned {
    Nothing,
    Found(regex::SetMatches),
}

impl NativeFrame<'_> {
    /// Whether the rule's condition holds: `None` when it has no native code or faulted, and
    /// the interpreter must answer (with the error, for a fault).
    pub fn holds(&mut self, rule: &RuleIr, facts: &Facts<'_>) -> Option<bool> {
        if rule.condition.is_none() {
            return Some(true);
        }
        if facts.values.len() != self.cells.len() {
            return None;
        }
        if let Some(decided) = self.decided_by_scan(rule, facts) {
            return Some(decided);
        }
        let function = (*self.code.conditions.get(rule.index as usize)?)?;
        let mut frame = Frame::new(self.program, &self.code.constants, facts);
        let frame: *mut Frame<'_> = &mut frame;
        let status = call_condition(function, frame.cast(), &self.cells);
        match status {
            TRUE => Some(true),
            FALSE => Some(false),
            _ => None,
        }
    }

    /// The rules of `kind` for `tool` that may match this call, in set order, when scans can
    /// tell: the rules no scan answers for, glob rules that match the tool, and the rules whose
    /// scanned test matched (all of a scan's rules when its field holds no string). `None`: no
    /// scan serves this tool and kind; every applicable rule must run.
    pub fn candidates(
        &mut self,
        kind: RuleKind,
        tool: &str,
        facts: &Facts<'_>,
    ) -> Option<Vec<u32>> {
        let code = self.code;
        let program = self.program;
        let plan = code.scans.plan(tool, kind)?;
        let mut chosen = plan.rest.clone();
        chosen.extend(
            program
                .dispatch
                .open(kind)
                .iter()
                .copied()
                .filter(|&index| {
                    program
                        .rules
                        .get(index as usize)
                        .is_some_and(|rule| rule.applies_to(tool))
                }),
        );
        for &id in &plan.scans {
            let Some(scan) = code.scans.scans.get(id as usize) else {
                continue;
            };
            match self.scanned(id, scan.slot, facts) {
                None => chosen.extend(&scan.all_rules),
                Some(Scanned::Nothing) => {}
                Some(Scanned::Found(matches)) => {
                    for pattern in matches.iter() {
                        chosen.extend(scan.rules.get(pattern).into_iter().flatten());
                    }
                }
            }
        }
        chosen.sort_unstable();
        chosen.dedup();
        Some(chosen)
    }

    /// What the scan found in the field; `None` when the field holds no string.
    fn scanned(&mut self, id: u32, slot: u32, facts: &Facts<'_>) -> Option<&Scanned> {
        let cell = self.cells.get(slot as usize)?;
        let Some(Value::Str(text)) = fact(&facts.values, *cell) else {
            return None;
        };
        let scan = self.code.scans.scans.get(id as usize)?;
        if self.scanned.is_empty() {
            self.scanned = vec![None; self.code.scans.scans.len()];
        }
        let entry = self.scanned.get_mut(id as usize)?;
        Some(entry.get_or_insert_with(|| {
            // Most calls match nothing: a plain match stops early and settles that.
            if scan.set.is_match(text) {
                Scanned::Found(scan.set.matches(text))
            } else {
                Scanned::Nothing
            }
        }))
    }

    /// What the rule's guarding scan says of its condition: false when its first test failed,
    /// true when that test is the whole condition and passed, and nothing otherwise.
    fn decided_by_scan(&mut self, rule: &RuleIr, facts: &Facts<'_>) -> Option<bool> {
        let guard = self.code.scans.guard(rule.index)?;
        let slot = self.code.scans.scans.get(guard.scan as usize)?.slot;
        let matched = match self.scanned(guard.scan, slot, facts)? {
            Scanned::Nothing => false,
            Scanned::Found(matches) => matches.matched(guard.pattern as usize),
        };
        match (matched, guard.whole) {
            (false, _) => Some(false),
            (true, true) => Some(true),
            (true, false) => None,
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
