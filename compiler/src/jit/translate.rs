//! Code generation (IR → Cranelift IR): one function per rule condition.
//!
//! Every IR node becomes a pair of SSA values, a cell's tag and bits. Boolean structure,
//! short-circuiting, truth tests, fact reads and integer comparisons are native; value-level
//! operations call the helpers in [`super::helpers`]. Any fault jumps to one block that returns
//! [`FAULT`], and the caller re-runs the rule in the interpreter for the exact error.

use std::sync::Arc;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, BlockArg, FuncRef, InstBuilder, MemFlagsData, StackSlot, StackSlotData, StackSlotKind,
    types,
};
use cranelift_frontend::{FunctionBuilder, Variable};

use super::cell::{BOOL, CELL_SIZE, CONST, FAULT as FAULT_TAG, FLOAT, INT, MISSING, NULL};
use super::helpers::{Apply, FAULT, POSITION_SHIFT, id};
use crate::ast::Quantifier;
use crate::check::{Builtin, Const};
use crate::ir::{NodeId, Op, RuleIr};

const I64: ir::Type = types::I64;

/// A node's value in native code: a cell's tag and bits.
#[derive(Clone, Copy)]
struct Cell {
    tag: ir::Value,
    bits: ir::Value,
}

/// Why a rule could not be translated; the rule then runs in the interpreter.
#[derive(Debug)]
pub struct Untranslatable(pub String);

/// String constants and field names, shared by every function of one program.
#[derive(Default)]
pub struct Constants {
    pub strings: Vec<Arc<str>>,
    index: rustc_hash::FxHashMap<Arc<str>, i64>,
}

impl Constants {
    fn intern(&mut self, text: &Arc<str>) -> i64 {
        if let Some(&index) = self.index.get(text) {
            return index;
        }
        let index = self.strings.len() as i64;
        self.strings.push(text.clone());
        self.index.insert(text.clone(), index);
        index
    }
}

pub struct FunctionTranslator<'b, 'r> {
    pub builder: FunctionBuilder<'b>,
    pub rule: &'r RuleIr,
    pub helpers: &'r [FuncRef],
    pub constants: &'r mut Constants,
    pub frame: ir::Value,
    pub facts: ir::Value,
    pub fault_block: ir::Block,
    /// Arguments for `sluice_apply`, written just before each call.
    pub scratch: StackSlot,
    /// The one cell a helper writes its answer to.
    pub answer: StackSlot,
    /// A tag and a bits variable per quantifier variable.
    pub vars: Vec<(Variable, Variable)>,
}

/// The number of argument cells the largest `sluice_apply` call of a rule needs.
pub fn scratch_cells(rule: &RuleIr) -> u32 {
    rule.nodes
        .iter()
        .map(|node| match &node.op {
            Op::List(items) | Op::Concat(items) | Op::Builtin(_, items) => items.len(),
            _ => 2,
        })
        .max()
        .unwrap_or(2)
        .max(2) as u32
}

pub fn stack_slot(builder: &mut FunctionBuilder<'_>, cells: u32) -> StackSlot {
    builder.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        cells * CELL_SIZE as u32,
        3,
    ))
}

impl FunctionTranslator<'_, '_> {
    /// The rule's condition: returns 1 when it holds, 0 when not, [`FAULT`] when it faults.
    pub fn translate_condition(&mut self, condition: NodeId) -> Result<(), Untranslatable> {
        let holds = self.translate_truth(condition)?;
        self.builder.ins().return_(&[holds]);
        self.builder.switch_to_block(self.fault_block);
        let fault = self.builder.ins().iconst(I64, FAULT);
        self.builder.ins().return_(&[fault]);
        Ok(())
    }

