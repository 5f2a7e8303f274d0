//! Lowering (typed tree → IR): flattens each rule into a node arena with its own fact slots,
//! regexes, globs and literal sets compiled once; linking joins lowered rules into a program.

use std::collections::HashMap;

use regex_syntax::hir::Hir;
use rustc_hash::FxHashSet;
use std::sync::Arc;

use crate::ast::{ArgvPattern, BinOp, Relocate, Span};
use crate::check::{Builtin, CheckedEffect, CheckedRule, Const, Root, TExpr, TExprKind, Ty};
use crate::diagnostics::{Code, Diagnostic, SourceMap};
use crate::ir::{
    EffectIr, GlobId, Node, NodeId, Op, PatternId, PolicyGlob, PolicyRegex, Program, RedactIr,
    RegexId, RuleIr, RuleMeta, SetId, Slot, SlotId, ToolGlobs, check_size, check_size_of,
};

/// One rule lowered on its own: its IR with ids into its own tables and spans relative to
/// wherever its checked rule's were; [`link`] joins lowered rules into a program.
#[derive(Clone, Debug)]
pub struct LoweredRule {
    rule: RuleIr,
    slots: Vec<Slot>,
    regexes: Vec<PolicyRegex>,
    globs: Vec<PolicyGlob>,
    sets: Vec<FxHashSet<Arc<str>>>,
    patterns: Vec<Arc<ArgvPattern>>,
    /// Where the rule's name starts, for its line number once placed.
    name_start: u32,
}

/// Lowers one rule that passed checking.
pub fn lower_rule(rule: &CheckedRule) -> Result<LoweredRule, Vec<Diagnostic>> {
    let mut lowerer = Lowerer {
        file: rule.file.clone(),
        ..Lowerer::default()
    };
    let lowered = lowerer.rule(rule);
    if !lowerer.diagnostics.is_empty() {
        return Err(lowerer.diagnostics);
    }
    Ok(LoweredRule {
        rule: lowered,
        slots: lowerer.slots,
        regexes: lowerer.regexes,
        globs: lowerer.globs,
        sets: lowerer.sets,
        patterns: lowerer.patterns,
        name_start: rule.name_span.start,
    })
}

/// Joins lowered rules, each placed at its offset in its file, into one program: fact slots,
/// regexes and globs shared by several rules are shared in the program too.
pub fn link<'a>(
    rules: impl IntoIterator<Item = (&'a LoweredRule, u32)>,
    sources: &SourceMap,
    effects: Arc<crate::shell::EffectTable>,
) -> Program {
    let mut tables = Lowerer::default();
    let mut program_rules = Vec::new();
    for (index, (lowered, offset)) in rules.into_iter().enumerate() {
        let slots: Vec<SlotId> = lowered
            .slots
            .iter()
            .map(|s| tables.intern_slot(s))
            .collect();
        let regexes: Vec<RegexId> = lowered
            .regexes
            .iter()
            .map(|r| tables.intern_regex(r))
            .collect();
        let globs: Vec<GlobId> = lowered
            .globs
            .iter()
            .map(|g| tables.intern_glob(g.clone()))
            .collect();
        let sets = appended(&mut tables.sets, &lowered.sets, SetId);
        let patterns = appended(&mut tables.patterns, &lowered.patterns, PatternId);
        let ids = Renumbering {
            slots: &slots,
            regexes: &regexes,
            globs: &globs,
            sets: &sets,
            patterns: &patterns,
        };
        let mut rule = lowered.rule.clone();
        let mut nodes = std::mem::take(&mut rule.nodes).into_vec();
        for node in &mut nodes {
            ids.apply(&mut node.op);
            node.span.relocate(0, offset);
        }
        rule.nodes = nodes.into();
        for effect in &mut rule.effects {
            if let EffectIr::Redact(redact) = effect {
                redact.regex = ids.regex(redact.regex);
            }
        }
        rule.meta.span.relocate(0, offset);
        let name_start = lowered.name_start.saturating_add(offset) as usize;
        let (line, _) = sources.line_col(&rule.meta.file, name_start);
        rule.meta.line = index_u32(line);
        rule.index = index_u32(index);
        program_rules.push(rule);
    }
    let dispatch = crate::ir::Dispatch::build(&program_rules);
    Program {
        slots: tables.slots,
        regexes: tables.regexes,
        globs: tables.globs,
        sets: tables.sets,
        patterns: tables.patterns,
        rules: program_rules,
        dispatch,
        effects,
        lists: std::sync::OnceLock::new(),
    }
}

