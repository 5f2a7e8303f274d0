//! Lowering (typed tree → IR): flattens each rule into a node arena, assigns fact slots, and
//! compiles regexes, globs and literal sets once.

use std::collections::HashMap;

use rustc_hash::FxHashSet;
use std::sync::Arc;

use crate::ast::{BinOp, Span};
use crate::check::{
    Builtin, CheckedEffect, CheckedRule, CheckedSet, Const, Root, TExpr, TExprKind, Ty,
};
use crate::diagnostics::{Code, Diagnostic, SourceMap};
use crate::ir::{
    EffectIr, GlobId, Node, NodeId, Op, Program, RegexId, RuleIr, RuleMeta, SetId, Slot, SlotId,
};

/// Regexes are compiled with this size limit, so that a hostile pattern cannot exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// Lowers a checked set that has no errors.
pub fn lower_set(checked: &CheckedSet, sources: &SourceMap) -> Result<Program, Vec<Diagnostic>> {
    let mut lowerer = Lowerer::default();
    let mut rules = Vec::with_capacity(checked.rules.len());
    for (index, rule) in checked.rules.iter().enumerate() {
        let mut lowered = lowerer.rule(rule, sources);
        lowered.index = u32::try_from(index).unwrap_or(u32::MAX);
        rules.push(lowered);
    }
    if !lowerer.diagnostics.is_empty() {
        return Err(lowerer.diagnostics);
    }
    let dispatch = crate::ir::Dispatch::build(&rules);
    Ok(Program {
        slots: lowerer.slots,
        regexes: lowerer.regexes,
        globs: lowerer.globs,
        sets: lowerer.sets,
        rules,
        dispatch,
    })
}

#[derive(Default)]
struct Lowerer {
    slots: Vec<Slot>,
    slot_ids: HashMap<Slot, SlotId>,
    regexes: Vec<regex::Regex>,
    regex_ids: HashMap<Arc<str>, RegexId>,
    globs: Vec<globset::GlobMatcher>,
    glob_ids: HashMap<Arc<str>, GlobId>,
    sets: Vec<FxHashSet<Arc<str>>>,
    diagnostics: Vec<Diagnostic>,
    /// The rule being lowered: its file and its arena.
    file: String,
    nodes: Vec<Node>,
}

impl Lowerer {
    fn rule(&mut self, rule: &CheckedRule, sources: &SourceMap) -> RuleIr {
        self.file = rule.file.clone();
        self.nodes = Vec::new();
        let condition = rule.condition.as_ref().map(|c| self.expr(c));
        let effects = rule.effects.iter().map(|e| self.effect(e)).collect();
        let tool_globs = if rule.tools.globs.is_empty() {
            None
        } else {
            let mut builder = globset::GlobSetBuilder::new();
            for glob in &rule.tools.globs {
                if let Ok(glob) = globset::Glob::new(glob) {
                    builder.add(glob);
                }
            }
            builder.build().ok()
        };
        let (line, _) = sources.line_col(&rule.file, rule.name_span.start as usize);
        RuleIr {
            index: 0,
            meta: RuleMeta {
                name: rule.name.as_str().into(),
                kind: rule.kind,
                file: rule.file.as_str().into(),
                line: u32::try_from(line).unwrap_or(u32::MAX),
                span: rule.span,
            },
            tools: rule.tools.clone(),
            tool_globs,
            nodes: std::mem::take(&mut self.nodes),
            condition,
            effects,
            vars: rule.vars,
        }
    }

    fn effect(&mut self, effect: &CheckedEffect) -> EffectIr {
        match effect {
            CheckedEffect::Allow => EffectIr::Allow,
            CheckedEffect::Accept => EffectIr::Accept,
            CheckedEffect::Safe => EffectIr::Safe,
            CheckedEffect::Deny(e) => EffectIr::Deny(self.expr(e)),
            CheckedEffect::Ask(e) => EffectIr::Ask(self.expr(e)),
            CheckedEffect::Veto(e) => EffectIr::Veto(self.expr(e)),
            CheckedEffect::ReplaceContent(e) => EffectIr::ReplaceContent(self.expr(e)),
            CheckedEffect::ReplaceValue(e) => EffectIr::ReplaceValue(self.expr(e)),
            CheckedEffect::Attach(e) => EffectIr::Attach(self.expr(e)),
            CheckedEffect::Fail { message, context } => EffectIr::Fail {
                message: self.expr(message),
                context: context.as_ref().map(|c| self.expr(c)),
            },
        }
    }

