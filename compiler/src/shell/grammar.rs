//! The bash grammar: one tree-sitter parser per thread, and parses that stop at a deadline.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{ParseOptions, ParseState, Parser, Tree};

thread_local! {
    /// One parser per thread: making one loads the grammar's tables.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn with_parser<T>(f: impl FnOnce(&mut Parser) -> Option<T>) -> Option<T> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        f(slot.as_mut()?)
    })
}

#[cfg(test)]
thread_local! {
    /// Steps of the tree's cursors and of the grammar's progress checks, for tests that hold
    /// the cost of a parse to the size of its line.
    pub(super) static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Why a script has no syntax tree.
pub(super) enum NoTree {
    /// The parse ran past the deadline and was stopped.
    OutOfTime,
    /// The grammar could not be loaded.
    NoGrammar,
}

/// Parses `text` with the bash grammar, stopping at `deadline`. Tree-sitter asks whether to go
/// on every hundred or so steps of its parser, error recovery included.
pub(super) fn parse_until(text: &str, deadline: Instant) -> Result<Tree, NoTree> {
    let mut out_of_time = false;
    let mut progress = |_: &ParseState| {
        #[cfg(test)]
        STEPS.with(|steps| steps.set(steps.get() + 100));
        if Instant::now() >= deadline {
            out_of_time = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    let tree = with_parser(|parser| {
        let options = ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(options),
        );
        if tree.is_none() {
            // A stopped parse would otherwise resume on the parser's next line.
            parser.reset();
        }
        tree
    });
    match tree {
        Some(tree) => Ok(tree),
        None if out_of_time => Err(NoTree::OutOfTime),
        None => Err(NoTree::NoGrammar),
    }
}
