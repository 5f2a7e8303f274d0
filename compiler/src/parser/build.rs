//! Step 2 of parsing (CST → AST): turns pest's pairs into the syntax tree, with spans.

use std::cell::RefCell;

use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, ConstPrattParser, Op};

use super::Rule;
use super::err::{MAX_NESTING, MAX_OPERATORS};
use crate::ast::*;
use crate::decision::Expiry;
use crate::diagnostics::{Code, Diagnostic};

type Node<'i> = Pair<'i, Rule>;

/// Why a node was not built.
enum Unbuilt {
    /// Its children are not what the grammar promises; never expected, reported if seen.
    Malformed(Span),
    /// It breaks a rule the grammar leaves to the builder, already reported.
    Refused,
}

use Unbuilt::{Malformed, Refused};

type Built<T> = Result<T, Unbuilt>;

/// Operator precedence, loosest first: `not` binds looser than the comparisons, so that
/// `not a == b` is `not (a == b)`.
static PRECEDENCE: ConstPrattParser<Rule, 7> = ConstPrattParser::new_const([
    (Op::infix(Rule::kw_or, Assoc::Left), true),
    (Op::infix(Rule::kw_and, Assoc::Left), true),
    (Op::prefix(Rule::kw_not), true),
    (Op::infix(Rule::cmp_op, Assoc::Left), true),
    (Op::postfix(Rule::argv_match), false),
    (Op::infix(Rule::coalesce_op, Assoc::Left), true),
    (Op::infix(Rule::add_op, Assoc::Left), true),
]);

/// An expression, what its outermost operator allows around it, and its text's span (which,
/// unlike the expression's, includes the parentheses around an operand).
struct Shaped(Expr, Shape, Span);

#[derive(Clone, Copy)]
enum Shape {
    /// An operand: a term, a parenthesized expression, a `??` or a `+`.
    Operand,
    /// A comparison or an argv match.
    Comparison,
    Not,
    /// An `and` or an `or`.
    Logic,
}

struct Builder<'a> {
    path: &'a str,
    offset: usize,
    diagnostics: Vec<Diagnostic>,
    /// How many more operators the item being built may hold (see [`MAX_OPERATORS`]).
    operators_left: usize,
    /// How deep the builder has recursed into types and expressions.
    depth: usize,
}

/// How deep the builder recurses before it refuses: a second line behind the nesting pre-scan,
/// which refuses such text before it reaches pest (a level of brackets can cost the builder two
/// levels: a parenthesized operand, then its expression).
const MAX_BUILD_DEPTH: usize = 2 * MAX_NESTING + 8;

pub(crate) fn build_file(
    path: &str,
    mut pairs: Pairs<'_, Rule>,
    offset: usize,
) -> (PolicyFile, Vec<Diagnostic>) {
    let mut builder = Builder {
        path,
        offset,
        diagnostics: Vec::new(),
        operators_left: MAX_OPERATORS,
        depth: 0,
    };
    let mut file = PolicyFile::default();
    if let Some(root) = pairs.next() {
        for node in children(root) {
            builder.operators_left = MAX_OPERATORS;
            let result = match node.as_rule() {
                Rule::header => builder.header(node).map(|h| file.header = Some(h)),
                Rule::import_decl => builder
                    .import_decl(node)
                    .map(|i| file.items.push(Item::Import(i))),
                Rule::tool_decl => builder
                    .tool_decl(node)
                    .map(|t| file.items.push(Item::Tool(t))),
                Rule::label_decl => builder
                    .label_decl(node)
                    .map(|l| file.items.push(Item::Label(l))),
                Rule::context_decl => builder
                    .context_decl(node)
                    .map(|c| file.items.push(Item::Context(c))),
                Rule::effects_decl => builder
                    .effects_decl(node)
                    .map(|e| file.items.push(Item::Effects(e))),
                Rule::rule_decl => builder.rule(node).map(|r| file.items.push(Item::Rule(r))),
                Rule::test_block => builder
                    .test_block(node)
                    .map(|t| file.items.push(Item::Test(t))),
                _ => Ok(()),
            };
            if let Err(Malformed(span)) = result {
                builder.diagnostics.push(
                    Diagnostic::new(Code::Syntax, path, span, "this item could not be read")
                        .help("the parser accepted text the builder does not understand; please report it"),
                );
            }
        }
    }
    (file, builder.diagnostics)
}

