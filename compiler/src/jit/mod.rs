//! The JIT: rule conditions compiled to native code with Cranelift.
//!
//! The interpreter is the reference; the JIT must agree with it on every input. Both share the
//! value-level operations ([`crate::interp::ops`]) and the decision logic; native code replaces
//! the tree walk of each condition. A condition that faults re-runs in the interpreter, which
//! reports the exact error, and a rule the translator cannot express stays interpreted.

mod cell;
mod code;
mod helpers;
mod module;
mod translate;

pub use code::{ConditionCode, NativeCode, NativeFrame, Stats};
pub use module::{Jit, JitError, JitOptions, compile};

/// Which engine evaluates rule conditions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Native code from Cranelift, the interpreter where the host is unsupported.
    #[default]
    Jit,
    /// The interpreter (rules narrowed by the same field scans; `Evaluator::interpreted` is the
    /// reference, with no scan).
    Interp,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Jit => "jit",
            Backend::Interp => "interp",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "jit" => Ok(Backend::Jit),
            "interp" => Ok(Backend::Interp),
            other => Err(format!("unknown backend `{other}`: use `jit` or `interp`")),
        }
    }
}
