//! A policy set ready to evaluate: its lowered program and, under the JIT backend, the native
//! code of its conditions.

use std::sync::Arc;

use crate::interp::Evaluator;
use crate::ir::{Op, Program};
use crate::jit::{self, Backend, JitOptions, NativeCode};
use crate::scan::{ProgramIndex, Scans};

#[derive(Clone, Debug)]
pub struct Executable {
    program: Arc<Program>,
    native: Option<Arc<NativeCode>>,
    /// The field scans the interpreter narrows rules with, when there is no native code (which
    /// holds its own).
    scans: Option<Arc<Scans>>,
    /// Why the JIT was asked for and is not in use.
    fallback: Option<String>,
}

impl Executable {
    /// Compiles `program` for `backend`. A host Cranelift does not support, or a program it
    /// rejects, falls back to the interpreter, which is always correct; [`Self::fallback`] says
    /// why. Both backends narrow the rules a call runs with the program's field scans.
    pub fn new(program: Arc<Program>, backend: Backend) -> Executable {
        let (native, fallback) = match backend {
            Backend::Interp => (None, None),
            Backend::Jit => match jit::compile(&program, JitOptions::default()) {
                Ok(code) => (Some(Arc::new(code)), None),
                Err(error) => (None, Some(error.to_string())),
            },
        };
        let scans = native.is_none().then(|| Arc::new(Scans::build(&program)));
        if let Some(scans) = native.as_ref().map(|n| n.scans()).or(scans.as_deref()) {
            scans.warm();
            compile_regexes_rules_run(&program, scans);
        }
        Executable {
            program,
            native,
            scans,
            fallback,
        }
    }

    /// `program` for the interpreter, with each regex and field scan built on the call that
    /// first needs it: for a process that makes one decision (a hook), which runs the rules of
    /// one tool and builds only what they use.
    pub fn for_one_call(program: Arc<Program>) -> Executable {
        let index = ProgramIndex::of(&program);
        Executable::for_one_call_indexed(program, &index)
    }

    /// [`Executable::for_one_call`] for a program read back with its index
    /// ([`ProgramIndex::fits`] it): its scans and list groups are built from the index, and each
    /// rule's nodes are read when a call first runs the rule.
    pub fn for_one_call_indexed(program: Arc<Program>, index: &ProgramIndex) -> Executable {
        program.set_list_groups(index.lists.clone());
        let scans = Some(Arc::new(Scans::indexed(&program, index)));
        Executable {
            program,
            native: None,
            scans,
            fallback: None,
        }
    }

    pub fn evaluator(&self) -> Evaluator<'_> {
        match (&self.native, &self.scans) {
            (None, Some(scans)) => Evaluator::indexed(&self.program, scans),
            (native, _) => Evaluator::new(&self.program, native.as_deref()),
        }
    }

    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    pub fn native(&self) -> Option<&NativeCode> {
        self.native.as_deref()
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        match self.native {
            Some(_) => Backend::Jit,
            None => Backend::Interp,
        }
    }

    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }
}

/// Compiles now, not on some call, every regex a rule may run itself. A rule whose whole
/// condition is a scanned test leaves its regex to the scan's set: it runs itself only on a
/// field that holds no string, where its regex is compiled on that first use.
fn compile_regexes_rules_run(program: &Program, scans: &Scans) {
    let run_by_rules = program
        .rules
        .iter()
        .filter(|rule| !scans.guard(rule.index).is_some_and(|guard| guard.whole))
        .flat_map(|rule| &rule.nodes);
    for node in run_by_rules {
        if let Op::Matches(_, regex) | Op::Redact(_, regex, _) = node.op {
            let _ = program.regex(regex);
        }
    }
}
