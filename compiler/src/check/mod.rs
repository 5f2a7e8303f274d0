//! Checking (AST → typed tree): names, types against declarations, stage/effect contracts, regex
//! and glob validity, duplicates.

mod declarations;
mod effects;
mod expr;
mod rules;
mod schema;
mod tests;
mod typed;
mod types;

mod imports;
pub use declarations::{Declarations, ToolInfo, agent_record, collect_declarations, result_record};
pub use imports::{import_key, imported_item, imports_of};
pub use rules::{
    CheckedSet, DeclarationView, DeclaredTool, PlacedRule, RuleCheck, RuleSite, SourceUnit,
    check_rule, check_set,
};
pub use schema::schema_key;
pub(crate) use tests::conform;
pub use tests::{CheckedTest, Expect, ResultFixture, TestStep};
pub use typed::*;
pub use types::{Record, Ty};
