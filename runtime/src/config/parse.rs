//! Reading `sluice.toml`: the TOML parsed with its spans (the `toml` crate), then walked key by
//! key so that every mistake is a diagnostic at the key or value it is about, with a "did you
//! mean" for a misspelt key.

use std::ops::Range;

use serde_json::Value as Json;
use sluice_compiler::ast::Span;
use sluice_compiler::builtin;
use sluice_compiler::diagnostics::{Code, Diagnostic, did_you_mean, help_with_suggestion};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{ContextSource, SetEntry, SetRef, Source};
use crate::registry::Scope;

const TOP_KEYS: &[&str] = &["policy", "context"];
const POLICY_KEYS: &[&str] = &["set", "scope"];
const SOURCES: &[&str] = &["$project", "$home", "$cwd", "$env:NAME"];

/// What the file says, before any set is loaded.
pub(super) struct Parsed {
    pub sets: Vec<SetEntry>,
    pub context: Vec<(String, ContextSource)>,
}

pub(super) fn parse(path: &str, text: &str) -> Result<Parsed, Vec<Diagnostic>> {
    let mut walker = Walker {
        path,
        diagnostics: Vec::new(),
    };
    let root = match DeTable::parse(text) {
        Ok(root) => root,
        Err(error) => {
            let span = error.span().unwrap_or(0..0);
            let message = error.message().trim().trim_end_matches('.').to_lowercase();
            return Err(vec![
                walker
                    .error(
                        Code::ConfigSyntax,
                        &span,
                        format!("this is not valid TOML: {message}"),
                    )
                    .label("here")
                    .help("the configuration is TOML: see `sluice init` for a commented example"),
            ]);
        }
    };
    let mut parsed = Parsed {
        sets: Vec::new(),
        context: Vec::new(),
    };
    for (key, value) in root.get_ref() {
        match key_name(key) {
            "policy" => walker.policies(value, &mut parsed.sets),
            "context" => walker.context(value, &mut parsed.context),
            other => walker.unknown_key(key, other, TOP_KEYS, "the configuration"),
        }
    }
    if parsed.sets.is_empty() && walker.diagnostics.is_empty() {
        walker.diagnostics.push(
            walker
                .error(Code::ConfigValue, &(0..0), "the configuration names no policy set")
                .label("no `[[policy]]` table")
                .help("add `[[policy]]` tables with `set = \"builtin:shell-safety\"` (or a path), in chain order"),
        );
    }
    if walker.diagnostics.is_empty() {
        Ok(parsed)
    } else {
        Err(walker.diagnostics)
    }
}

fn key_name<'k>(key: &'k Spanned<std::borrow::Cow<'_, str>>) -> &'k str {
    key.get_ref()
}

struct Walker<'p> {
    path: &'p str,
    diagnostics: Vec<Diagnostic>,
}

