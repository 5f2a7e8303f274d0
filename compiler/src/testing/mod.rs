//! Policy tests: rule examples, checked when the policy compiles, and test blocks, run by
//! `sluice test`.

mod examples;
mod run;

pub use examples::{ExampleShapes, check_examples, count_examples, example_calls};
pub use run::{
    LabelsSession, TestReport, run_tests, run_with_interpreter, step_call, test_call, test_calls,
};