/// Appends a rule's own table to the program's (these are not shared between rules), giving the
/// program's id of each entry.
fn appended<T: Clone, Id>(table: &mut Vec<T>, entries: &[T], id: fn(u32) -> Id) -> Vec<Id> {
    entries
        .iter()
        .map(|entry| {
            table.push(entry.clone());
            id(index_u32(table.len() - 1))
        })
        .collect()
}

fn index_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A rule's ids into its own tables, mapped to the program's.
struct Renumbering<'a> {
    slots: &'a [SlotId],
    regexes: &'a [RegexId],
    globs: &'a [GlobId],
    sets: &'a [SetId],
    patterns: &'a [PatternId],
}

impl Renumbering<'_> {
    fn regex(&self, local: RegexId) -> RegexId {
        self.regexes.get(local.0 as usize).copied().unwrap_or(local)
    }

    fn apply(&self, op: &mut Op) {
        fn map<T: Copy>(table: &[T], local: u32, fallback: T) -> T {
            table.get(local as usize).copied().unwrap_or(fallback)
        }
        match op {
            Op::Fact(slot) => *slot = map(self.slots, slot.0, *slot),
            Op::Matches(_, regex) | Op::Redact(_, regex, _) => {
                *regex = map(self.regexes, regex.0, *regex);
            }
            Op::Glob(_, glob) => *glob = map(self.globs, glob.0, *glob),
            Op::InSet(_, set) => *set = map(self.sets, set.0, *set),
            Op::ArgvMatch(_, pattern) => *pattern = map(self.patterns, pattern.0, *pattern),
            // Listed so that a new operation naming a table cannot be forgotten here.
            Op::Const(_)
            | Op::Var(_)
            | Op::Member(..)
            | Op::Index(..)
            | Op::List(_)
            | Op::Concat(_)
            | Op::Not(_)
            | Op::And(..)
            | Op::Or(..)
            | Op::Eq(..)
            | Op::Ne(..)
            | Op::Lt(..)
            | Op::Le(..)
            | Op::Gt(..)
            | Op::Ge(..)
            | Op::In(..)
            | Op::Coalesce(..)
            | Op::Add(..)
            | Op::Builtin(..)
            | Op::Quantified { .. } => {}
        }
    }
}

#[derive(Default)]
struct Lowerer {
    slots: Vec<Slot>,
    slot_ids: HashMap<Slot, SlotId>,
    regexes: Vec<PolicyRegex>,
    regex_ids: HashMap<Arc<str>, RegexId>,
    globs: Vec<PolicyGlob>,
    glob_ids: HashMap<Arc<str>, GlobId>,
    sets: Vec<FxHashSet<Arc<str>>>,
    patterns: Vec<Arc<ArgvPattern>>,
    diagnostics: Vec<Diagnostic>,
    /// The file of the rule being lowered, for diagnostics.
    file: String,
    /// The arena of the rule being lowered.
    nodes: Vec<Node>,
}