impl Walker<'_> {
    fn error(&self, code: Code, span: &Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, self.path, Span::new(span.start, span.end), message)
    }

    fn unknown_key(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        name: &str,
        known: &[&str],
        place: &str,
    ) {
        let suggestion = did_you_mean(name, known.iter().copied());
        let listed = known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        self.diagnostics.push(
            self.error(
                Code::ConfigUnknownKey,
                &key.span(),
                format!("unknown key `{name}` in {place}"),
            )
            .label("unknown key")
            .help(help_with_suggestion(
                suggestion,
                format!("the keys here are {listed}"),
            )),
        );
    }

    fn wrong(&mut self, span: &Range<usize>, message: String, help: String) {
        self.diagnostics.push(
            self.error(Code::ConfigValue, span, message)
                .label("invalid value")
                .help(help),
        );
    }

    fn policies(&mut self, value: &Spanned<DeValue<'_>>, out: &mut Vec<SetEntry>) {
        let DeValue::Array(items) = value.get_ref() else {
            return self.wrong(
                &value.span(),
                format!(
                    "`policy` must be a list of tables, not a {}",
                    value.get_ref().type_str()
                ),
                "write each set as its own `[[policy]]` table, in chain order".into(),
            );
        };
        for item in items {
            let DeValue::Table(table) = item.get_ref() else {
                self.wrong(
                    &item.span(),
                    format!(
                        "a `policy` entry must be a table, not a {}",
                        item.get_ref().type_str()
                    ),
                    "write `[[policy]]` followed by `set = \"…\"`".into(),
                );
                continue;
            };
            if let Some(entry) = self.policy(item.span(), table) {
                out.push(entry);
            }
        }
    }

    fn policy(&mut self, span: Range<usize>, table: &DeTable<'_>) -> Option<SetEntry> {
        let mut set = None;
        let mut scope = Scope::Global;
        for (key, value) in table {
            match key_name(key) {
                "set" => set = self.set_ref(value),
                "scope" => scope = self.scope(value).unwrap_or(Scope::Global),
                other => self.unknown_key(key, other, POLICY_KEYS, "a `[[policy]]` table"),
            }
        }
        if set.is_none() && !table.iter().any(|(k, _)| key_name(k) == "set") {
            self.wrong(
                &span,
                "this `[[policy]]` table has no `set`".into(),
                "name the set: `set = \"builtin:shell-safety\"`, or a directory or file relative to this file".into(),
            );
        }
        Some(SetEntry {
            set: set?,
            scope,
            span: Span::new(span.start, span.end),
        })
    }

    fn string<'v>(
        &mut self,
        value: &'v Spanned<DeValue<'_>>,
        key: &str,
        help: &str,
    ) -> Option<&'v str> {
        match value.get_ref() {
            DeValue::String(text) => Some(text),
            other => {
                self.wrong(
                    &value.span(),
                    format!("`{key}` must be a string, not a {}", other.type_str()),
                    help.to_string(),
                );
                None
            }
        }
    }

    fn set_ref(&mut self, value: &Spanned<DeValue<'_>>) -> Option<SetRef> {
        let help =
            "a built-in set (`builtin:shell-safety`) or a directory or file relative to this file";
        let text = self.string(value, "set", help)?;
        if let Some(name) = text.strip_prefix(builtin::PREFIX) {
            if builtin::set(name).is_none() {
                let names = builtin::SETS.iter().map(|s| s.name);
                let suggestion =
                    did_you_mean(name, names).map(|s| format!("{}{s}", builtin::PREFIX));
                let listed = builtin::SETS
                    .iter()
                    .map(|s| format!("`{}{}`", builtin::PREFIX, s.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.wrong(
                    &value.span(),
                    format!("there is no built-in policy set `{name}`"),
                    help_with_suggestion(
                        suggestion.as_deref(),
                        format!("the built-in sets are {listed}"),
                    ),
                );
                return None;
            }
            return Some(SetRef::Builtin(name.to_string()));
        }
        if text.trim().is_empty() {
            self.wrong(&value.span(), "`set` is empty".into(), help.into());
            return None;
        }
        Some(SetRef::Path {
            path: text.to_string(),
            span: Span::new(value.span().start, value.span().end),
        })
    }

    fn scope(&mut self, value: &Spanned<DeValue<'_>>) -> Option<Scope> {
        let help =
            "`global`, `preset:NAME` (agents that joined the preset) or `agent:ID` (one agent)";
        let text = self.string(value, "scope", help)?;
        let scope = match text.split_once(':') {
            None if text == "global" => Some(Scope::Global),
            Some(("preset", name)) if !name.is_empty() => Some(Scope::preset(name)),
            Some(("agent", id)) if !id.is_empty() => Some(Scope::agent(id)),
            _ => None,
        };
        if scope.is_none() {
            self.wrong(
                &value.span(),
                format!("`{text}` is not a scope"),
                help.into(),
            );
        }
        scope
    }

    fn context(&mut self, value: &Spanned<DeValue<'_>>, out: &mut Vec<(String, ContextSource)>) {
        let DeValue::Table(table) = value.get_ref() else {
            return self.wrong(
                &value.span(),
                format!(
                    "`context` must be a table, not a {}",
                    value.get_ref().type_str()
                ),
                "write `[context]` followed by `field = value` lines".into(),
            );
        };
        for (key, value) in table {
            if let Some(source) = self.context_value(value) {
                out.push((key.get_ref().to_string(), source));
            }
        }
    }

    fn context_value(&mut self, value: &Spanned<DeValue<'_>>) -> Option<ContextSource> {
        if let DeValue::String(text) = value.get_ref() {
            if let Some(literal) = text.strip_prefix("$$") {
                return Some(ContextSource::Value(Json::String(format!("${literal}"))));
            }
            if let Some(name) = text.strip_prefix('$') {
                let source = match name.split_once(':') {
                    None if name == "project" => Some(Source::Project),
                    None if name == "home" => Some(Source::Home),
                    None if name == "cwd" => Some(Source::Cwd),
                    Some(("env", var)) if !var.is_empty() => Some(Source::Env(var.to_string())),
                    _ => None,
                };
                return match source {
                    Some(source) => Some(ContextSource::From(source)),
                    None => {
                        let suggestion = did_you_mean(text, SOURCES.iter().copied());
                        let listed = SOURCES
                            .iter()
                            .map(|s| format!("`{s}`"))
                            .collect::<Vec<_>>()
                            .join(", ");
                        self.wrong(
                            &value.span(),
                            format!("`{text}` is not a context source"),
                            help_with_suggestion(
                                suggestion,
                                format!("the sources are {listed}; write `$$` for a literal `$`"),
                            ),
                        );
                        None
                    }
                };
            }
        }
        match to_json(value.get_ref()) {
            Some(json) => Some(ContextSource::Value(json)),
            None => {
                self.wrong(
                    &value.span(),
                    "this value cannot be a context value (a date, a time, or a number JSON cannot hold)".into(),
                    "write it as a string".into(),
                );
                None
            }
        }
    }
}

/// A TOML value as the JSON a call's context holds.
fn to_json(value: &DeValue<'_>) -> Option<Json> {
    Some(match value {
        DeValue::String(s) => Json::String(s.to_string()),
        DeValue::Integer(i) => Json::from(i64::from_str_radix(i.as_str(), i.radix()).ok()?),
        DeValue::Float(f) => {
            serde_json::Number::from_f64(f.as_str().replace('_', "").parse().ok()?)
                .map(Json::Number)?
        }
        DeValue::Boolean(b) => Json::Bool(*b),
        DeValue::Datetime(_) => return None,
        DeValue::Array(items) => Json::Array(
            items
                .iter()
                .map(|i| to_json(i.get_ref()))
                .collect::<Option<_>>()?,
        ),
        DeValue::Table(table) => Json::Object(
            table
                .iter()
                .map(|(k, v)| Some((k.get_ref().to_string(), to_json(v.get_ref())?)))
                .collect::<Option<_>>()?,
        ),
    })
}
