//! A policy set ready to evaluate: its lowered program and, under the JIT backend, the native
//! code of its conditions.

use std::sync::Arc;

use crate::interp::Evaluator;
use crate::ir::Program;
use crate::jit::{self, Backend, JitOptions, NativeCode};

#[derive(Clone, Debug)]
pub struct Executable {
    program: Arc<Program>,
    native: Option<Arc<NativeCode>>,
    /// Why the JIT was asked for and is not in use.
    fallback: Option<String>,
}

impl Executable {
    /// Compiles `program` for `backend`. A host Cranelift does not support, or a program it
    /// rejects, falls back to the interpreter, which is always correct; [`Self::fallback`] says
    /// why.
    pub fn new(program: Arc<Program>, backend: Backend) -> Executable {
        let (native, fallback) = match backend {
            Backend::Interp => (None, None),
            Backend::Jit => match jit::compile(&program, JitOptions::default()) {
                Ok(code) => (Some(Arc::new(code)), None),
                Err(error) => (None, Some(error.to_string())),
            },
        };
        Executable {
            program,
            native,
            fallback,
        }
    }

    pub fn evaluator(&self) -> Evaluator<'_> {
        Evaluator::new(&self.program, self.native.as_deref())
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