/// The children of a node, without keyword tokens (their meaning is the node's rule).
fn children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    node.into_inner()
        .filter(|child| !is_keyword(child.as_rule()))
}

fn is_keyword(kind_of: Rule) -> bool {
    matches!(
        kind_of,
        Rule::kw_policy
            | Rule::kw_tool
            | Rule::kw_import
            | Rule::kw_from
            | Rule::kw_context
            | Rule::kw_on
            | Rule::kw_effects
            | Rule::kw_for
            | Rule::kw_when
            | Rule::kw_allow
            | Rule::kw_accept
            | Rule::kw_safe
            | Rule::kw_deny
            | Rule::kw_ask
            | Rule::kw_replace
            | Rule::kw_content
            | Rule::kw_value
            | Rule::kw_fail
            | Rule::kw_with
            | Rule::kw_attach
            | Rule::kw_redact
            | Rule::kw_label
            | Rule::kw_session
            | Rule::kw_error
            | Rule::kw_as
            | Rule::kw_where
            | Rule::kw_examples
            | Rule::kw_test
            | Rule::kw_agent
            | Rule::kw_call
            | Rule::kw_result
            | Rule::kw_expect
            | Rule::kw_gate
            | Rule::kw_no
            | Rule::kw_rule
            | Rule::kw_reason
            | Rule::kw_part
            | Rule::kw_or
            | Rule::kw_and
            | Rule::kw_not
            | Rule::kw_in
            | Rule::EOI
    )
}

