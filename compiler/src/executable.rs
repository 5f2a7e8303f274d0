//! A policy set ready to evaluate: its lowered program and, under the JIT backend, the native
//! code of its conditions.

use std::sync::Arc;

use crate::interp::Evaluator;
use crate::ir::Program;
use crate::jit::{self, Backend, JitOptions, NativeCode};
use crate::scan::Scans;

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
        Executable {
            program,
            native,
            scans,
            fallback,
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