    fn translate(&mut self, id: NodeId) -> Result<Cell, Untranslatable> {
        let Some(node) = self.rule.node(id) else {
            return Err(Untranslatable(format!("no node n{}", id.0)));
        };
        match &node.op {
            Op::Const(c) => Ok(self.translate_const(c)),
            Op::Fact(slot) => Ok(self.translate_fact(i64::from(slot.0))),
            Op::Var(var) => {
                let &(tag, bits) = self
                    .vars
                    .get(var.0 as usize)
                    .ok_or_else(|| Untranslatable(format!("no variable v{}", var.0)))?;
                Ok(Cell {
                    tag: self.builder.use_var(tag),
                    bits: self.builder.use_var(bits),
                })
            }
            Op::Not(inner) => {
                let value = self.translate_truth(*inner)?;
                let flipped = self.builder.ins().bxor_imm_s(value, 1);
                Ok(self.boolean(flipped))
            }
            Op::And(a, b) => self.translate_short_circuit(*a, *b, false),
            Op::Or(a, b) => self.translate_short_circuit(*a, *b, true),
            Op::Eq(a, b) => self.translate_equality(*a, *b, false),
            Op::Ne(a, b) => self.translate_equality(*a, *b, true),
            Op::Lt(a, b) => self.translate_order(*a, *b, 0, IntCC::SignedLessThan),
            Op::Le(a, b) => self.translate_order(*a, *b, 1, IntCC::SignedLessThanOrEqual),
            Op::Gt(a, b) => self.translate_order(*a, *b, 2, IntCC::SignedGreaterThan),
            Op::Ge(a, b) => self.translate_order(*a, *b, 3, IntCC::SignedGreaterThanOrEqual),
            Op::InSet(elem, set) => self.translate_predicate(id::IN_SET, i64::from(set.0), *elem),
            Op::Matches(subject, regex) => {
                self.translate_predicate(id::MATCHES, i64::from(regex.0), *subject)
            }
            Op::Glob(subject, glob) => {
                self.translate_predicate(id::GLOB, i64::from(glob.0), *subject)
            }
            Op::ArgvMatch(subject, pattern) => {
                self.translate_apply(Apply::ArgvMatch, i64::from(pattern.0), &[*subject])
            }
            Op::Coalesce(a, b) => self.translate_coalesce(*a, *b),
            Op::Member(base, field) => {
                let position = crate::shell::FIELDS.iter().position(|f| *f == &**field);
                let extra = self.constants.intern(field)
                    | (position.map_or(0, |p| p as i64 + 1) << POSITION_SHIFT);
                self.translate_apply(Apply::Member, extra, &[*base])
            }
            Op::Index(base, index) => self.translate_apply(Apply::Index, 0, &[*base, *index]),
            Op::List(items) => self.translate_apply(Apply::List, 0, items),
            Op::Concat(parts) => self.translate_apply(Apply::Concat, 0, parts),
            Op::Add(a, b) => self.translate_apply(Apply::Add, 0, &[*a, *b]),
            Op::In(elem, list) => self.translate_apply(Apply::In, 0, &[*elem, *list]),
            Op::Builtin(builtin, args) => {
                if *builtin == Builtin::Under
                    && let Some((path, dir, suffix)) = self.normalized_dir(args)
                {
                    let extra = suffix.map_or(0, |suffix| self.constants.intern(&suffix) + 1);
                    return self.translate_apply(Apply::UnderNormal, extra, &[path, dir]);
                }
                let position = Builtin::ALL
                    .iter()
                    .position(|b| b == builtin)
                    .ok_or_else(|| Untranslatable(format!("unknown builtin {builtin:?}")))?;
                self.translate_apply(Apply::Builtin, position as i64, args)
            }
            Op::Redact(text, regex, replacement) => {
                self.translate_apply(Apply::Redact, i64::from(regex.0), &[*text, *replacement])
            }
            Op::Quantified {
                quantifier,
                var,
                list,
                body,
            } => self.translate_quantified(*quantifier, var.0 as usize, *list, *body),
        }
    }

    /// `under`'s arguments when its directory is normalized as it runs (`path(dir)`, which the
    /// checker wraps around a directory that is not a literal): the path, the directory and, for
    /// `path(dir + "suffix")`, the suffix.
    fn normalized_dir(&self, args: &[NodeId]) -> Option<(NodeId, NodeId, Option<Arc<str>>)> {
        let [path, dir] = args else {
            return None;
        };
        let Op::Builtin(Builtin::Path, normalized) = &self.rule.node(*dir)?.op else {
            return None;
        };
        let [dir] = normalized.as_slice() else {
            return None;
        };
        if let Op::Add(base, suffix) = &self.rule.node(*dir)?.op
            && let Op::Const(Const::Str(suffix)) = &self.rule.node(*suffix)?.op
        {
            return Some((*path, *base, Some(suffix.clone())));
        }
        Some((*path, *dir, None))
    }

