//! Moving every span of a tree by one distance: an item is parsed, checked and lowered with
//! positions relative to its own start, then placed wherever it now sits in its file, so an edit
//! above an item neither redoes its work nor leaves its positions stale.

use super::{ContextDecl, Effect, EffectKind, Expectation, Expr, ExprKind, FieldDecl, Header};
use super::{Ident, Item, Literal, LiteralKind, PolicyFile, Rule, Selector, Span, StrPart};
use super::{TestBlock, TestStmt, TestStmtKind, ToolDecl, ToolShape, TypeExpr, TypeKind};

/// A tree whose spans can be moved from one origin to another.
pub trait Relocate {
    /// Moves every span `s` to `s - from + to`.
    fn relocate(&mut self, from: u32, to: u32);
}

impl Relocate for Span {
    fn relocate(&mut self, from: u32, to: u32) {
        let at = |n: u32| n.saturating_sub(from).saturating_add(to);
        self.start = at(self.start);
        self.end = at(self.end);
    }
}

impl<T: Relocate> Relocate for Option<T> {
    fn relocate(&mut self, from: u32, to: u32) {
        if let Some(inner) = self {
            inner.relocate(from, to);
        }
    }
}

impl<T: Relocate> Relocate for Vec<T> {
    fn relocate(&mut self, from: u32, to: u32) {
        for item in self {
            item.relocate(from, to);
        }
    }
}

impl<T: Relocate> Relocate for Box<T> {
    fn relocate(&mut self, from: u32, to: u32) {
        (**self).relocate(from, to);
    }
}

impl Relocate for Ident {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
    }
}

impl Relocate for PolicyFile {
    fn relocate(&mut self, from: u32, to: u32) {
        self.header.relocate(from, to);
        self.items.relocate(from, to);
    }
}

impl Relocate for Header {
    fn relocate(&mut self, from: u32, to: u32) {
        self.name.relocate(from, to);
        self.span.relocate(from, to);
    }
}

impl Relocate for Item {
    fn relocate(&mut self, from: u32, to: u32) {
        match self {
            Item::Import(import) => {
                import.path_span.relocate(from, to);
                import.span.relocate(from, to);
            }
            Item::Tool(tool) => tool.relocate(from, to),
            Item::Label(label) => {
                label.name.relocate(from, to);
                label.span.relocate(from, to);
            }
            Item::Context(context) => context.relocate(from, to),
            Item::Effects(effects) => {
                effects.rows.relocate(from, to);
                effects.span.relocate(from, to);
            }
            Item::Rule(rule) => rule.relocate(from, to),
            Item::Test(test) => test.relocate(from, to),
        }
    }
}

impl Relocate for ToolDecl {
    fn relocate(&mut self, from: u32, to: u32) {
        self.name.relocate(from, to);
        match &mut self.shape {
            ToolShape::Fields(fields) => fields.relocate(from, to),
            ToolShape::Schema { span, .. } => span.relocate(from, to),
        }
        self.span.relocate(from, to);
    }
}

impl Relocate for ContextDecl {
    fn relocate(&mut self, from: u32, to: u32) {
        self.fields.relocate(from, to);
        self.span.relocate(from, to);
    }
}

impl Relocate for FieldDecl {
    fn relocate(&mut self, from: u32, to: u32) {
        self.name.relocate(from, to);
        self.ty.relocate(from, to);
    }
}

impl Relocate for TypeExpr {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
        match &mut self.kind {
            TypeKind::List(inner) => inner.relocate(from, to),
            TypeKind::Record(fields) => fields.relocate(from, to),
            TypeKind::String
            | TypeKind::Int
            | TypeKind::Float
            | TypeKind::Bool
            | TypeKind::Any
            | TypeKind::Enum(_) => {}
        }
    }
}

impl Relocate for TestBlock {
    fn relocate(&mut self, from: u32, to: u32) {
        self.name_span.relocate(from, to);
        self.statements.relocate(from, to);
        self.span.relocate(from, to);
    }
}

