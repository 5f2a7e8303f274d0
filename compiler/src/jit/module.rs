//! Code generation driver: the one owner of the Cranelift module and its contexts.

use std::ffi::c_void;
use std::time::Instant;

use cranelift_codegen::ir::{AbiParam, InstBuilder, UserFuncName, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{Context, verify_function};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};

use super::cell::{Cell, MISSING, PART_INDEX, VALUE};
use super::code::{CodeMemory, ConditionCode, ConditionFn, NativeCode, Stats};
use super::helpers;
use super::translate::{Constants, FunctionTranslator, Untranslatable, scratch_cells, stack_slot};
use crate::ir::{Program, RuleIr};
use crate::scan::Scans;

/// Why a program could not be compiled to native code; callers fall back to the interpreter.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("cranelift does not support this host: {0}")]
    UnsupportedHost(String),
    #[error("cranelift rejected a function of rule `{rule}`: {message}")]
    Codegen { rule: String, message: String },
}

/// What to keep besides the code.
#[derive(Clone, Copy, Debug, Default)]
pub struct JitOptions {
    /// Run Cranelift's verifier on every function (tests do).
    pub verify: bool,
    /// Keep each function's Cranelift IR as text, for `sluice compile --emit clif`.
    pub keep_clif: bool,
}

/// Compiles the conditions of a lowered program.
pub fn compile(program: &Program, options: JitOptions) -> Result<NativeCode, JitError> {
    Jit::new()?.compile(program, options)
}

/// The JIT: the module that owns code memory, and the contexts reused for every function.
pub struct Jit {
    builder_context: FunctionBuilderContext,
    ctx: Context,
    module: JITModule,
    helpers: Vec<FuncId>,
}

