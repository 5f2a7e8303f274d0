//! Policy tests: rule examples, checked when the policy compiles, and test blocks, run by
//! `sluice test`.

mod examples;
mod run;

pub use examples::{ExampleShapes, check_examples, count_examples, example_calls};
pub use run::{TestReport, run_tests, run_with_interpreter, test_call};
