//! The Sluice policy language: parser, checker, linter, predicate IR and reference interpreter.

pub mod ast;
pub mod diagnostics;
pub mod parser;