    fn push(&mut self, op: Op, ty: &Ty, span: Span) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(Node {
            op,
            ty: ty.clone(),
            span,
        });
        id
    }

    fn expr(&mut self, expr: &TExpr) -> NodeId {
        let op = match &expr.kind {
            TExprKind::Const(c) => Op::Const(c.clone()),
            TExprKind::Concat(parts) => Op::Concat(parts.iter().map(|p| self.expr(p)).collect()),
            TExprKind::List(items) => Op::List(items.iter().map(|i| self.expr(i)).collect()),
            TExprKind::Fact { root, path } => Op::Fact(self.slot(*root, path, &expr.ty)),
            TExprKind::Var(v) => Op::Var(*v),
            TExprKind::Member(base, field) => Op::Member(self.expr(base), field.clone()),
            TExprKind::Index(base, index) => Op::Index(self.expr(base), self.expr(index)),
            TExprKind::Not(inner) => Op::Not(self.expr(inner)),
            TExprKind::Binary { op, lhs, rhs } => return self.binary(*op, lhs, rhs, expr),
            TExprKind::Builtin {
                builtin: Builtin::Redact,
                args,
            } => match args.as_slice() {
                [text, pattern, replacement] => {
                    let text = self.expr(text);
                    let regex = match &pattern.kind {
                        TExprKind::Const(Const::Str(p)) => self.regex(p, pattern.span),
                        _ => RegexId(0),
                    };
                    let replacement = self.expr(replacement);
                    Op::Redact(text, regex, replacement)
                }
                _ => Op::Const(Const::Null),
            },
            TExprKind::Builtin {
                builtin: Builtin::Path,
                args,
            } if args
                .iter()
                .all(|a| matches!(a.kind, TExprKind::Const(Const::Str(_)))) =>
            {
                // A literal path is normalized once, here, not on every call.
                let text = |i: usize| match args.get(i).map(|a| &a.kind) {
                    Some(TExprKind::Const(Const::Str(s))) => Some(s.to_string()),
                    _ => None,
                };
                let base = text(1);
                Op::Const(Const::Str(
                    crate::interp::path::normalize(&text(0).unwrap_or_default(), base.as_deref())
                        .into(),
                ))
            }
            TExprKind::Builtin { builtin, args } => {
                Op::Builtin(*builtin, args.iter().map(|a| self.expr(a)).collect())
            }
            TExprKind::Matches { subject, pattern } => {
                let subject = self.expr(subject);
                Op::Matches(subject, self.regex(pattern, expr.span))
            }
            TExprKind::Glob { subject, pattern } => {
                let subject = self.expr(subject);
                Op::Glob(subject, self.glob(pattern, expr.span))
            }
            TExprKind::Quantified {
                quantifier,
                var,
                list,
                body,
            } => {
                let list = self.expr(list);
                let body = self.expr(body);
                Op::Quantified {
                    quantifier: *quantifier,
                    var: *var,
                    list,
                    body,
                }
            }
        };
        self.push(op, &expr.ty, expr.span)
    }

    fn binary(&mut self, op: BinOp, lhs: &TExpr, rhs: &TExpr, whole: &TExpr) -> NodeId {
        if op == BinOp::In
            && let Some(set) = literal_strings(rhs)
        {
            let elem = self.expr(lhs);
            let id = SetId(u32::try_from(self.sets.len()).unwrap_or(u32::MAX));
            self.sets.push(set);
            return self.push(Op::InSet(elem, id), &whole.ty, whole.span);
        }
        let l = self.expr(lhs);
        let r = self.expr(rhs);
        let op = match op {
            BinOp::Or => Op::Or(l, r),
            BinOp::And => Op::And(l, r),
            BinOp::Eq => Op::Eq(l, r),
            BinOp::Ne => Op::Ne(l, r),
            BinOp::Lt => Op::Lt(l, r),
            BinOp::Le => Op::Le(l, r),
            BinOp::Gt => Op::Gt(l, r),
            BinOp::Ge => Op::Ge(l, r),
            BinOp::In | BinOp::NotIn => Op::In(l, r),
            BinOp::Coalesce => Op::Coalesce(l, r),
            BinOp::Add => Op::Add(l, r),
            // The checker turns these into their own typed nodes.
            BinOp::Matches | BinOp::Glob => Op::Const(Const::Bool(false)),
        };
        self.push(op, &whole.ty, whole.span)
    }

    fn slot(&mut self, root: Root, path: &[Arc<str>], ty: &Ty) -> SlotId {
        let slot = Slot {
            root,
            path: path.to_vec(),
            ty: ty.clone(),
        };
        if let Some(id) = self.slot_ids.get(&slot) {
            return *id;
        }
        let id = SlotId(u32::try_from(self.slots.len()).unwrap_or(u32::MAX));
        self.slots.push(slot.clone());
        self.slot_ids.insert(slot, id);
        id
    }

    fn regex(&mut self, pattern: &Arc<str>, span: Span) -> RegexId {
        if let Some(id) = self.regex_ids.get(pattern) {
            return *id;
        }
        let compiled = regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .build();
        let regex = match compiled {
            Ok(regex) => regex,
            Err(error) => {
                self.diagnostics.push(
                    Diagnostic::new(Code::InvalidRegex, &self.file, span, format!("regex cannot be compiled: {error}"))
                        .label("too large or invalid")
                        .help("simplify the regex: large counted repetitions such as `{1000}` multiply its size"),
                );
                return RegexId(0);
            }
        };
        let id = RegexId(u32::try_from(self.regexes.len()).unwrap_or(u32::MAX));
        self.regexes.push(regex);
        self.regex_ids.insert(pattern.clone(), id);
        id
    }

    fn glob(&mut self, pattern: &Arc<str>, span: Span) -> GlobId {
        if let Some(id) = self.glob_ids.get(pattern) {
            return *id;
        }
        let matcher = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher());
        let matcher = match matcher {
            Ok(m) => m,
            Err(error) => {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidGlob,
                        &self.file,
                        span,
                        format!("glob cannot be compiled: {}", error.kind()),
                    )
                    .label("invalid glob")
                    .help("globs use `*`, `?`, `**`, `[abc]` and `{a,b}`"),
                );
                return GlobId(0);
            }
        };
        let id = GlobId(u32::try_from(self.globs.len()).unwrap_or(u32::MAX));
        self.globs.push(matcher);
        self.glob_ids.insert(pattern.clone(), id);
        id
    }
}

/// The strings of a list literal made only of string constants.
fn literal_strings(expr: &TExpr) -> Option<FxHashSet<Arc<str>>> {
    let TExprKind::List(items) = &expr.kind else {
        return None;
    };
    items
        .iter()
        .map(|item| match &item.kind {
            TExprKind::Const(Const::Str(s)) => Some(s.clone()),
            _ => None,
        })
        .collect()
}