    fn constant(&mut self, tag: i64, bits: i64) -> Cell {
        Cell {
            tag: self.builder.ins().iconst(I64, tag),
            bits: self.builder.ins().iconst(I64, bits),
        }
    }

    fn boolean(&mut self, bits: ir::Value) -> Cell {
        Cell {
            tag: self.builder.ins().iconst(I64, BOOL),
            bits,
        }
    }

    fn translate_const(&mut self, c: &Const) -> Cell {
        match c {
            Const::Null => self.constant(NULL, 0),
            Const::Bool(b) => self.constant(BOOL, i64::from(*b)),
            Const::Int(i) => self.constant(INT, *i),
            Const::Float(f) => self.constant(FLOAT, f.to_bits() as i64),
            Const::Str(s) => {
                let index = self.constants.intern(s);
                self.constant(CONST, index)
            }
        }
    }

    fn translate_fact(&mut self, slot: i64) -> Cell {
        let offset = i32::try_from(slot * CELL_SIZE).unwrap_or(i32::MAX);
        let flags = MemFlagsData::trusted();
        let tag = self.builder.ins().load(I64, flags, self.facts, offset);
        let bits = self.builder.ins().load(I64, flags, self.facts, offset + 8);
        let faulty = self.builder.ins().icmp_imm_s(IntCC::Equal, tag, FAULT_TAG);
        self.fault_if(faulty);
        Cell { tag, bits }
    }

    /// Continues in a fresh block when `condition` is false; faults when it is true.
    fn fault_if(&mut self, condition: ir::Value) {
        let next = self.builder.create_block();
        self.builder
            .ins()
            .brif(condition, self.fault_block, &[], next, &[]);
        self.builder.switch_to_block(next);
    }

    /// A helper's status, faulting on [`FAULT`].
    fn checked_status(&mut self, status: ir::Value) -> ir::Value {
        let faulty = self.builder.ins().icmp_imm_s(IntCC::Equal, status, FAULT);
        self.fault_if(faulty);
        status
    }

    /// A condition's truth as 0 or 1: anything but a bool faults.
    fn translate_truth(&mut self, id: NodeId) -> Result<ir::Value, Untranslatable> {
        let cell = self.translate(id)?;
        let not_bool = self
            .builder
            .ins()
            .icmp_imm_s(IntCC::NotEqual, cell.tag, BOOL);
        self.fault_if(not_bool);
        Ok(cell.bits)
    }

    /// `a and b` (`or` when `stop_on` is true): `b` runs only when `a` did not decide.
    fn translate_short_circuit(
        &mut self,
        a: NodeId,
        b: NodeId,
        stop_on: bool,
    ) -> Result<Cell, Untranslatable> {
        let first = self.translate_truth(a)?;
        let second_block = self.builder.create_block();
        let join = self.builder.create_block();
        let result = self.builder.append_block_param(join, I64);
        let decided = [BlockArg::Value(first)];
        if stop_on {
            self.builder
                .ins()
                .brif(first, join, &decided, second_block, &[]);
        } else {
            self.builder
                .ins()
                .brif(first, second_block, &[], join, &decided);
        }
        self.builder.switch_to_block(second_block);
        let second = self.translate_truth(b)?;
        self.builder.ins().jump(join, &[BlockArg::Value(second)]);
        self.builder.switch_to_block(join);
        Ok(self.boolean(result))
    }

    /// Whether both cells are ints, or both bools: then their bits compare directly.
    fn same_scalar(&mut self, l: Cell, r: Cell, tags: &[i64]) -> ir::Value {
        let same = self.builder.ins().icmp(IntCC::Equal, l.tag, r.tag);
        let mut any = self.builder.ins().iconst(I64, 0);
        for &tag in tags {
            let is = self.builder.ins().icmp_imm_s(IntCC::Equal, l.tag, tag);
            let is = self.builder.ins().uextend(I64, is);
            any = self.builder.ins().bor(any, is);
        }
        let same = self.builder.ins().uextend(I64, same);
        self.builder.ins().band(same, any)
    }