impl Lowerer {
    fn rule(&mut self, rule: &CheckedRule) -> RuleIr {
        let per_part = rule
            .per_part
            .as_ref()
            .map(|(var, list)| (*var, self.expr(list)));
        let condition = rule.condition.as_ref().map(|c| self.expr(c));
        let effects = rule.effects.iter().map(|e| self.effect(e)).collect();
        let tool_globs =
            (!rule.tools.globs.is_empty()).then(|| ToolGlobs::new(rule.tools.globs.clone()));
        RuleIr {
            index: 0,
            meta: RuleMeta {
                name: rule.name.as_str().into(),
                kind: rule.kind,
                file: rule.file.as_str().into(),
                // Set by `link`, which knows where the rule sits in its file.
                line: 0,
                span: rule.span,
            },
            tools: rule.tools.clone(),
            tool_globs,
            nodes: std::mem::take(&mut self.nodes).into(),
            per_part,
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
            CheckedEffect::Label(grant) => EffectIr::Label(grant.clone()),
            CheckedEffect::Fail { message, context } => EffectIr::Fail {
                message: self.expr(message),
                context: context.as_ref().map(|c| self.expr(c)),
            },
            CheckedEffect::Redact(redaction) => EffectIr::Redact(Box::new(RedactIr {
                regex: self.regex(&redaction.pattern, None, redaction.pattern_span),
                family: redaction.family.clone(),
                filter: redaction.filter.as_ref().map(|f| self.expr(f)),
                secret: redaction.secret,
                around: redaction.around,
            })),
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
                        TExprKind::Const(Const::Str(p)) => self.regex(p, None, pattern.span),
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
            TExprKind::Matches {
                subject,
                pattern,
                hir,
            } => {
                let subject = self.expr(subject);
                Op::Matches(subject, self.regex(pattern, Some(hir), expr.span))
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
            TExprKind::ArgvMatch { subject, pattern } => {
                let subject = self.expr(subject);
                let id = PatternId(index_u32(self.patterns.len()));
                self.patterns.push(pattern.clone());
                Op::ArgvMatch(subject, id)
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
        self.intern_slot(&Slot {
            root,
            path: path.to_vec(),
            ty: ty.clone(),
        })
    }

    fn intern_slot(&mut self, slot: &Slot) -> SlotId {
        if let Some(id) = self.slot_ids.get(slot) {
            return *id;
        }
        let id = SlotId(index_u32(self.slots.len()));
        self.slots.push(slot.clone());
        self.slot_ids.insert(slot.clone(), id);
        id
    }

    /// The regex of `pattern`, with its syntax tree when the checker kept it.
    fn regex(&mut self, pattern: &Arc<str>, parsed: Option<&Arc<Hir>>, span: Span) -> RegexId {
        if let Some(id) = self.regex_ids.get(pattern) {
            return *id;
        }
        let checked = match parsed {
            Some(hir) => check_size_of(hir).map(|()| hir.clone()),
            None => check_size(pattern).map(Arc::new),
        };
        match checked {
            Ok(hir) => self.intern_regex(&PolicyRegex::new(pattern.clone(), hir)),
            Err(error) => {
                self.diagnostics.push(
                    Diagnostic::new(Code::InvalidRegex, &self.file, span, format!("regex cannot be compiled: {error}"))
                        .label("too large or invalid")
                        .help("simplify the regex: large counted repetitions such as `{1000}` multiply its size"),
                );
                RegexId(0)
            }
        }
    }

    fn intern_regex(&mut self, regex: &PolicyRegex) -> RegexId {
        if let Some(id) = self.regex_ids.get(regex.as_str()) {
            return *id;
        }
        let id = RegexId(index_u32(self.regexes.len()));
        self.regexes.push(regex.clone());
        self.regex_ids.insert(regex.as_str().into(), id);
        id
    }

    fn glob(&mut self, pattern: &Arc<str>, span: Span) -> GlobId {
        if let Some(id) = self.glob_ids.get(pattern) {
            return *id;
        }
        match PolicyGlob::new(pattern) {
            Ok(glob) => self.intern_glob(glob),
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
                GlobId(0)
            }
        }
    }

    fn intern_glob(&mut self, glob: PolicyGlob) -> GlobId {
        if let Some(id) = self.glob_ids.get(glob.as_str()) {
            return *id;
        }
        let id = GlobId(index_u32(self.globs.len()));
        self.glob_ids.insert(glob.as_str().into(), id);
        self.globs.push(glob);
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
