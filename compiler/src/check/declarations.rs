//! Declarations shared by every file of a policy set: tools and the host context.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::schema;
use super::{Record, Ty};
use crate::ast::{
    ContextDecl, EffectsDecl, FieldDecl, Item, Literal, Span, ToolShape, TypeExpr, TypeKind,
};
use crate::diagnostics::{Code, Diagnostic};
use crate::shell::EffectRow;

use super::rules::SourceUnit;

/// A declared tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub file: String,
    pub span: Span,
    pub args: Arc<Record>,
    /// False when the declaration could not be read (its schema failed): its arguments are then
    /// checked when the policy runs, so one bad schema does not cascade into unknown-field errors.
    pub known: bool,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Declarations {
    pub tools: BTreeMap<String, ToolInfo>,
    /// The files of the set that some file imports: they share declarations and hold no rules.
    pub imported: std::collections::BTreeSet<String>,
    pub context: Arc<Record>,
    /// Rows the set adds to the shell effect table, in set order.
    pub effects: Vec<EffectRow>,
    /// The session labels the set declares, with where.
    pub labels: BTreeMap<String, (String, Span)>,
}

/// The fields of `agent`.
pub fn agent_record() -> Arc<Record> {
    Arc::new(Record {
        fields: vec![
            ("id".into(), Ty::Str),
            ("labels".into(), Ty::List(Arc::new(Ty::Str))),
            ("presets".into(), Ty::List(Arc::new(Ty::Str))),
        ],
    })
}

/// The fields of `session`.
pub fn session_record() -> Arc<Record> {
    Arc::new(Record {
        fields: vec![
            ("labels".into(), Ty::List(Arc::new(Ty::Str))),
            // Counts by tool name: any tool, declared or not, so read as JSON (`?? 0`).
            ("calls".into(), Ty::Json),
        ],
    })
}

/// The result statuses a post-check can see.
pub const RESULT_STATUSES: &[&str] = &["ok", "error", "denied", "aborted", "timeout"];

/// The fields of `result`.
pub fn result_record() -> Arc<Record> {
    Arc::new(Record {
        fields: vec![
            (
                "status".into(),
                Ty::Enum(RESULT_STATUSES.iter().map(|s| s.to_string()).collect()),
            ),
            ("content".into(), Ty::Str),
            ("value".into(), Ty::Json),
            ("error".into(), Ty::Str.optional()),
            // Derived: every text the result carries (see `ToolResult::text`).
            ("text".into(), Ty::Str),
        ],
    })
}

/// One simple command of `shell(...)`: the fields [`crate::shell::FIELDS`] names, typed.
pub fn command_record() -> Arc<Record> {
    let strings = || Ty::List(Arc::new(Ty::Str));
    let paths = || Ty::List(Arc::new(Ty::Path));
    let redirect = Record {
        fields: vec![
            ("fd".into(), Ty::Int.optional()),
            ("op".into(), Ty::Str),
            ("target".into(), Ty::Str),
            ("path".into(), Ty::Path),
        ],
    };
    let typed = |name: &str| -> Ty {
        match name {
            "text" | "name" => Ty::Str,
            "argv" | "flags" | "args" | "env" | "wrappers" => strings(),
            "paths" | "reads" | "writes" | "deletes" => paths(),
            "cwd" => Ty::Path.optional(),
            "redirects" => Ty::List(Arc::new(Ty::Record(Arc::new(redirect.clone())))),
            "unresolved" => Ty::Str.optional(),
            _ => Ty::Bool,
        }
    };
    Arc::new(Record {
        fields: crate::shell::FIELDS
            .iter()
            .map(|name| ((*name).to_string(), typed(name)))
            .collect(),
    })
}