impl Jit {
    pub fn new() -> Result<Jit, JitError> {
        let unsupported = |e: &dyn std::fmt::Display| JitError::UnsupportedHost(e.to_string());
        let mut flags = settings::builder();
        for (name, value) in [
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
            // Conditions are small and mostly helper calls: optimizing them costs more load time
            // than it saves per call.
            ("opt_level", "none"),
            // Tests run the verifier on each function themselves; loading a policy does not.
            ("enable_verifier", "false"),
        ] {
            flags.set(name, value).map_err(|e| unsupported(&e))?;
        }
        let isa = cranelift_native::builder()
            .map_err(|e| unsupported(&e))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| unsupported(&e))?;
        if isa.pointer_type() != types::I64 {
            return Err(JitError::UnsupportedHost("not a 64-bit target".into()));
        }
        let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
        let table = helpers::table();
        for helper in &table {
            builder.symbol(helper.name, helper.address);
        }
        let mut module = JITModule::new(builder);
        let mut helper_ids = Vec::with_capacity(table.len());
        for helper in &table {
            let mut signature = module.make_signature();
            for _ in 0..helper.params {
                signature.params.push(AbiParam::new(types::I64));
            }
            signature.returns.push(AbiParam::new(types::I64));
            let id = module
                .declare_function(helper.name, Linkage::Import, &signature)
                .map_err(|e| JitError::UnsupportedHost(e.to_string()))?;
            helper_ids.push(id);
        }
        Ok(Jit {
            builder_context: FunctionBuilderContext::new(),
            ctx: module.make_context(),
            module,
            helpers: helper_ids,
        })
    }

    /// Compiles every rule's condition; a rule the translator cannot express stays interpreted.
    pub fn compile(
        mut self,
        program: &Program,
        options: JitOptions,
    ) -> Result<NativeCode, JitError> {
        let started = Instant::now();
        let mut constants = Constants::default();
        let mut declared: Vec<(usize, FuncId)> = Vec::new();
        let mut clif = Vec::new();
        let mut untranslated = Vec::new();
        let mut codes = Vec::new();
        let scans = Scans::build(program);
        for (position, rule) in program.rules.iter().enumerate() {
            let Some(condition) = rule.condition else {
                continue;
            };
            let name = rule.meta.name.to_string();
            if rule.per_part.is_none()
                && let Some(guard) = scans.guard(rule.index).filter(|guard| guard.whole)
            {
                let field = scans
                    .scans
                    .get(guard.scan as usize)
                    .and_then(|scan| program.slots.get(scan.slot as usize))
                    .map_or_else(|| "a field".to_string(), |slot| slot.describe());
                codes.push((name, ConditionCode::SettledByScan { field }));
                continue;
            }
            match self.translate_rule(rule, condition, &mut constants, options)? {
                Ok((id, text)) => {
                    declared.push((position, id));
                    clif.extend(text);
                    codes.push((name, ConditionCode::Native));
                }
                Err(Untranslatable(why)) => {
                    untranslated.push(format!("{name}: {why}"));
                    codes.push((name, ConditionCode::Interpreted { why }));
                }
            }
        }
        self.module
            .finalize_definitions()
            .map_err(|e| JitError::Codegen {
                rule: "(linking)".into(),
                message: e.to_string(),
            })?;
        let mut conditions: Vec<Option<ConditionFn>> = vec![None; program.rules.len()];
        for (position, id) in declared {
            let address = self.module.get_finalized_function(id);
            if let Some(entry) = conditions.get_mut(position) {
                // SAFETY: `address` is the finalized code of a function built by `translate_rule`
                // with exactly the signature `ConditionFn` describes.
                *entry = Some(unsafe { super::code::condition_fn(address) });
            }
        }
        let stats = Stats {
            conditions: codes,
            decided_by_scans: scans.guards.iter().flatten().filter(|g| g.whole).count(),
            scans: scans.scans.len(),
            guarded: scans.guards.iter().flatten().count(),
            rules: program.rules.len(),
            compiled: conditions.iter().flatten().count(),
            untranslated,
            constants: constants.strings.len(),
            compile_time: started.elapsed(),
        };
        Ok(NativeCode::new(
            conditions,
            program.slots.len(),
            scans,
            constants.strings,
            CodeMemory::new(self.module),
            stats,
            clif,
        ))
    }

    fn translate_rule(
        &mut self,
        rule: &RuleIr,
        condition: crate::ir::NodeId,
        constants: &mut Constants,
        options: JitOptions,
    ) -> Result<Result<(FuncId, Option<String>), Untranslatable>, JitError> {
        let codegen = |message: String| JitError::Codegen {
            rule: rule.meta.name.to_string(),
            message,
        };
        let mut signature = self.module.make_signature();
        signature.params.push(AbiParam::new(types::I64));
        signature.params.push(AbiParam::new(types::I64));
        signature.returns.push(AbiParam::new(types::I64));
        let name = format!("rule{}", rule.index);
        let id = self
            .module
            .declare_function(&name, Linkage::Local, &signature)
            .map_err(|e| codegen(e.to_string()))?;
        self.ctx.func.signature = signature;
        self.ctx.func.name = UserFuncName::user(0, id.as_u32());

        let config = self.module.target_config();
        let mut builder = FunctionBuilder::new(&mut self.ctx.func, &mut self.builder_context);
        let helpers: Vec<_> = self
            .helpers
            .iter()
            .map(|helper| self.module.declare_func_in_func(*helper, builder.func))
            .collect();
        let entry = builder.create_block();
        builder.append_block_params_for_function_params(entry);
        builder.switch_to_block(entry);
        let (frame, facts) = match builder.block_params(entry) {
            [frame, facts] => (*frame, *facts),
            _ => return Err(codegen("the entry block lacks its parameters".into())),
        };
        let mut vars = Vec::with_capacity(rule.vars as usize);
        // A per-part rule's part is the first value of its frame (`NativeFrame::holds_part`).
        let part = rule.per_part.map(|(var, _)| var.0);
        for var in 0..rule.vars {
            let tag = builder.declare_var(types::I64);
            let bits = builder.declare_var(types::I64);
            let (tag_value, bits_value) = if part == Some(var) {
                (VALUE, PART_INDEX)
            } else {
                (MISSING, MISSING)
            };
            let tag_value = builder.ins().iconst(types::I64, tag_value);
            let bits_value = builder.ins().iconst(types::I64, bits_value);
            builder.def_var(tag, tag_value);
            builder.def_var(bits, bits_value);
            vars.push((tag, bits));
        }
        let scratch = stack_slot(&mut builder, scratch_cells(rule));
        let answer = stack_slot(&mut builder, 1);
        let fault_block = builder.create_block();
        let mut translator = FunctionTranslator {
            builder,
            rule,
            helpers: &helpers,
            constants,
            frame,
            facts,
            fault_block,
            scratch,
            answer,
            vars,
        };
        let translated = translator.translate_condition(condition);
        let FunctionTranslator { mut builder, .. } = translator;
        builder.seal_all_blocks();
        builder.finalize(config);
        if let Err(why) = translated {
            self.module.clear_context(&mut self.ctx);
            return Ok(Err(why));
        }
        if options.verify {
            verify_function(&self.ctx.func, self.module.isa())
                .map_err(|errors| codegen(errors.to_string()))?;
        }
        let clif = options
            .keep_clif
            .then(|| format!("; rule `{}`\n{}", rule.meta.name, self.ctx.func.display()));
        self.module
            .define_function(id, &mut self.ctx)
            .map_err(|e| codegen(format!("{e:?}")))?;
        self.module.clear_context(&mut self.ctx);
        Ok(Ok((id, clif)))
    }
}

/// Calls one compiled condition. Kept beside the code that builds the functions it calls.
pub(super) fn call_condition(function: ConditionFn, frame: *mut c_void, facts: &[Cell]) -> i64 {
    // SAFETY: `function` came from `condition_fn` on code this module finalized and that
    // `NativeCode` keeps alive; `frame` points to a live `Frame` and `facts` holds a cell for
    // every slot of the program the code was compiled from, which is all it reads.
    unsafe { function(frame, facts.as_ptr()) }
}