impl Relocate for TestStmt {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
        match &mut self.kind {
            TestStmtKind::Agent(literal)
            | TestStmtKind::Context(literal)
            | TestStmtKind::Session(literal) => {
                literal.relocate(from, to);
            }
            TestStmtKind::Call { tool, args } => {
                tool.relocate(from, to);
                args.relocate(from, to);
            }
            TestStmtKind::Result { status, fields } => {
                status.relocate(from, to);
                fields.relocate(from, to);
            }
            TestStmtKind::Expect(expectation) => match expectation {
                Expectation::Verdict(name) | Expectation::Gate(name) | Expectation::Rule(name) => {
                    name.relocate(from, to);
                }
                Expectation::Value(literal) => literal.relocate(from, to),
                Expectation::NoGate
                | Expectation::Reason(_)
                | Expectation::Content(_)
                | Expectation::Error(_)
                | Expectation::Fail(_)
                | Expectation::Attached(_) => {}
                Expectation::Part(_, verdict) | Expectation::Label(verdict) => {
                    verdict.relocate(from, to);
                }
            },
        }
    }
}

impl Relocate for Selector {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
    }
}

impl Relocate for Rule {
    fn relocate(&mut self, from: u32, to: u32) {
        self.name.relocate(from, to);
        self.selectors.relocate(from, to);
        if let Some(part) = &mut self.per_part {
            part.var.relocate(from, to);
            part.list.relocate(from, to);
            part.span.relocate(from, to);
        }
        self.condition.relocate(from, to);
        self.effects.relocate(from, to);
        self.examples.relocate(from, to);
        self.span.relocate(from, to);
    }
}

impl Relocate for Effect {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
        match &mut self.kind {
            EffectKind::Allow | EffectKind::Accept | EffectKind::Safe => {}
            EffectKind::Deny(e)
            | EffectKind::Ask(e)
            | EffectKind::ReplaceContent(e)
            | EffectKind::ReplaceValue(e)
            | EffectKind::Attach(e)
            | EffectKind::Veto(e) => e.relocate(from, to),
            EffectKind::Fail { message, context } => {
                message.relocate(from, to);
                context.relocate(from, to);
            }
            EffectKind::Redact {
                pattern,
                family,
                filter,
            } => {
                pattern.relocate(from, to);
                family.relocate(from, to);
                filter.relocate(from, to);
            }
            EffectKind::Label { name_span, .. } => name_span.relocate(from, to),
        }
    }
}

impl Relocate for Expr {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
        match &mut self.kind {
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Name(_) => {}
            ExprKind::Str(parts) => {
                for part in parts {
                    if let StrPart::Expr(e) = part {
                        e.relocate(from, to);
                    }
                }
            }
            ExprKind::List(items) => items.relocate(from, to),
            ExprKind::Field(base, field) => {
                base.relocate(from, to);
                field.relocate(from, to);
            }
            ExprKind::Index(base, index) => {
                base.relocate(from, to);
                index.relocate(from, to);
            }
            ExprKind::Method {
                receiver,
                method,
                args,
            } => {
                receiver.relocate(from, to);
                method.relocate(from, to);
                args.relocate(from, to);
            }
            ExprKind::Call { function, args } => {
                function.relocate(from, to);
                args.relocate(from, to);
            }
            ExprKind::Not(inner) => inner.relocate(from, to),
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.relocate(from, to);
                rhs.relocate(from, to);
            }
            ExprKind::Quantified {
                var, list, body, ..
            } => {
                var.relocate(from, to);
                list.relocate(from, to);
                body.relocate(from, to);
            }
            ExprKind::ArgvMatch { subject, .. } => subject.relocate(from, to),
        }
    }
}

impl Relocate for Literal {
    fn relocate(&mut self, from: u32, to: u32) {
        self.span.relocate(from, to);
        match &mut self.kind {
            LiteralKind::List(items) => items.relocate(from, to),
            LiteralKind::Object(entries) => {
                for (key, value) in entries {
                    key.relocate(from, to);
                    value.relocate(from, to);
                }
            }
            LiteralKind::Null
            | LiteralKind::Bool(_)
            | LiteralKind::Int(_)
            | LiteralKind::Float(_)
            | LiteralKind::Str(_) => {}
        }
    }
}