    /// Calls a helper and gives its single result.
    fn call(&mut self, helper: usize, args: &[ir::Value]) -> Result<ir::Value, Untranslatable> {
        let func = *self
            .helpers
            .get(helper)
            .ok_or_else(|| Untranslatable(format!("no helper {helper}")))?;
        let call = self.builder.ins().call(func, args);
        self.builder
            .inst_results(call)
            .first()
            .copied()
            .ok_or_else(|| Untranslatable("a helper returned nothing".into()))
    }

    fn translate_equality(
        &mut self,
        a: NodeId,
        b: NodeId,
        negate: bool,
    ) -> Result<Cell, Untranslatable> {
        let l = self.translate(a)?;
        let r = self.translate(b)?;
        let equal = self.translate_comparison(l, r, &[INT, BOOL], IntCC::Equal, |this| {
            this.call(id::EQUALS, &[this.frame, l.tag, l.bits, r.tag, r.bits])
        })?;
        let result = if negate {
            self.builder.ins().bxor_imm_s(equal, 1)
        } else {
            equal
        };
        Ok(self.boolean(result))
    }

    fn translate_order(
        &mut self,
        a: NodeId,
        b: NodeId,
        op: i64,
        native: IntCC,
    ) -> Result<Cell, Untranslatable> {
        let l = self.translate(a)?;
        let r = self.translate(b)?;
        let holds = self.translate_comparison(l, r, &[INT], native, |this| {
            let op = this.builder.ins().iconst(I64, op);
            this.call(id::ORDER, &[this.frame, op, l.tag, l.bits, r.tag, r.bits])
        })?;
        Ok(self.boolean(holds))
    }

    /// A comparison of two cells: native on the bits when both have one of the `native_tags`,
    /// through a helper (`slow`, which may fault) otherwise. Gives 0 or 1.
    fn translate_comparison(
        &mut self,
        l: Cell,
        r: Cell,
        native_tags: &[i64],
        native: IntCC,
        slow: impl FnOnce(&mut Self) -> Result<ir::Value, Untranslatable>,
    ) -> Result<ir::Value, Untranslatable> {
        let fast = self.same_scalar(l, r, native_tags);
        let fast_block = self.builder.create_block();
        let slow_block = self.builder.create_block();
        let join = self.builder.create_block();
        let result = self.builder.append_block_param(join, I64);
        self.builder
            .ins()
            .brif(fast, fast_block, &[], slow_block, &[]);

        self.builder.switch_to_block(fast_block);
        let holds = self.builder.ins().icmp(native, l.bits, r.bits);
        let holds = self.builder.ins().uextend(I64, holds);
        self.builder.ins().jump(join, &[BlockArg::Value(holds)]);

        self.builder.switch_to_block(slow_block);
        let holds = slow(self)?;
        let holds = self.checked_status(holds);
        self.builder.ins().jump(join, &[BlockArg::Value(holds)]);

        self.builder.switch_to_block(join);
        Ok(result)
    }

    /// A helper that tests one value against a compiled set, regex or glob.
    fn translate_predicate(
        &mut self,
        helper: usize,
        table_index: i64,
        subject: NodeId,
    ) -> Result<Cell, Untranslatable> {
        let value = self.translate(subject)?;
        let index = self.builder.ins().iconst(I64, table_index);
        let holds = self.call(helper, &[self.frame, index, value.tag, value.bits])?;
        let holds = self.checked_status(holds);
        Ok(self.boolean(holds))
    }

