//! Constant folding of conditions, for the lints that need to know a condition's value.

use crate::ast::BinOp;
use crate::check::{Const, TExpr, TExprKind};

/// The condition's value when it does not depend on the call.
pub fn constant_truth(expr: &TExpr) -> Option<bool> {
    match &expr.kind {
        TExprKind::Const(Const::Bool(b)) => Some(*b),
        TExprKind::Not(inner) => constant_truth(inner).map(|b| !b),
        TExprKind::Binary {
            op: BinOp::And,
            lhs,
            rhs,
        } => match (constant_truth(lhs), constant_truth(rhs)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        TExprKind::Binary {
            op: BinOp::Or,
            lhs,
            rhs,
        } => match (constant_truth(lhs), constant_truth(rhs)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        TExprKind::Binary {
            op: op @ (BinOp::Eq | BinOp::Ne),
            lhs,
            rhs,
        } => {
            let (TExprKind::Const(a), TExprKind::Const(b)) = (&lhs.kind, &rhs.kind) else {
                return None;
            };
            if std::mem::discriminant(a) != std::mem::discriminant(b) {
                return None;
            }
            let equal = a == b;
            Some(if *op == BinOp::Eq { equal } else { !equal })
        }
        TExprKind::Binary {
            op: BinOp::In, rhs, ..
        } => match &rhs.kind {
            TExprKind::List(items) if items.is_empty() => Some(false),
            _ => None,
        },
        TExprKind::Quantified {
            quantifier, list, ..
        } => match &list.kind {
            TExprKind::List(items) if items.is_empty() => {
                Some(*quantifier == crate::ast::Quantifier::All)
            }
            _ => None,
        },
        _ => None,
    }
}