/// The tools and context every file of the set declares, shared by all of them.
pub fn collect_declarations(
    units: &[SourceUnit<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Declarations {
    let mut decls = Declarations::default();
    let mut context = Record::default();
    let mut context_origin: BTreeMap<String, (String, Span)> = BTreeMap::new();
    decls.imported = super::imports::check_imports(units, diagnostics);
    for unit in units {
        for item in &unit.outline.items {
            match item {
                Item::Tool(tool) => {
                    if let Some(first) = decls.tools.get(&tool.name.name) {
                        diagnostics.push(
                            Diagnostic::new(Code::DuplicateTool, unit.path, tool.name.span, format!("tool `{}` is declared twice", tool.name.name))
                                .label("declared again here")
                                .secondary(&first.file, first.span, "first declared here")
                                .help("keep one declaration; a policy set shares its declarations across files"),
                        );
                        continue;
                    }
                    let mut known = true;
                    let args = match &tool.shape {
                        ToolShape::Fields(fields) => record(unit.path, fields, diagnostics),
                        ToolShape::Schema { path, span } => match schema::load(unit, path) {
                            Ok(record) => record,
                            Err(why) => {
                                diagnostics.push(
                                    Diagnostic::new(Code::SchemaError, unit.path, *span, format!("cannot use the schema of tool `{}`: {why}", tool.name.name))
                                        .label("this schema")
                                        .help("point `from` at a JSON Schema object (or an MCP tool with `inputSchema`) relative to this file"),
                                );
                                known = false;
                                Record::default()
                            }
                        },
                    };
                    let info = ToolInfo {
                        name: tool.name.name.clone(),
                        file: unit.path.to_string(),
                        span: tool.name.span,
                        args: Arc::new(args),
                        known,
                    };
                    decls.tools.insert(info.name.clone(), info);
                }
                Item::Label(label) => {
                    let name = &label.name.name;
                    if let Some((file, span)) = decls.labels.get(name) {
                        diagnostics.push(
                            Diagnostic::new(Code::DuplicateLabel, unit.path, label.name.span, format!("label `{name}` is declared twice"))
                                .label("declared again here")
                                .secondary(file, *span, "first declared here")
                                .help("keep one declaration; a policy set shares its declarations across files"),
                        );
                        continue;
                    }
                    decls
                        .labels
                        .insert(name.clone(), (unit.path.to_string(), label.name.span));
                }
                Item::Context(ContextDecl { fields, .. }) => {
                    let declared = record(unit.path, fields, diagnostics);
                    for (field, (name, ty)) in fields.iter().zip(declared.fields) {
                        match context.get(&name) {
                            Some(existing) if existing != &ty => {
                                let (file, span) =
                                    context_origin.get(&name).cloned().unwrap_or_default();
                                diagnostics.push(
                                    Diagnostic::new(Code::ConflictingContext, unit.path, field.ty.span, format!("context field `{name}` is declared as `{ty}` here and as `{existing}` elsewhere"))
                                        .label("conflicting type")
                                        .secondary(&file, span, "first declared here")
                                        .help("give the field one type in every file of the policy set"),
                                );
                            }
                            Some(_) => {}
                            None => {
                                context_origin
                                    .insert(name.clone(), (unit.path.to_string(), field.name.span));
                                context.fields.push((name, ty));
                            }
                        }
                    }
                }
                Item::Effects(EffectsDecl { rows, span }) => {
                    decls
                        .effects
                        .extend(effect_rows(unit.path, rows, *span, diagnostics));
                }
                Item::Import(_) | Item::Rule(_) | Item::Test(_) => {}
            }
        }
    }
    decls.context = Arc::new(context);
    decls
}

/// The rows of an `effects` declaration, reporting those that are not rows.
fn effect_rows(
    file: &str,
    rows: &Literal,
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<EffectRow> {
    let Some(items) = rows.items() else {
        diagnostics.push(
            Diagnostic::new(
                Code::InvalidEffectRow,
                file,
                span,
                "`effects` takes a list of rows",
            )
            .label("not a list")
            .help("write `effects [{ command: \"NAME\", deletes: \"operands\" }]`"),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        match EffectRow::from_json(&item.to_json()) {
            Ok(row) => out.push(row),
            Err(error) => diagnostics.push(
                Diagnostic::new(Code::InvalidEffectRow, file, item.span, format!("invalid effect row: {error}"))
                    .label("not an effect row")
                    .help("a row has `command`, optional `subcommand` and `flags`, `reads`/`writes`/`deletes` naming operands (`operands`, `first`, `last`, `all_but_first`, `all_but_last`, `cwd`, `cwd_contents`, `after:PREFIX`) and `network`/`executes`"),
            ),
        }
    }
    out
}

/// A record from field declarations, reporting duplicate fields.
pub(crate) fn record(
    file: &str,
    fields: &[FieldDecl],
    diagnostics: &mut Vec<Diagnostic>,
) -> Record {
    let mut out = Record::default();
    for field in fields {
        if out.get(&field.name.name).is_some() {
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateField,
                    file,
                    field.name.span,
                    format!("field `{}` is declared twice", field.name.name),
                )
                .label("declared again")
                .help("remove one of the two declarations"),
            );
            continue;
        }
        out.fields.push((
            field.name.name.clone(),
            type_of(file, &field.ty, diagnostics),
        ));
    }
    out
}

fn type_of(file: &str, ty: &TypeExpr, diagnostics: &mut Vec<Diagnostic>) -> Ty {
    let base = match &ty.kind {
        TypeKind::String => Ty::Str,
        TypeKind::Int => Ty::Int,
        TypeKind::Float => Ty::Float,
        TypeKind::Bool => Ty::Bool,
        TypeKind::Any => Ty::Json,
        TypeKind::List(inner) => Ty::List(Arc::new(type_of(file, inner, diagnostics))),
        TypeKind::Record(fields) => Ty::Record(Arc::new(record(file, fields, diagnostics))),
        TypeKind::Enum(values) => Ty::Enum(values.iter().cloned().collect()),
    };
    if ty.optional { base.optional() } else { base }
}