    fn translate_coalesce(&mut self, a: NodeId, b: NodeId) -> Result<Cell, Untranslatable> {
        let first = self.translate(a)?;
        let fallback = self.builder.create_block();
        let join = self.builder.create_block();
        let tag = self.builder.append_block_param(join, I64);
        let bits = self.builder.append_block_param(join, I64);
        // MISSING and NULL are the two lowest tags: absent means the tag is at most NULL.
        const _: () = assert!(MISSING == 0 && NULL == 1);
        let absent = self
            .builder
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, first.tag, NULL);
        self.builder.ins().brif(
            absent,
            fallback,
            &[],
            join,
            &[BlockArg::Value(first.tag), BlockArg::Value(first.bits)],
        );
        self.builder.switch_to_block(fallback);
        let second = self.translate(b)?;
        self.builder.ins().jump(
            join,
            &[BlockArg::Value(second.tag), BlockArg::Value(second.bits)],
        );
        self.builder.switch_to_block(join);
        Ok(Cell { tag, bits })
    }

    /// Evaluates the operands, writes them to the scratch slot and lets `sluice_apply` compute.
    fn translate_apply(
        &mut self,
        apply: Apply,
        extra: i64,
        operands: &[NodeId],
    ) -> Result<Cell, Untranslatable> {
        let mut cells = Vec::with_capacity(operands.len());
        for operand in operands {
            cells.push(self.translate(*operand)?);
        }
        for (n, cell) in cells.iter().enumerate() {
            let offset = i32::try_from(n as i64 * CELL_SIZE).unwrap_or(i32::MAX);
            self.builder
                .ins()
                .stack_store(I64, cell.tag, self.scratch, offset);
            self.builder
                .ins()
                .stack_store(I64, cell.bits, self.scratch, offset + 8);
        }
        let code = self.builder.ins().iconst(I64, apply as i64);
        let extra = self.builder.ins().iconst(I64, extra);
        let args = self.builder.ins().stack_addr(I64, self.scratch, 0);
        let count = self.builder.ins().iconst(I64, cells.len() as i64);
        let out = self.builder.ins().stack_addr(I64, self.answer, 0);
        let status = self.call(id::APPLY, &[self.frame, code, extra, args, count, out])?;
        self.checked_status(status);
        Ok(self.read_answer())
    }

    fn read_answer(&mut self) -> Cell {
        Cell {
            tag: self.builder.ins().stack_load(I64, I64, self.answer, 0),
            bits: self.builder.ins().stack_load(I64, I64, self.answer, 8),
        }
    }

    /// `any`/`all x in list: body` as a counted loop over the list's elements.
    fn translate_quantified(
        &mut self,
        quantifier: Quantifier,
        var: usize,
        list: NodeId,
        body: NodeId,
    ) -> Result<Cell, Untranslatable> {
        let want = i64::from(quantifier == Quantifier::Any);
        let &(var_tag, var_bits) = self
            .vars
            .get(var)
            .ok_or_else(|| Untranslatable(format!("no variable v{var}")))?;
        let items = self.translate(list)?;
        let length = self.call(id::LENGTH, &[self.frame, items.tag, items.bits])?;
        let not_list = self
            .builder
            .ins()
            .icmp_imm_s(IntCC::SignedLessThan, length, 0);
        self.fault_if(not_list);

        let header = self.builder.create_block();
        let index = self.builder.append_block_param(header, I64);
        let step = self.builder.create_block();
        let next = self.builder.create_block();
        let done = self.builder.create_block();
        let result = self.builder.append_block_param(done, I64);
        let zero = self.builder.ins().iconst(I64, 0);
        self.builder.ins().jump(header, &[BlockArg::Value(zero)]);

        self.builder.switch_to_block(header);
        let finished = self
            .builder
            .ins()
            .icmp(IntCC::SignedGreaterThanOrEqual, index, length);
        let exhausted = self.builder.ins().iconst(I64, 1 - want);
        self.builder
            .ins()
            .brif(finished, done, &[BlockArg::Value(exhausted)], step, &[]);

        self.builder.switch_to_block(step);
        let out = self.builder.ins().stack_addr(I64, self.answer, 0);
        let status = self.call(
            id::ELEMENT,
            &[self.frame, items.tag, items.bits, index, out],
        )?;
        self.checked_status(status);
        let item = self.read_answer();
        self.builder.def_var(var_tag, item.tag);
        self.builder.def_var(var_bits, item.bits);
        let holds = self.translate_truth(body)?;
        let decided = self.builder.ins().icmp_imm_s(IntCC::Equal, holds, want);
        let found = self.builder.ins().iconst(I64, want);
        self.builder
            .ins()
            .brif(decided, done, &[BlockArg::Value(found)], next, &[]);

        self.builder.switch_to_block(next);
        let following = self.builder.ins().iadd_imm_s(index, 1);
        self.builder
            .ins()
            .jump(header, &[BlockArg::Value(following)]);

        self.builder.switch_to_block(done);
        Ok(self.boolean(result))
    }
}
