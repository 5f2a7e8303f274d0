//! A readable listing of the IR, for `sluice compile --emit ir` and for people who debug lowering.

use std::fmt::Write;

use super::{EffectIr, Op, Program};

pub fn render_program(program: &Program) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "slots:");
    for (i, slot) in program.slots.iter().enumerate() {
        let _ = writeln!(out, "  s{i} = {} : {}", slot.describe(), slot.ty);
    }
    for (i, re) in program.regexes.iter().enumerate() {
        let _ = writeln!(out, "  re{i} = r\"{}\"", re.as_str());
    }
    for (i, glob) in program.globs.iter().enumerate() {
        let _ = writeln!(out, "  glob{i} = \"{}\"", glob.as_str());
    }
    for rule in &program.rules {
        let _ = writeln!(
            out,
            "\n{} {} ({}:{})",
            rule.meta.kind.keyword(),
            rule.meta.name,
            rule.meta.file,
            rule.meta.line
        );
        for (i, node) in rule.nodes.iter().enumerate() {
            let _ = writeln!(out, "  n{i}: {} = {}", node.ty, op_text(&node.op));
        }
        if let Some(c) = rule.condition {
            let _ = writeln!(out, "  when n{}", c.0);
        }
        for effect in &rule.effects {
            let _ = writeln!(out, "  => {}", effect_text(effect));
        }
    }
    out
}

fn op_text(op: &Op) -> String {
    let list = |ids: &[super::NodeId]| {
        ids.iter()
            .map(|n| format!("n{}", n.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match op {
        Op::Const(c) => format!("const {c:?}"),
        Op::Fact(s) => format!("fact s{}", s.0),
        Op::Var(v) => format!("var v{}", v.0),
        Op::Member(n, f) => format!("n{}.{f}", n.0),
        Op::Index(a, b) => format!("n{}[n{}]", a.0, b.0),
        Op::List(ids) => format!("list [{}]", list(ids)),
        Op::Concat(ids) => format!("concat [{}]", list(ids)),
        Op::Not(a) => format!("not n{}", a.0),
        Op::And(a, b) => format!("n{} and n{}", a.0, b.0),
        Op::Or(a, b) => format!("n{} or n{}", a.0, b.0),
        Op::Eq(a, b) => format!("n{} == n{}", a.0, b.0),
        Op::Ne(a, b) => format!("n{} != n{}", a.0, b.0),
        Op::Lt(a, b) => format!("n{} < n{}", a.0, b.0),
        Op::Le(a, b) => format!("n{} <= n{}", a.0, b.0),
        Op::Gt(a, b) => format!("n{} > n{}", a.0, b.0),
        Op::Ge(a, b) => format!("n{} >= n{}", a.0, b.0),
        Op::In(a, b) => format!("n{} in n{}", a.0, b.0),
        Op::InSet(a, s) => format!("n{} in set{}", a.0, s.0),
        Op::Coalesce(a, b) => format!("n{} ?? n{}", a.0, b.0),
        Op::Add(a, b) => format!("n{} + n{}", a.0, b.0),
        Op::Matches(a, r) => format!("n{} matches re{}", a.0, r.0),
        Op::Glob(a, g) => format!("n{} glob glob{}", a.0, g.0),
        Op::ArgvMatch(a, p) => format!("n{} ~ pattern{}", a.0, p.0),
        Op::Builtin(b, args) => format!("{}({})", b.name(), list(args)),
        Op::Redact(a, r, b) => format!("redact(n{}, re{}, n{})", a.0, r.0, b.0),
        Op::Quantified {
            quantifier,
            var,
            list,
            body,
        } => format!("{quantifier:?}(v{} in n{}, n{})", var.0, list.0, body.0).to_lowercase(),
    }
}

fn effect_text(effect: &EffectIr) -> String {
    match effect {
        EffectIr::Allow => "allow".into(),
        EffectIr::Accept => "accept".into(),
        EffectIr::Safe => "safe".into(),
        EffectIr::Deny(n) => format!("deny n{}", n.0),
        EffectIr::Ask(n) => format!("ask n{}", n.0),
        EffectIr::Veto(n) => format!("veto n{}", n.0),
        EffectIr::ReplaceContent(n) => format!("replace content n{}", n.0),
        EffectIr::ReplaceValue(n) => format!("replace value n{}", n.0),
        EffectIr::Fail { message, context } => match context {
            Some(c) => format!("fail n{} with context n{}", message.0, c.0),
            None => format!("fail n{}", message.0),
        },
        EffectIr::Attach(n) => format!("attach context n{}", n.0),
        EffectIr::Redact(r) => match r.filter {
            Some(f) => format!("redact re{} as {:?} where n{}", r.regex.0, r.family, f.0),
            None => format!("redact re{} as {:?}", r.regex.0, r.family),
        },
        EffectIr::Label(grant) => match grant.expiry {
            Some(expiry) => format!(
                "label session {:?} for {}",
                grant.label,
                crate::format::expiry_text(expiry)
            ),
            None => format!("label session {:?}", grant.label),
        },
    }
}
