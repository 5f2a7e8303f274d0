//! The Sluice policy language: parser, checker, linter, predicate IR and reference interpreter.

pub mod ast;
pub mod budget;
pub mod builtin;
pub mod call;
mod call_json;
pub mod check;
pub mod db;
pub mod decision;
pub mod diagnostics;
pub mod executable;
pub mod format;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod json;
pub mod lint;
pub mod load;
pub mod lower;
pub mod parallel;
pub mod parser;
pub mod scan;
pub mod session;
pub mod shell;
pub mod testing;