impl Builder<'_> {
    /// The node's span without the trailing whitespace pest attributes to it when an optional
    /// part after it did not match.
    fn span(&self, node: &Node<'_>) -> Span {
        let s = node.as_span();
        let trimmed = node.as_str().trim_end().len();
        Span::new(s.start() + self.offset, s.start() + trimmed + self.offset)
    }

    fn ident(&self, node: Node<'_>) -> Ident {
        Ident {
            name: node.as_str().to_string(),
            span: self.span(&node),
        }
    }

    fn next<'i>(&self, it: &mut impl Iterator<Item = Node<'i>>, parent: Span) -> Built<Node<'i>> {
        it.next().ok_or(Malformed(parent))
    }

    fn header(&mut self, node: Node<'_>) -> Built<Header> {
        let span = self.span(&node);
        let mut it = children(node);
        let name = self.ident(self.next(&mut it, span)?);
        let description = match it.next() {
            Some(s) => Some(self.plain_string(s)?),
            None => None,
        };
        Ok(Header {
            name,
            description,
            span,
        })
    }

    fn import_decl(&mut self, node: Node<'_>) -> Built<ImportDecl> {
        let span = self.span(&node);
        let mut it = children(node);
        let target = self.next(&mut it, span)?;
        let path_span = self.span(&target);
        let path = self.plain_string(target)?;
        Ok(ImportDecl {
            path,
            path_span,
            span,
        })
    }

    fn tool_decl(&mut self, node: Node<'_>) -> Built<ToolDecl> {
        let span = self.span(&node);
        let mut it = children(node);
        let name = self.ident(self.next(&mut it, span)?);
        let shape_node = self.next(&mut it, span)?;
        let shape = match shape_node.as_rule() {
            Rule::schema_ref => {
                let span = self.span(&shape_node);
                let mut inner = children(shape_node);
                let path = self.plain_string(self.next(&mut inner, span)?)?;
                ToolShape::Schema { path, span }
            }
            _ => ToolShape::Fields(self.record_fields(shape_node)?),
        };
        Ok(ToolDecl { name, shape, span })
    }

    fn label_decl(&mut self, node: Node<'_>) -> Built<LabelDecl> {
        let span = self.span(&node);
        let mut it = children(node);
        let name = self.ident(self.next(&mut it, span)?);
        Ok(LabelDecl { name, span })
    }

    /// `label session "NAME" [for N UNIT]`.
    fn label_effect(&mut self, node: Node<'_>) -> Built<Effect> {
        let span = self.span(&node);
        let mut it = children(node);
        let name_node = self.next(&mut it, span)?;
        let name_span = self.span(&name_node);
        let name = self.plain_string(name_node)?;
        let (expiry, end) = match it.next() {
            Some(node) => {
                let end = self.span(&node).end;
                (Some(self.label_expiry(node)?), end)
            }
            None => (None, name_span.end),
        };
        let span = Span::new(span.start as usize, end as usize);
        Ok(Effect {
            kind: EffectKind::Label {
                name,
                name_span,
                expiry,
            },
            span,
        })
    }

    fn label_expiry(&mut self, node: Node<'_>) -> Built<Expiry> {
        let span = self.span(&node);
        let mut it = children(node);
        let count_node = self.next(&mut it, span)?;
        let count_span = self.span(&count_node);
        let count = self.int(&count_node);
        let unit = self.next(&mut it, span)?;
        let Ok(count) = u64::try_from(count) else {
            self.diagnostics.push(
                Diagnostic::new(Code::InvalidLiteral, self.path, count_span, "a label cannot last a negative time")
                    .label("negative")
                    .help("write how many calls or how long the label holds, such as `for 20 calls` or `for 30 m`"),
            );
            return Ok(Expiry::Calls(0));
        };
        let seconds = |per: u64| Expiry::Seconds(count.saturating_mul(per));
        Ok(match unit.as_str() {
            "call" | "calls" => Expiry::Calls(count),
            "s" => seconds(1),
            "m" => seconds(60),
            "h" => seconds(3_600),
            "d" => seconds(86_400),
            _ => return Err(Malformed(span)),
        })
    }

    fn context_decl(&mut self, node: Node<'_>) -> Built<ContextDecl> {
        let span = self.span(&node);
        let mut it = children(node);
        let fields = self.record_fields(self.next(&mut it, span)?)?;
        Ok(ContextDecl { fields, span })
    }

    fn effects_decl(&mut self, node: Node<'_>) -> Built<EffectsDecl> {
        let span = self.span(&node);
        let mut it = children(node);
        let rows = self.literal(self.next(&mut it, span)?)?;
        Ok(EffectsDecl { rows, span })
    }

    fn record_fields(&mut self, node: Node<'_>) -> Built<Vec<FieldDecl>> {
        children(node).map(|field| self.field_decl(field)).collect()
    }

    fn field_decl(&mut self, node: Node<'_>) -> Built<FieldDecl> {
        let span = self.span(&node);
        let mut it = children(node);
        let name = self.ident(self.next(&mut it, span)?);
        let ty = self.type_expr(self.next(&mut it, span)?)?;
        Ok(FieldDecl { name, ty })
    }

    /// Enters one level of recursion, or refuses past [`MAX_BUILD_DEPTH`]; every `Ok` is paired
    /// with a `self.depth -= 1` once the level is built.
    fn enter(&mut self, node: &Node<'_>) -> Built<()> {
        if self.depth >= MAX_BUILD_DEPTH {
            let span = self.span(node);
            self.diagnostics.push(
                Diagnostic::new(Code::ParserLimit, self.path, span, format!("this item nests deeper than {MAX_BUILD_DEPTH} levels"))
                    .label("too deep")
                    .help("flatten the expression or type, for example with `any(...)` over a list or with several rules"),
            );
            return Err(Refused);
        }
        self.depth += 1;
        Ok(())
    }

    fn type_expr(&mut self, node: Node<'_>) -> Built<TypeExpr> {
        self.enter(&node)?;
        let built = self.type_expr_within(node);
        self.depth -= 1;
        built
    }

    fn type_expr_within(&mut self, node: Node<'_>) -> Built<TypeExpr> {
        let span = self.span(&node);
        let mut it = children(node);
        let atom = self.next(&mut it, span)?;
        let optional = it
            .next()
            .is_some_and(|n| n.as_rule() == Rule::optional_mark);
        let kind = match atom.as_rule() {
            Rule::prim_type => match atom.as_str() {
                "string" => TypeKind::String,
                "int" => TypeKind::Int,
                "float" => TypeKind::Float,
                "bool" => TypeKind::Bool,
                _ => TypeKind::Any,
            },
            Rule::list_type => {
                let list_span = self.span(&atom);
                let mut inner = children(atom);
                TypeKind::List(Box::new(self.type_expr(self.next(&mut inner, list_span)?)?))
            }
            Rule::record_type => TypeKind::Record(self.record_fields(atom)?),
            Rule::enum_type => {
                let values = children(atom)
                    .map(|s| self.plain_string(s))
                    .collect::<Built<Vec<_>>>()?;
                TypeKind::Enum(values)
            }
            _ => return Err(Malformed(span)),
        };
        Ok(TypeExpr {
            kind,
            optional,
            span,
        })
    }

    fn rule(&mut self, node: Node<'_>) -> Built<crate::ast::Rule> {
        let span = self.span(&node);
        let mut it = children(node);
        let kind = match self.next(&mut it, span)?.as_str() {
            "precheck" => RuleKind::Precheck,
            "gate" => RuleKind::Gate,
            "concurrency" => RuleKind::Concurrency,
            _ => RuleKind::Postcheck,
        };
        let name = self.ident(self.next(&mut it, span)?);
        let selectors = children(self.next(&mut it, span)?)
            .map(|s| Selector {
                text: s.as_str().to_string(),
                span: self.span(&s),
            })
            .collect();
        let mut condition = None;
        let mut effects = Vec::new();
        let mut examples = None;
        let mut per_part = None;
        for part in it {
            match part.as_rule() {
                Rule::per_part => {
                    let part_span = self.span(&part);
                    let mut inner = children(part);
                    let var = self.ident(self.next(&mut inner, part_span)?);
                    let list = self.expr(self.next(&mut inner, part_span)?)?;
                    per_part = Some(Box::new(PerPart {
                        var,
                        list,
                        span: part_span,
                    }));
                }
                Rule::condition => {
                    let cond_span = self.span(&part);
                    let mut inner = children(part);
                    condition = Some(self.expr(self.next(&mut inner, cond_span)?)?);
                }
                Rule::effects => {
                    for effect in children(part) {
                        effects.push(self.effect(effect)?);
                    }
                }
                Rule::examples => {
                    let ex_span = self.span(&part);
                    let mut inner = children(part);
                    examples = Some(self.literal(self.next(&mut inner, ex_span)?)?);
                }
                _ => return Err(Malformed(span)),
            }
        }
        Ok(crate::ast::Rule {
            kind,
            name,
            selectors,
            per_part,
            condition,
            effects,
            examples,
            span,
        })
    }

    fn effect(&mut self, node: Node<'_>) -> Built<Effect> {
        let span = self.span(&node);
        let kind_of = node.as_rule();
        if kind_of == Rule::label_effect {
            return self.label_effect(node);
        }
        let mut exprs = Vec::new();
        for child in children(node) {
            exprs.push(self.expr(child)?);
        }
        let mut exprs = exprs.into_iter();
        let mut take = || exprs.next().ok_or(Malformed(span));
        let kind = match kind_of {
            Rule::allow_effect => EffectKind::Allow,
            Rule::accept_effect => EffectKind::Accept,
            Rule::safe_effect => EffectKind::Safe,
            Rule::deny_effect => EffectKind::Deny(take()?),
            Rule::ask_effect => EffectKind::Ask(take()?),
            Rule::replace_content => EffectKind::ReplaceContent(take()?),
            Rule::replace_value => EffectKind::ReplaceValue(take()?),
            Rule::fail_effect => EffectKind::Fail {
                message: take()?,
                context: take().ok(),
            },
            Rule::attach_effect => EffectKind::Attach(take()?),
            Rule::redact_effect => EffectKind::Redact {
                pattern: take()?,
                family: take()?,
                filter: take().ok(),
            },
            Rule::veto_effect => EffectKind::Veto(take()?),
            _ => return Err(Malformed(span)),
        };
        Ok(Effect { kind, span })
    }

    fn test_block(&mut self, node: Node<'_>) -> Built<TestBlock> {
        let span = self.span(&node);
        let mut it = children(node);
        let name_node = self.next(&mut it, span)?;
        let name_span = self.span(&name_node);
        let name = self.plain_string(name_node)?;
        let statements = it
            .map(|stmt| self.test_stmt(stmt))
            .collect::<Built<Vec<_>>>()?;
        Ok(TestBlock {
            name,
            name_span,
            statements,
            span,
        })
    }

    fn test_stmt(&mut self, node: Node<'_>) -> Built<TestStmt> {
        let span = self.span(&node);
        let kind_of = node.as_rule();
        let mut it = children(node);
        let kind = match kind_of {
            Rule::agent_stmt => TestStmtKind::Agent(self.literal(self.next(&mut it, span)?)?),
            Rule::context_stmt => TestStmtKind::Context(self.literal(self.next(&mut it, span)?)?),
            Rule::session_stmt => TestStmtKind::Session(self.literal(self.next(&mut it, span)?)?),
            Rule::call_stmt => {
                let tool = self.ident(self.next(&mut it, span)?);
                let args = self.literal(self.next(&mut it, span)?)?;
                TestStmtKind::Call { tool, args }
            }
            Rule::result_stmt => {
                let status = self.ident(self.next(&mut it, span)?);
                let fields = match it.next() {
                    Some(lit) => Some(self.literal(lit)?),
                    None => None,
                };
                TestStmtKind::Result { status, fields }
            }
            Rule::expect_stmt => TestStmtKind::Expect(self.expectation(self.next(&mut it, span)?)?),
            _ => return Err(Malformed(span)),
        };
        Ok(TestStmt { kind, span })
    }

    fn expectation(&mut self, node: Node<'_>) -> Built<Expectation> {
        let span = self.span(&node);
        let kind_of = node.as_rule();
        let mut it = children(node);
        Ok(match kind_of {
            Rule::expect_no_gate => Expectation::NoGate,
            Rule::expect_verdict => Expectation::Verdict(self.ident(self.next(&mut it, span)?)),
            Rule::expect_gate => Expectation::Gate(self.ident(self.next(&mut it, span)?)),
            Rule::expect_rule => Expectation::Rule(self.ident(self.next(&mut it, span)?)),
            Rule::expect_reason => {
                Expectation::Reason(self.plain_string(self.next(&mut it, span)?)?)
            }
            Rule::expect_content => {
                Expectation::Content(self.plain_string(self.next(&mut it, span)?)?)
            }
            Rule::expect_error => Expectation::Error(self.plain_string(self.next(&mut it, span)?)?),
            Rule::expect_fail => Expectation::Fail(self.plain_string(self.next(&mut it, span)?)?),
            Rule::expect_attached => {
                Expectation::Attached(self.plain_string(self.next(&mut it, span)?)?)
            }
            Rule::expect_value => Expectation::Value(self.literal(self.next(&mut it, span)?)?),
            Rule::expect_part => {
                let part = self.plain_string(self.next(&mut it, span)?)?;
                Expectation::Part(part, self.ident(self.next(&mut it, span)?))
            }
            Rule::expect_label => {
                let name = self.next(&mut it, span)?;
                let name_span = self.span(&name);
                Expectation::Label(Ident {
                    name: self.plain_string(name)?,
                    span: name_span,
                })
            }
            _ => return Err(Malformed(span)),
        })
    }

    // ------------------------------------------------------------------ literal values

    fn literal(&mut self, node: Node<'_>) -> Built<Literal> {
        self.enter(&node)?;
        let built = self.literal_within(node);
        self.depth -= 1;
        built
    }

    fn literal_within(&mut self, node: Node<'_>) -> Built<Literal> {
        let span = self.span(&node);
        let kind = match node.as_rule() {
            Rule::object_lit => {
                let mut entries = Vec::new();
                for entry in children(node) {
                    let entry_span = self.span(&entry);
                    let mut it = children(entry);
                    let key_node = self.next(&mut it, entry_span)?;
                    let key = match key_node.as_rule() {
                        Rule::field_name => self.ident(key_node),
                        _ => {
                            let key_span = self.span(&key_node);
                            Ident {
                                name: self.plain_string(key_node)?,
                                span: key_span,
                            }
                        }
                    };
                    let value = self.literal(self.next(&mut it, entry_span)?)?;
                    entries.push((key, value));
                }
                LiteralKind::Object(entries)
            }
            Rule::list_lit => LiteralKind::List(
                children(node)
                    .map(|n| self.literal(n))
                    .collect::<Built<Vec<_>>>()?,
            ),
            Rule::int => LiteralKind::Int(self.int(&node)),
            Rule::float => LiteralKind::Float(F64(node.as_str().parse().unwrap_or(0.0))),
            Rule::boolean => LiteralKind::Bool(node.as_str() == "true"),
            Rule::null => LiteralKind::Null,
            Rule::interp_string | Rule::raw_string | Rule::data_string => {
                LiteralKind::Str(self.plain_string(node)?)
            }
            _ => return Err(Malformed(span)),
        };
        Ok(Literal { kind, span })
    }

    fn int(&mut self, node: &Node<'_>) -> i64 {
        node.as_str().parse().unwrap_or_else(|_| {
            let span = self.span(node);
            self.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidLiteral,
                    self.path,
                    span,
                    format!("integer `{}` is out of range", node.as_str()),
                )
                .label("does not fit in 64 bits")
                .help(format!("integers range from {} to {}", i64::MIN, i64::MAX)),
            );
            0
        })
    }

    /// A string with no interpolation: names, messages of tests, data literals.
    fn plain_string(&mut self, node: Node<'_>) -> Built<String> {
        let span = self.span(&node);
        let mut text = String::new();
        for part in self.string_parts(node)? {
            match part {
                StrPart::Text(t) => text.push_str(&t),
                StrPart::Expr(e) => self.diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidLiteral,
                        self.path,
                        e.span,
                        "interpolation is not allowed in this string",
                    )
                    .label("interpolation")
                    .help("write `\\{` for a literal brace, or use a raw string r\"...\"")
                    .secondary(self.path, span, "in this string"),
                ),
            }
        }
        Ok(text)
    }

    fn string_parts(&mut self, node: Node<'_>) -> Built<Vec<StrPart>> {
        if node.as_rule() == Rule::raw_string {
            let text = node
                .into_inner()
                .find(|n| n.as_rule() == Rule::raw_text)
                .map(|n| n.as_str().to_string());
            return Ok(vec![StrPart::Text(text.unwrap_or_default())]);
        }
        let mut parts: Vec<StrPart> = Vec::new();
        let push_text = |parts: &mut Vec<StrPart>, s: &str| match parts.last_mut() {
            Some(StrPart::Text(t)) => t.push_str(s),
            _ => parts.push(StrPart::Text(s.to_string())),
        };
        for piece in node.into_inner() {
            match piece.as_rule() {
                Rule::text | Rule::data_text => push_text(&mut parts, piece.as_str()),
                Rule::escape => push_text(&mut parts, unescape(piece.as_str())),
                Rule::interpolation => {
                    let span = self.span(&piece);
                    let mut inner = children(piece);
                    parts.push(StrPart::Expr(self.expr(self.next(&mut inner, span)?)?));
                }
                _ => {}
            }
        }
        Ok(parts)
    }

    // ------------------------------------------------------------------ expressions

    fn expr(&mut self, node: Node<'_>) -> Built<Expr> {
        self.enter(&node)?;
        let built = self.expr_within(node);
        self.depth -= 1;
        built
    }

    fn expr_within(&mut self, node: Node<'_>) -> Built<Expr> {
        match node.as_rule() {
            Rule::expr => {
                let operators = node.clone().into_inner();
                self.spend_operators(operators.filter(|pair| pair.as_rule() != Rule::postfix))?;
                self.operators(node.into_inner())
                    .map(|Shaped(expr, ..)| expr)
            }
            Rule::postfix => self.postfix(node),
            _ => self.primary(node),
        }
    }

    /// Counts operators against the item's budget before any is built, so that no stage, this
    /// builder included, recurses once per operator of a hostile chain.
    fn spend_operators<'i>(&mut self, operators: impl Iterator<Item = Node<'i>>) -> Built<()> {
        let mut spent = 0;
        for operator in operators {
            if spent == self.operators_left {
                let span = self.span(&operator);
                self.diagnostics.push(
                    Diagnostic::new(Code::ParserLimit, self.path, span, format!("this item has more than {MAX_OPERATORS} operators"))
                        .label("one too many")
                        .help("split the condition over several rules, or test a list with `in [...]` or `any(...)`"),
                );
                return Err(Refused);
            }
            spent += 1;
        }
        self.operators_left -= spent;
        Ok(())
    }

    /// The operands and operators of one expression, grouped by [`PRECEDENCE`]. An operator's
    /// span runs over its operands' text, parentheses included.
    fn operators(&mut self, pairs: Pairs<'_, Rule>) -> Built<Shaped> {
        let builder = RefCell::new(self);
        PRECEDENCE
            .map_primary(|operand| {
                let mut builder = builder.borrow_mut();
                let text = builder.span(&operand);
                let expr = builder.expr(operand)?;
                Ok(Shaped(expr, Shape::Operand, text))
            })
            .map_prefix(|not, operand| {
                let Shaped(operand, _, text) = operand?;
                let span = builder.borrow().span(&not).to(text);
                let kind = ExprKind::Not(Box::new(operand));
                Ok(Shaped(Expr { kind, span }, Shape::Not, span))
            })
            .map_postfix(|subject, argv| {
                let mut builder = builder.borrow_mut();
                let (subject, text) = builder.operand(subject?, &argv)?;
                let span = text.to(builder.span(&argv));
                let pattern = builder.argv_pattern(argv)?;
                let subject = Box::new(subject);
                let kind = ExprKind::ArgvMatch { subject, pattern };
                Ok(Shaped(Expr { kind, span }, Shape::Comparison, span))
            })
            .map_infix(|lhs, op, rhs| {
                let ((lhs, lhs_text), (rhs, rhs_text), shape) = match op.as_rule() {
                    Rule::kw_or | Rule::kw_and => {
                        let (Shaped(lhs, _, l), Shaped(rhs, _, r)) = (lhs?, rhs?);
                        ((lhs, l), (rhs, r), Shape::Logic)
                    }
                    rule => {
                        let mut builder = builder.borrow_mut();
                        let lhs = builder.operand(lhs?, &op)?;
                        let rhs = builder.operand(rhs?, &op)?;
                        let shape = match rule {
                            Rule::cmp_op => Shape::Comparison,
                            _ => Shape::Operand,
                        };
                        (lhs, rhs, shape)
                    }
                };
                let op = match op.as_rule() {
                    Rule::kw_or => BinOp::Or,
                    Rule::kw_and => BinOp::And,
                    Rule::coalesce_op => BinOp::Coalesce,
                    Rule::add_op => BinOp::Add,
                    _ => comparison(op.as_str()),
                };
                let span = lhs_text.to(rhs_text);
                let (lhs, rhs) = (Box::new(lhs), Box::new(rhs));
                let kind = ExprKind::Binary { op, lhs, rhs };
                Ok(Shaped(Expr { kind, span }, shape, span))
            })
            .parse(pairs)
    }

    /// The operand of an operator that binds tighter than `not`. A comparison, a `not` or an
    /// `and`/`or` there needs parentheses: comparisons do not chain, and `not a == b` means
    /// `not (a == b)`, so `a == not b` is refused rather than read some other way.
    fn operand(&mut self, Shaped(expr, shape, text): Shaped, op: &Node<'_>) -> Built<(Expr, Span)> {
        let what = match shape {
            Shape::Operand => return Ok((expr, text)),
            Shape::Comparison => "a comparison",
            Shape::Not => "a `not` expression",
            Shape::Logic => "an `and` or `or` expression",
        };
        let op_text = match op.as_rule() {
            Rule::argv_match => "~".to_string(),
            _ => op.as_str().split_whitespace().collect::<Vec<_>>().join(" "),
        };
        self.diagnostics.push(
            Diagnostic::new(
                Code::Syntax,
                self.path,
                text,
                format!("{what} cannot be an operand of `{op_text}`"),
            )
            .label("needs parentheses")
            .help("put it in parentheses, or join two comparisons with `and`"),
        );
        Err(Refused)
    }

    fn argv_pattern(&mut self, node: Node<'_>) -> Built<ArgvPattern> {
        let mut items = Vec::new();
        for item in node.into_inner().flat_map(|pattern| pattern.into_inner()) {
            if item.as_rule() == Rule::pattern_rest {
                items.push(PatternItem::Rest);
                continue;
            }
            let mut alternatives = Vec::new();
            for word in item.into_inner() {
                alternatives.push(if word.as_rule() == Rule::pattern_any {
                    PatternWord::Any
                } else {
                    PatternWord::Literal(self.plain_string(word)?)
                });
            }
            items.push(PatternItem::Word(alternatives));
        }
        Ok(ArgvPattern { items })
    }

    fn postfix(&mut self, node: Node<'_>) -> Built<Expr> {
        let span = self.span(&node);
        self.spend_operators(node.clone().into_inner().skip(1))?;
        let mut it = children(node);
        let mut expr = self.primary(self.next(&mut it, span)?)?;
        for op in it {
            let op_span = self.span(&op);
            let whole = expr.span.to(op_span);
            let kind_of = op.as_rule();
            let mut inner = children(op);
            expr = match kind_of {
                Rule::field_access => {
                    let field = self.ident(self.next(&mut inner, op_span)?);
                    Expr {
                        kind: ExprKind::Field(Box::new(expr), field),
                        span: whole,
                    }
                }
                Rule::method_call => {
                    let method = self.ident(self.next(&mut inner, op_span)?);
                    let args = match inner.next() {
                        Some(args) => self.arguments(args)?,
                        None => Vec::new(),
                    };
                    Expr {
                        kind: ExprKind::Method {
                            receiver: Box::new(expr),
                            method,
                            args,
                        },
                        span: whole,
                    }
                }
                Rule::index => {
                    let index = self.expr(self.next(&mut inner, op_span)?)?;
                    Expr {
                        kind: ExprKind::Index(Box::new(expr), Box::new(index)),
                        span: whole,
                    }
                }
                _ => return Err(Malformed(op_span)),
            };
        }
        Ok(expr)
    }

    fn arguments(&mut self, node: Node<'_>) -> Built<Vec<Expr>> {
        children(node).map(|arg| self.expr(arg)).collect()
    }

    fn primary(&mut self, node: Node<'_>) -> Built<Expr> {
        let span = self.span(&node);
        let kind = match node.as_rule() {
            Rule::int => ExprKind::Int(self.int(&node)),
            Rule::float => ExprKind::Float(F64(node.as_str().parse().unwrap_or(0.0))),
            Rule::boolean => ExprKind::Bool(node.as_str() == "true"),
            Rule::null => ExprKind::Null,
            Rule::interp_string | Rule::raw_string => ExprKind::Str(self.string_parts(node)?),
            Rule::ident => ExprKind::Name(node.as_str().to_string()),
            Rule::list_expr => ExprKind::List(
                children(node)
                    .map(|e| self.expr(e))
                    .collect::<Built<Vec<_>>>()?,
            ),
            Rule::call => {
                let mut it = children(node);
                let function = self.ident(self.next(&mut it, span)?);
                let args = match it.next() {
                    Some(args) => self.arguments(args)?,
                    None => Vec::new(),
                };
                ExprKind::Call { function, args }
            }
            Rule::quantifier => {
                let mut it = children(node);
                let quantifier = match self.next(&mut it, span)?.as_str() {
                    "any" => Quantifier::Any,
                    _ => Quantifier::All,
                };
                let var = self.ident(self.next(&mut it, span)?);
                let list = self.expr(self.next(&mut it, span)?)?;
                let body = self.expr(self.next(&mut it, span)?)?;
                ExprKind::Quantified {
                    quantifier,
                    var,
                    list: Box::new(list),
                    body: Box::new(body),
                }
            }
            Rule::expr => return self.expr(node),
            _ => return Err(Malformed(span)),
        };
        Ok(Expr { kind, span })
    }
}

fn comparison(op: &str) -> BinOp {
    let words: Vec<&str> = op.split_whitespace().collect();
    match words.as_slice() {
        ["=="] => BinOp::Eq,
        ["!="] => BinOp::Ne,
        ["<="] => BinOp::Le,
        [">="] => BinOp::Ge,
        ["<"] => BinOp::Lt,
        [">"] => BinOp::Gt,
        ["not", "in"] => BinOp::NotIn,
        ["in"] => BinOp::In,
        ["matches"] => BinOp::Matches,
        _ => BinOp::Glob,
    }
}

fn unescape(escape: &str) -> &'static str {
    match escape {
        "\\n" => "\n",
        "\\t" => "\t",
        "\\r" => "\r",
        "\\0" => "\0",
        "\\{" => "{",
        "\\}" => "}",
        "\\\"" => "\"",
        _ => "\\",
    }
}
