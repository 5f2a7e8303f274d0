//! The one table of diagnostic codes. Codes are stable: never renumber, only append.
//!
//! `lang-spec/diagnostics.md` is generated from this table and the fixtures under
//! `tests/golden/diagnostics/` (a test fails when the page is stale).

use super::Severity;

/// One entry of the registry.
#[derive(Clone, Copy, Debug)]
pub struct CodeInfo {
    pub code: Code,
    /// `sluice::E0001`.
    pub id: &'static str,
    /// A short kebab-case name.
    pub name: &'static str,
    pub severity: Severity,
    /// What the code means, one sentence for the catalogue.
    pub summary: &'static str,
}

macro_rules! registry {
    ($( $variant:ident = $id:literal, $severity:ident, $name:literal, $summary:literal; )*) => {
        /// A stable diagnostic code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $( $variant ),* }

        /// Every code, in catalogue order.
        pub const REGISTRY: &[CodeInfo] = &[
            $( CodeInfo {
                code: Code::$variant,
                id: concat!("sluice::", $id),
                name: $name,
                severity: Severity::$severity,
                summary: $summary,
            } ),*
        ];

        impl Code {
            pub fn info(self) -> &'static CodeInfo {
                match self { $( Code::$variant => &CodeInfo {
                    code: Code::$variant,
                    id: concat!("sluice::", $id),
                    name: $name,
                    severity: Severity::$severity,
                    summary: $summary,
                } ),* }
            }
        }
    };
}

registry! {
    Syntax = "E0001", Error, "syntax-error",
        "The text does not follow the grammar.";
    ParserLimit = "E0002", Error, "parser-limit",
        "The text nests too deeply, holds too many operators, or is so large that the parser gave up on it.";
    InvalidLiteral = "E0003", Error, "invalid-literal",
        "A literal cannot be represented: an integer out of range, or interpolation inside a data literal.";
    DuplicateTool = "E0004", Error, "duplicate-tool",
        "Two declarations in one policy set name the same tool.";
    DuplicateRule = "E0005", Error, "duplicate-rule",
        "Two rules in one policy set have the same name.";
    UnknownTool = "E0006", Error, "unknown-tool",
        "A rule or test names a tool that no declaration in the policy set declares.";
    UnknownField = "E0007", Error, "unknown-field",
        "A field is read that the tool, context or result does not declare.";
    UnknownName = "E0008", Error, "unknown-name",
        "A name is neither a root (`args`, `agent`, `context`, `result`, `tool`) nor a bound variable.";
    UnknownFunction = "E0009", Error, "unknown-function",
        "A function or method does not exist for the value it is called on.";
    WrongArity = "E0010", Error, "wrong-arity",
        "A function or method is called with the wrong number of arguments.";
    TypeMismatch = "E0011", Error, "type-mismatch",
        "A value of one type is used where another type is required.";
    OptionalWithoutDefault = "E0012", Error, "optional-without-default",
        "An optional field is used where a value is required, with no `??` default.";
    EffectNotAllowed = "E0013", Error, "effect-not-allowed",
        "A rule uses an effect that its stage does not allow.";
    ConflictingEffects = "E0014", Error, "conflicting-effects",
        "A rule's effects contradict each other, such as replacing both content and value.";
    InvalidRegex = "E0015", Error, "invalid-regex",
        "A regular expression does not compile.";
    InvalidGlob = "E0016", Error, "invalid-glob",
        "A glob pattern does not compile.";
    SchemaError = "E0017", Error, "schema-error",
        "A tool's JSON Schema cannot be read or turned into a declaration.";
    ExampleFailed = "E0018", Error, "example-failed",
        "A rule's example is not decided the way the example says.";
    InvalidExamples = "E0019", Error, "invalid-examples",
        "A rule's `examples` block is malformed.";
    ResultOutsidePostcheck = "E0020", Error, "result-outside-postcheck",
        "`result` is read by a rule that runs before the tool does.";
    InvalidTest = "E0021", Error, "invalid-test",
        "A test block is malformed.";
    DuplicateTest = "E0022", Error, "duplicate-test",
        "Two test blocks in one policy set have the same name.";
    DuplicateField = "E0023", Error, "duplicate-field",
        "A declaration or literal names the same field twice.";
    ConflictingContext = "E0024", Error, "conflicting-context",
        "Two `context` declarations give one field different types.";
    PerPartMisplaced = "E0025", Error, "per-part-misplaced",
        "A `for … in` clause, which judges each part on its own, is written on a rule that is neither a pre-check nor a gate.";
    InvalidEffectRow = "E0026", Error, "invalid-effect-row",
        "A row of an `effects` declaration is not a valid row of the shell effect table.";
    UnknownKeyword = "E0027", Error, "unknown-keyword",
        "A word stands where a keyword, a rule kind or an effect belongs and is close to one: most likely a misspelling.";
    ConfigSyntax = "E0030", Error, "config-syntax",
        "The configuration file (`sluice.toml`) is not valid TOML.";
    ConfigUnknownKey = "E0031", Error, "config-unknown-key",
        "The configuration has a key that Sluice does not know, often a misspelt one.";
    ConfigValue = "E0032", Error, "config-invalid-value",
        "A configuration value has the wrong type, names a set that cannot be found, or is not one of the values its key takes.";
    UnresolvedImport = "E0033", Error, "unresolved-import",
        "An `import` names a file that does not exist or cannot be read.";
    ImportHoldsRules = "E0034", Error, "import-holds-rules",
        "A file that is imported holds a rule or a test; an imported file may hold only declarations.";
    UnknownLabel = "E0035", Error, "unknown-label",
        "A rule attaches or tests a session label that no `label` declaration in the policy set declares.";
    DuplicateLabel = "E0036", Error, "duplicate-label",
        "Two declarations in one policy set name the same session label.";
    NeverMatches = "W0001", Warning, "never-matches",
        "A rule's condition is false for every call, so the rule never applies.";
    ShadowedAllow = "W0002", Warning, "shadowed-allow",
        "An `allow` rule is always overridden by a stricter rule of the same policy set.";
    SelectorMatchesNothing = "W0003", Warning, "selector-matches-nothing",
        "A rule's tool glob matches no declared tool.";
    UnusedTool = "W0004", Warning, "unused-tool",
        "A tool is declared but no rule or test refers to it.";
    EmptyMatchGuard = "W0005", Warning, "empty-match-guard",
        "A regular expression that matches the empty string guards a deny or a veto, so it matches every input.";
}

impl Code {
    pub fn id(self) -> &'static str {
        self.info().id
    }

    pub fn severity(self) -> Severity {
        self.info().severity
    }

    /// `E0001` without the `sluice::` prefix, as used in fixture names.
    pub fn short(self) -> &'static str {
        self.id().trim_start_matches("sluice::")
    }

    pub fn from_short(short: &str) -> Option<Code> {
        REGISTRY
            .iter()
            .find(|info| info.code.short() == short)
            .map(|info| info.code)
    }
}
