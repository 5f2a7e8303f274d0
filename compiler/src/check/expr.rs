//! Typing one rule's expressions: resolves roots to facts, methods to builtins, and checks types.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::declarations::{agent_record, command_record, result_record, session_record};
use super::{Builtin, Const, Record, Root, TExpr, TExprKind, Ty, VarId};
use crate::ast::{BinOp, Expr, ExprKind, Ident, PerPart, RuleKind, Span, StrPart};
use crate::diagnostics::{Code, Diagnostic, did_you_mean, help_with_suggestion};

/// What `args` is inside one rule.
#[derive(Clone, Debug)]
pub(crate) enum ArgsShape {
    /// The rule names its tools exactly: fields common to all of them, and for the others which
    /// tool lacks them.
    Known {
        record: Arc<Record>,
        missing: BTreeMap<String, String>,
    },
    /// A glob or `*`: arguments are checked when the policy runs.
    Dynamic,
}

pub(crate) struct ExprChecker<'a> {
    pub file: &'a str,
    /// The host context's declared fields.
    pub context: Arc<Record>,
    pub kind: RuleKind,
    pub args: ArgsShape,
    /// The session labels the set declares.
    pub labels: Arc<Vec<String>>,
    scope: Vec<(String, VarId, Ty)>,
    pub vars: u32,
    pub diagnostics: &'a mut Vec<Diagnostic>,
}

type Checked = Option<TExpr>;

impl<'a> ExprChecker<'a> {
    pub fn new(
        file: &'a str,
        context: Arc<Record>,
        kind: RuleKind,
        args: ArgsShape,
        diagnostics: &'a mut Vec<Diagnostic>,
    ) -> Self {
        ExprChecker {
            file,
            context,
            kind,
            args,
            labels: Arc::default(),
            scope: Vec::new(),
            vars: 0,
            diagnostics,
        }
    }

    fn error(&mut self, code: Code, span: Span, message: String, label: &str, help: String) {
        self.diagnostics.push(
            Diagnostic::new(code, self.file, span, message)
                .label(label)
                .help(help),
        );
    }

    fn mismatch(&mut self, span: Span, expected: &str, found: &Ty, help: &str) -> Option<TExpr> {
        self.error(
            Code::TypeMismatch,
            span,
            format!("expected {expected}, found `{found}`"),
            &format!("this is `{found}`"),
            help.to_string(),
        );
        None
    }

    /// A condition: must be a boolean.
    pub fn condition(&mut self, expr: &Expr) -> Checked {
        let checked = self.expr(expr)?;
        self.expect(checked, &Ty::Bool, "a condition is true or false: compare the value, or test it with a method such as `.contains(...)`")
    }

    /// The `for VAR in LIST` of a per-part rule: the list is checked, and the variable stays
    /// bound for the condition and the effects. Pre-checks and gates judge a call before it
    /// runs, part by part; a post-check judges one result and a `concurrency` rule one call, so
    /// neither has parts to give verdicts to.
    pub fn per_part(&mut self, kind: RuleKind, part: &PerPart) -> Option<(VarId, TExpr)> {
        let misplaced = !matches!(kind, RuleKind::Precheck | RuleKind::Gate);
        if misplaced {
            self.error(
                Code::PerPartMisplaced,
                part.span,
                format!("a `{}` rule cannot judge parts", kind.keyword()),
                "only pre-checks and gates judge parts",
                "write the rule as a `precheck` or a `gate`, or test the parts with `any(...)`/`all(...)` in its condition".into(),
            );
        }
        // Bound even on a misplaced clause, so the condition is checked without cascading errors.
        let bound = self.bind_elements(
            &part.list,
            &part.var,
            "a per-part rule judges the elements of a list, such as `shell(args.command)`",
        )?;
        (!misplaced).then_some(bound)
    }

    /// Checks `list` and binds `var` to its elements in the scope (the caller pops it when the
    /// binding ends): a quantifier's body, or a per-part rule's condition and effects.
    fn bind_elements(&mut self, list: &Expr, var: &Ident, help: &str) -> Option<(VarId, TExpr)> {
        let list = self.expr(list)?;
        let list = self.required(list)?;
        let element = match &list.ty {
            Ty::List(element) => (**element).clone(),
            Ty::Json => Ty::Json,
            other => {
                let other = other.clone();
                self.mismatch(list.span, "a list", &other, help)?;
                return None;
            }
        };
        let id = VarId(self.vars);
        self.vars += 1;
        self.scope.push((var.name.clone(), id, element));
        Some((id, list))
    }

    /// `redact r"re" as "family" [where cond]`: the pattern is a literal regex, the family a
    /// literal name, and `cond` a condition over `secret` (the match, or its group named
    /// `secret`) and `around` (the match with its neighbours on the same line).
    pub fn redaction(
        &mut self,
        pattern: &Expr,
        family: &Expr,
        filter: Option<&Expr>,
    ) -> Option<super::CheckedRedaction> {
        let literal = |expr: &Expr| match &expr.kind {
            ExprKind::Str(parts) => match parts.as_slice() {
                [] => Some(String::new()),
                [StrPart::Text(text)] => Some(text.clone()),
                _ => None,
            },
            _ => None,
        };
        let Some(regex) = literal(pattern) else {
            self.error(
                Code::InvalidRegex,
                pattern.span,
                "the pattern of `redact` must be a string literal".into(),
                "not a literal",
                "write the regex as a raw string, for example `redact r\"ghp_[0-9A-Za-z]{36}\" as \"github-pat\"`".into(),
            );
            return None;
        };
        let hir = self.validate_regex(&regex, pattern.span);
        let name = literal(family).filter(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        });
        let Some(name) = name else {
            self.error(
                Code::TypeMismatch,
                family.span,
                "the family of `redact` must be a literal name of lowercase letters, digits and `-`"
                    .into(),
                "not a family name",
                "name what was redacted, for example `as \"github-pat\"`: the text becomes `[REDACTED github-pat]`".into(),
            );
            return None;
        };
        let secret = VarId(self.vars);
        let around = VarId(self.vars + 1);
        self.vars += 2;
        self.scope.push(("secret".into(), secret, Ty::Str));
        self.scope.push(("around".into(), around, Ty::Str));
        let filter = filter.map(|f| self.condition(f));
        self.scope.pop();
        self.scope.pop();
        let filter = match filter {
            Some(checked) => Some(checked?),
            None => None,
        };
        hir?;
        Some(super::CheckedRedaction {
            pattern: regex.into(),
            pattern_span: pattern.span,
            family: name.into(),
            filter,
            secret,
            around,
        })
    }

    /// A message: any non-optional value, shown as text.
    pub fn message(&mut self, expr: &Expr) -> Checked {
        let checked = self.expr(expr)?;
        self.required(checked)
    }

    /// An expression whose value must be accepted by `expected`.
    pub fn expect(&mut self, checked: TExpr, expected: &Ty, help: &str) -> Checked {
        if checked.ty.is_optional() && !expected.is_optional() {
            return self.required(checked);
        }
        if expected.accepts(&checked.ty) {
            Some(checked)
        } else {
            self.mismatch(checked.span, &format!("`{expected}`"), &checked.ty, help)
        }
    }

    /// Refuses an optional value that has no default.
    fn required(&mut self, checked: TExpr) -> Checked {
        if let Ty::Optional(inner) = &checked.ty {
            self.error(
                Code::OptionalWithoutDefault,
                checked.span,
                format!(
                    "this value is optional (`{}`) and may be missing",
                    checked.ty
                ),
                "may be missing",
                format!(
                    "give it a default with `??`, for example `... ?? {}`",
                    default_for(inner)
                ),
            );
            return None;
        }
        Some(checked)
    }

    pub fn expr(&mut self, expr: &Expr) -> Checked {
        let span = expr.span;
        let typed = |kind, ty| Some(TExpr { kind, ty, span });
        match &expr.kind {
            ExprKind::Null => typed(TExprKind::Const(Const::Null), Ty::Null),
            ExprKind::Bool(b) => typed(TExprKind::Const(Const::Bool(*b)), Ty::Bool),
            ExprKind::Int(i) => typed(TExprKind::Const(Const::Int(*i)), Ty::Int),
            ExprKind::Float(f) => typed(TExprKind::Const(Const::Float(f.0)), Ty::Float),
            ExprKind::Str(parts) => self.string(parts, span),
            ExprKind::List(items) => self.list(items, span),
            ExprKind::Name(name) => self.name(name, span),
            ExprKind::Field(base, field) => self.field(base, field, span),
            ExprKind::Index(base, index) => self.index(base, index, span),
            ExprKind::Method {
                receiver,
                method,
                args,
            } => self.method(receiver, method, args, span),
            ExprKind::Call { function, args } => self.call(function, args, span),
            ExprKind::Not(inner) => {
                let inner = self.condition(inner)?;
                typed(TExprKind::Not(Box::new(inner)), Ty::Bool)
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, span),
            ExprKind::Quantified {
                quantifier,
                var,
                list,
                body,
            } => {
                let (id, list) = self.bind_elements(
                    list,
                    var,
                    "quantifiers range over lists, such as `agent.labels`",
                )?;
                let body = self.condition(body);
                self.scope.pop();
                let body = body?;
                typed(
                    TExprKind::Quantified {
                        quantifier: *quantifier,
                        var: id,
                        list: Box::new(list),
                        body: Box::new(body),
                    },
                    Ty::Bool,
                )
            }
            ExprKind::ArgvMatch { subject, pattern } => {
                let subject = self.expr(subject)?;
                let words = Ty::List(Arc::new(Ty::Str));
                let subject = self.expect(
                    subject,
                    &words,
                    "argv patterns match a list of words, such as `cmd.argv` of a `shell(...)` part",
                )?;
                typed(
                    TExprKind::ArgvMatch {
                        subject: Box::new(subject),
                        pattern: Arc::new(pattern.clone()),
                    },
                    Ty::Bool,
                )
            }
        }
    }

    fn string(&mut self, parts: &[StrPart], span: Span) -> Checked {
        if let [] | [StrPart::Text(_)] = parts {
            let text = match parts {
                [StrPart::Text(t)] => t.as_str(),
                _ => "",
            };
            return Some(TExpr {
                kind: TExprKind::Const(Const::Str(text.into())),
                ty: Ty::Str,
                span,
            });
        }
        let mut pieces = Vec::new();
        let mut ok = true;
        for part in parts {
            match part {
                StrPart::Text(t) => pieces.push(TExpr {
                    kind: TExprKind::Const(Const::Str(t.as_str().into())),
                    ty: Ty::Str,
                    span,
                }),
                StrPart::Expr(e) => match self.message(e) {
                    Some(piece) => pieces.push(piece),
                    None => ok = false,
                },
            }
        }
        ok.then_some(TExpr {
            kind: TExprKind::Concat(pieces),
            ty: Ty::Str,
            span,
        })
    }

    fn list(&mut self, items: &[Expr], span: Span) -> Checked {
        let mut checked = Vec::new();
        let mut element: Option<Ty> = None;
        for item in items {
            let item = self.expr(item)?;
            let item = self.required(item)?;
            element = match element {
                None => Some(item.ty.clone()),
                Some(ty) => match ty.join(&item.ty) {
                    Some(joined) => Some(joined),
                    None => {
                        return self.mismatch(
                            item.span,
                            &format!("`{ty}` like the other elements"),
                            &item.ty,
                            "a list holds values of one type",
                        );
                    }
                },
            };
            checked.push(item);
        }
        let ty = Ty::List(Arc::new(element.unwrap_or(Ty::Json)));
        Some(TExpr {
            kind: TExprKind::List(checked),
            ty,
            span,
        })
    }

    /// `"NAME" in session.labels`: a label no declaration names is a typo, never a label that
    /// is simply absent.
    fn label_test(&mut self, lhs: &TExpr, rhs: &TExpr) {
        let TExprKind::Fact {
            root: Root::Session,
            path,
        } = &rhs.kind
        else {
            return;
        };
        if !matches!(path.as_slice(), [field] if &**field == "labels") {
            return;
        }
        if let TExprKind::Const(Const::Str(name)) = &lhs.kind {
            self.declared_label(name, lhs.span);
        }
    }

    /// Reports a label the set does not declare, with the nearest declared one.
    pub(crate) fn declared_label(&mut self, name: &str, span: Span) -> bool {
        if self.labels.iter().any(|label| label == name) {
            return true;
        }
        let labels = self.labels.clone();
        let suggestion = did_you_mean(name, labels.iter().map(String::as_str)).map(str::to_string);
        self.error(
            Code::UnknownLabel,
            span,
            format!("unknown label `{name}`"),
            "not declared",
            help_with_suggestion(
                suggestion.as_deref(),
                format!("declare it with `label {name}` beside the set's tools"),
            ),
        );
        false
    }

    fn name(&mut self, name: &str, span: Span) -> Checked {
        if let Some((_, id, ty)) = self.scope.iter().rev().find(|(n, _, _)| n == name) {
            return Some(TExpr {
                kind: TExprKind::Var(*id),
                ty: ty.clone(),
                span,
            });
        }
        let (root, ty) = match name {
            "args" => (
                Root::Args,
                match &self.args {
                    ArgsShape::Known { record, .. } => Ty::Record(record.clone()),
                    ArgsShape::Dynamic => Ty::Json,
                },
            ),
            "agent" => (Root::Agent, Ty::Record(agent_record())),
            "context" => (Root::Context, Ty::Record(self.context.clone())),
            "tool" => (Root::Tool, Ty::Str),
            "session" => (Root::Session, Ty::Record(session_record())),
            "result" => {
                if self.kind != RuleKind::Postcheck {
                    self.error(
                        Code::ResultOutsidePostcheck,
                        span,
                        format!("`result` is not available in a {}", self.kind.keyword()),
                        "no result yet",
                        format!(
                            "a {} runs before the tool does; read `result` in a `postcheck` rule",
                            self.kind.keyword()
                        ),
                    );
                    return None;
                }
                (Root::Result, Ty::Record(result_record()))
            }
            _ => {
                let mut candidates: Vec<&str> = vec!["args", "agent", "context", "tool", "session"];
                if self.kind == RuleKind::Postcheck {
                    candidates.push("result");
                }
                let bound: Vec<String> = self.scope.iter().map(|(n, _, _)| n.clone()).collect();
                candidates.extend(bound.iter().map(String::as_str));
                let suggestion = did_you_mean(name, candidates.iter().copied()).map(str::to_string);
                self.error(
                    Code::UnknownName,
                    span,
                    format!("unknown name `{name}`"),
                    "not defined",
                    help_with_suggestion(suggestion.as_deref(), "conditions read `args`, `agent`, `context`, `tool`, `session`, `result` (post-check) and variables bound by `any`/`all`".to_string()),
                );
                return None;
            }
        };
        Some(TExpr {
            kind: TExprKind::Fact {
                root,
                path: Vec::new(),
            },
            ty,
            span,
        })
    }

    fn field(&mut self, base: &Expr, field: &Ident, span: Span) -> Checked {
        let base = self.expr(base)?;
        if base.ty == Ty::Url {
            return self.url_part(base, field, span);
        }
        if base.ty == Ty::Path {
            return self.path_part(base, field, span);
        }
        let base = self.required(base)?;
        let name = field.name.as_str();
        let ty = match &base.ty {
            Ty::Json => Ty::Json,
            Ty::Record(record) => match record.get(name) {
                Some(ty) => ty.clone(),
                None => {
                    let record = record.clone();
                    return self.unknown_field(&base, &record, field);
                }
            },
            other => {
                let other = other.clone();
                return self.mismatch(base.span, &format!("a value with fields (to read `.{name}`)"), &other, "only records, `args`, `agent`, `context`, `result` and JSON values have fields");
            }
        };
        let kind = match base.kind {
            TExprKind::Fact { root, mut path } => {
                path.push(name.into());
                TExprKind::Fact { root, path }
            }
            other => TExprKind::Member(
                Box::new(TExpr {
                    kind: other,
                    ty: base.ty,
                    span: base.span,
                }),
                name.into(),
            ),
        };
        Some(TExpr { kind, ty, span })
    }

    fn unknown_field(&mut self, base: &TExpr, record: &Record, field: &Ident) -> Checked {
        let name = &field.name;
        let (owner, mut help) = match &base.kind {
            TExprKind::Fact {
                root: Root::Context,
                path,
            } if path.is_empty() => (
                "context".to_string(),
                format!("declare it: `context {{ {name}: string }}`"),
            ),
            TExprKind::Fact {
                root: Root::Args,
                path,
            } if path.is_empty() => {
                let missing = match &self.args {
                    ArgsShape::Known { missing, .. } => missing.get(name).cloned(),
                    ArgsShape::Dynamic => None,
                };
                match missing {
                    Some(tool) => (
                        "every tool of this rule".to_string(),
                        format!(
                            "tool `{tool}` has no field `{name}`; split the rule per tool, or select only the tools that have it"
                        ),
                    ),
                    None => (
                        "the tool's arguments".to_string(),
                        "check the tool declaration".to_string(),
                    ),
                }
            }
            TExprKind::Fact { root, path } if path.is_empty() => {
                (format!("`{}`", root.name()), String::new())
            }
            _ => ("this record".to_string(), String::new()),
        };
        if let Some(suggestion) = did_you_mean(name, record.names()) {
            help = format!("did you mean `{suggestion}`?");
        } else if help.is_empty() {
            let names: Vec<String> = record.names().map(|n| format!("`{n}`")).collect();
            help = if names.is_empty() {
                "it has no fields".to_string()
            } else {
                format!("its fields are {}", names.join(", "))
            };
        }
        self.error(
            Code::UnknownField,
            field.span,
            format!("no field `{name}` in {owner}"),
            "unknown field",
            help,
        );
        None
    }

    fn url_part(&mut self, base: TExpr, field: &Ident, span: Span) -> Checked {
        let (builtin, ty) = match field.name.as_str() {
            "scheme" => (Builtin::UrlScheme, Ty::Str),
            "host" => (Builtin::UrlHost, Ty::Str),
            "port" => (Builtin::UrlPort, Ty::Int),
            "path" => (Builtin::UrlPath, Ty::Str),
            "query" => (Builtin::UrlQuery, Ty::Str),
            "user" => (Builtin::UrlUser, Ty::Str),
            other => {
                let suggestion =
                    did_you_mean(other, ["scheme", "host", "port", "path", "query", "user"]);
                self.error(
                    Code::UnknownField,
                    field.span,
                    format!("a url has no part `{other}`"),
                    "unknown part",
                    help_with_suggestion(
                        suggestion,
                        "a url has `scheme`, `user`, `host`, `port`, `path` and `query`"
                            .to_string(),
                    ),
                );
                return None;
            }
        };
        let source = TExpr {
            kind: base.kind,
            ty: Ty::Str,
            span: base.span,
        };
        Some(TExpr {
            kind: TExprKind::Builtin {
                builtin,
                args: vec![source],
            },
            ty,
            span,
        })
    }

    fn path_part(&mut self, base: TExpr, field: &Ident, span: Span) -> Checked {
        let (builtin, ty) = match field.name.as_str() {
            "name" => (Builtin::PathName, Ty::Str),
            "extension" => (Builtin::PathExtension, Ty::Str),
            "parent" => (Builtin::PathParent, Ty::Path),
            other => {
                let suggestion = did_you_mean(other, ["name", "extension", "parent"]);
                self.error(
                    Code::UnknownField,
                    field.span,
                    format!("a path has no part `{other}`"),
                    "unknown part",
                    help_with_suggestion(
                        suggestion,
                        "a path has `name`, `extension` and `parent`, and the method `under(dir)`"
                            .to_string(),
                    ),
                );
                return None;
            }
        };
        Some(TExpr {
            kind: TExprKind::Builtin {
                builtin,
                args: vec![base],
            },
            ty,
            span,
        })
    }

    fn index(&mut self, base: &Expr, index: &Expr, span: Span) -> Checked {
        let base = self.expr(base)?;
        let base = self.required(base)?;
        let index = self.expr(index)?;
        let mut index = self.required(index)?;
        let ty = match &base.ty {
            Ty::List(element) => {
                index = self.expect(index, &Ty::Int, "lists are indexed by integers from 0")?;
                element.as_ref().clone().optional()
            }
            Ty::Json => Ty::Json,
            other => {
                let other = other.clone();
                return self.mismatch(
                    base.span,
                    "a list",
                    &other,
                    "only lists and JSON values can be indexed",
                );
            }
        };
        Some(TExpr {
            kind: TExprKind::Index(Box::new(base), Box::new(index)),
            ty,
            span,
        })
    }

    fn method(&mut self, receiver: &Expr, method: &Ident, args: &[Expr], span: Span) -> Checked {
        let receiver = self.expr(receiver)?;
        let receiver = self.required(receiver)?;
        let name = method.name.as_str();
        let ty = receiver.ty.clone();
        let stringy = ty.is_stringy();
        let (builtin, params, result): (Builtin, Vec<Ty>, Ty) = match (name, &ty) {
            ("starts_with", _) if stringy => (Builtin::StartsWith, vec![Ty::Str], Ty::Bool),
            ("ends_with", _) if stringy => (Builtin::EndsWith, vec![Ty::Str], Ty::Bool),
            ("contains", Ty::List(element)) => {
                (Builtin::ListContains, vec![(**element).clone()], Ty::Bool)
            }
            ("contains", _) if stringy => (Builtin::Contains, vec![Ty::Str], Ty::Bool),
            ("lower", _) if stringy => (Builtin::Lower, vec![], Ty::Str),
            ("upper", _) if stringy => (Builtin::Upper, vec![], Ty::Str),
            ("trim", _) if stringy => (Builtin::Trim, vec![], Ty::Str),
            ("under", Ty::Path | Ty::Json) => (Builtin::Under, vec![Ty::Path], Ty::Bool),
            _ => {
                let methods: &[&str] = match &ty {
                    Ty::Path => &[
                        "under",
                        "name",
                        "extension",
                        "parent",
                        "starts_with",
                        "ends_with",
                        "contains",
                        "lower",
                        "upper",
                        "trim",
                    ],
                    Ty::List(_) => &["contains"],
                    _ if stringy => &[
                        "starts_with",
                        "ends_with",
                        "contains",
                        "lower",
                        "upper",
                        "trim",
                    ],
                    _ => &[],
                };
                let help = match did_you_mean(name, methods.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None if methods.is_empty() => format!("values of type `{ty}` have no methods"),
                    None if ty == Ty::Str
                        && ["under", "name", "extension", "parent"].contains(&name) =>
                    {
                        format!("`{name}` is a path method: write `path(...).{name}(...)`")
                    }
                    None => format!(
                        "the methods of `{ty}` are {}",
                        methods
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                self.error(
                    Code::UnknownFunction,
                    method.span,
                    format!("no method `{name}` on `{ty}`"),
                    "unknown method",
                    help,
                );
                return None;
            }
        };
        let mut checked = vec![receiver];
        checked.extend(self.arguments(name, &params, args, span)?);
        if builtin == Builtin::Under
            && let Some(dir) = checked.pop()
        {
            let dir_span = dir.span;
            checked.push(normalized(dir, dir_span));
        }
        Some(TExpr {
            kind: TExprKind::Builtin {
                builtin,
                args: checked,
            },
            ty: result,
            span,
        })
    }

    fn arguments(
        &mut self,
        name: &str,
        params: &[Ty],
        args: &[Expr],
        span: Span,
    ) -> Option<Vec<TExpr>> {
        if params.len() != args.len() {
            self.error(
                Code::WrongArity,
                span,
                format!(
                    "`{name}` takes {} argument{}, found {}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
                format!(
                    "call it as `{name}({})`",
                    params
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return None;
        }
        let mut out = Vec::new();
        for (param, arg) in params.iter().zip(args) {
            let arg = self.expr(arg)?;
            out.push(self.expect(arg, param, &format!("`{name}` takes `{param}` here"))?);
        }
        Some(out)
    }

    /// A builtin of a string and an optional base string (`path`, `shell`).
    fn text_with_base(
        &mut self,
        name: &str,
        builtin: Builtin,
        ty: Ty,
        args: &[Expr],
        span: Span,
    ) -> Checked {
        // `shell` also takes the home directory that `~` and `$HOME` name.
        // `shell`'s directories may be optional: a missing one is as if it were left out, so a
        // set can pass the host's context when it has one and share the chain's parse of the line.
        let params = match (builtin, args.len()) {
            (Builtin::Shell, 3) => vec![Ty::Str, Ty::Str.optional(), Ty::Str.optional()],
            (Builtin::Shell, 2) => vec![Ty::Str, Ty::Str.optional()],
            (_, 2) => vec![Ty::Str, Ty::Str],
            _ => vec![Ty::Str],
        };
        let checked = self.arguments(name, &params, args, span)?;
        Some(TExpr {
            kind: TExprKind::Builtin {
                builtin,
                args: checked,
            },
            ty,
            span,
        })
    }

    fn call(&mut self, function: &Ident, args: &[Expr], span: Span) -> Checked {
        let name = function.name.as_str();
        match name {
            // `path(x, base)` resolves a relative `x` against `base` before normalizing.
            "path" => self.text_with_base(name, Builtin::Path, Ty::Path, args, span),
            // `shell(command, cwd, home)` resolves relative operands against `cwd`, and `~` and
            // `$HOME` against `home`.
            "shell" => {
                let parts = Ty::List(Arc::new(Ty::Record(command_record())));
                self.text_with_base(name, Builtin::Shell, parts, args, span)
            }
            "url" => {
                let mut checked = self.arguments(name, &[Ty::Str], args, span)?;
                let arg = checked.pop()?;
                Some(TExpr {
                    kind: arg.kind,
                    ty: Ty::Url,
                    span,
                })
            }
            "len" => {
                let [arg] = args else {
                    let _ = self.arguments(name, &[Ty::Json], args, span);
                    return None;
                };
                let arg = self.expr(arg)?;
                let arg = self.required(arg)?;
                if !(arg.ty.is_stringy() || matches!(arg.ty, Ty::List(_))) {
                    let ty = arg.ty.clone();
                    return self.mismatch(
                        arg.span,
                        "a string or a list",
                        &ty,
                        "`len` counts the characters of a string or the elements of a list",
                    );
                }
                Some(TExpr {
                    kind: TExprKind::Builtin {
                        builtin: Builtin::Len,
                        args: vec![arg],
                    },
                    ty: Ty::Int,
                    span,
                })
            }
            "string" => {
                let checked = self.arguments(name, &[Ty::Json], args, span)?;
                let checked: Option<Vec<TExpr>> =
                    checked.into_iter().map(|a| self.required(a)).collect();
                Some(TExpr {
                    kind: TExprKind::Builtin {
                        builtin: Builtin::ToString,
                        args: checked?,
                    },
                    ty: Ty::Str,
                    span,
                })
            }
            "entropy" => {
                let checked = self.arguments(name, &[Ty::Str], args, span)?;
                let checked: Option<Vec<TExpr>> =
                    checked.into_iter().map(|a| self.required(a)).collect();
                Some(TExpr {
                    kind: TExprKind::Builtin {
                        builtin: Builtin::Entropy,
                        args: checked?,
                    },
                    ty: Ty::Float,
                    span,
                })
            }
            "redact" => {
                let checked = self.arguments(name, &[Ty::Str, Ty::Str, Ty::Str], args, span)?;
                let pattern = checked.get(1)?;
                let TExprKind::Const(Const::Str(text)) = &pattern.kind else {
                    self.error(
                        Code::InvalidRegex,
                        pattern.span,
                        "the pattern of `redact` must be a string literal".into(),
                        "not a literal",
                        "write the regex as a raw string, for example r\"AKIA[0-9A-Z]{16}\"".into(),
                    );
                    return None;
                };
                self.validate_regex(text, pattern.span)?;
                Some(TExpr {
                    kind: TExprKind::Builtin {
                        builtin: Builtin::Redact,
                        args: checked,
                    },
                    ty: Ty::Str,
                    span,
                })
            }
            _ => {
                let suggestion = did_you_mean(
                    name,
                    [
                        "path", "url", "len", "redact", "string", "entropy", "shell", "any", "all",
                    ],
                );
                self.error(
                    Code::UnknownFunction,
                    function.span,
                    format!("unknown function `{name}`"),
                    "unknown function",
                    help_with_suggestion(suggestion, "the functions are `path`, `url`, `len`, `redact`, `string`, `entropy` and `shell`; `any` and `all` quantify over lists".to_string()),
                );
                None
            }
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr, span: Span) -> Checked {
        let make = |op, lhs, rhs, ty| {
            Some(TExpr {
                kind: TExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                ty,
                span,
            })
        };
        match op {
            BinOp::And | BinOp::Or => {
                let l = self.condition(lhs);
                let r = self.condition(rhs);
                make(op, l?, r?, Ty::Bool)
            }
            BinOp::Eq | BinOp::Ne => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                let (l, r) = (l?, r?);
                if !l.ty.comparable(&r.ty) {
                    let message = format!("`{}` and `{}` can never be equal", l.ty, r.ty);
                    self.error(
                        Code::TypeMismatch,
                        span,
                        message,
                        "compares different types",
                        "compare values of the same type".into(),
                    );
                    return None;
                }
                make(op, l, r, Ty::Bool)
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let l = self.expr(lhs).and_then(|l| self.required(l));
                let r = self.expr(rhs).and_then(|r| self.required(r));
                let (l, r) = (l?, r?);
                let ordered = (l.ty.is_numeric() && r.ty.is_numeric())
                    || (l.ty.is_stringy() && r.ty.is_stringy() && l.ty != Ty::Json);
                if !ordered {
                    let message = format!("`{}` cannot be ordered against `{}`", l.ty, r.ty);
                    self.error(
                        Code::TypeMismatch,
                        span,
                        message,
                        "not comparable",
                        "order numbers with numbers and strings with strings".into(),
                    );
                    return None;
                }
                make(op, l, r, Ty::Bool)
            }
            BinOp::In | BinOp::NotIn => {
                let l = self.expr(lhs).and_then(|l| self.required(l));
                let r = self.expr(rhs).and_then(|r| self.required(r));
                let (l, r) = (l?, r?);
                match &r.ty {
                    Ty::List(element) if element.comparable(&l.ty) => {}
                    Ty::Json => {}
                    other => {
                        let other = other.clone();
                        return self.mismatch(
                            r.span,
                            &format!("a list of `{}`", l.ty),
                            &other,
                            "`in` tests membership in a list; for text use `.contains(...)`",
                        );
                    }
                }
                self.label_test(&l, &r);
                let test = make(BinOp::In, l, r, Ty::Bool)?;
                if op == BinOp::NotIn {
                    Some(TExpr {
                        kind: TExprKind::Not(Box::new(test)),
                        ty: Ty::Bool,
                        span,
                    })
                } else {
                    Some(test)
                }
            }
            BinOp::Matches | BinOp::Glob => {
                let subject = self.expr(lhs).and_then(|l| self.required(l));
                let subject = subject.and_then(|s| self.expect(s, &Ty::Str, "patterns match text"));
                let pattern = match rhs.as_plain_str() {
                    Some(p) => p,
                    None => {
                        let (code, what) = if op == BinOp::Matches {
                            (Code::InvalidRegex, "regex")
                        } else {
                            (Code::InvalidGlob, "glob")
                        };
                        self.error(code, rhs.span, format!("the {what} after `{}` must be a string literal", op.symbol()), "not a literal", format!("write the {what} as a literal, for example r\"...\"; it is compiled once, when the policy loads"));
                        return None;
                    }
                };
                let mut hir = None;
                if op == BinOp::Matches {
                    hir = Some(self.validate_regex(pattern, rhs.span)?);
                } else if let Err(error) = globset::Glob::new(pattern) {
                    self.error(
                        Code::InvalidGlob,
                        rhs.span,
                        format!("invalid glob `{pattern}`: {}", error.kind()),
                        "invalid glob",
                        "globs use `*`, `?`, `**`, `[abc]` and `{a,b}`".into(),
                    );
                    return None;
                }
                let subject = Box::new(subject?);
                let kind = if let Some(hir) = hir {
                    TExprKind::Matches {
                        subject,
                        pattern: pattern.into(),
                        hir: Arc::new(hir),
                    }
                } else {
                    TExprKind::Glob {
                        subject,
                        pattern: pattern.into(),
                    }
                };
                Some(TExpr {
                    kind,
                    ty: Ty::Bool,
                    span,
                })
            }
            BinOp::Coalesce => {
                // The default may be optional itself (`a ?? b ?? "x"`): then so is the result,
                // and whatever reads it must give it a default in turn.
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                let (l, r) = (l?, r?);
                let joined = l.ty.required().join(r.ty.required());
                let Some(ty) = joined.map(|ty| {
                    if r.ty.is_optional() {
                        ty.optional()
                    } else {
                        ty
                    }
                }) else {
                    let expected = format!("`{}` like the value it defaults", l.ty.required());
                    return self.mismatch(
                        r.span,
                        &expected,
                        &r.ty,
                        "a default has the type of the optional value",
                    );
                };
                make(op, l, r, ty)
            }
            BinOp::Add => {
                let l = self.expr(lhs).and_then(|l| self.required(l));
                let r = self.expr(rhs).and_then(|r| self.required(r));
                let (l, r) = (l?, r?);
                let ty = match (&l.ty, &r.ty) {
                    (Ty::Int, Ty::Int) => Ty::Int,
                    (a, b)
                        if a.is_stringy()
                            && b.is_stringy()
                            && !(a == &Ty::Json && b == &Ty::Json) =>
                    {
                        Ty::Str
                    }
                    (a, b) if a.is_numeric() && b.is_numeric() => Ty::Float,
                    (a, b) => {
                        let message = format!("cannot add `{a}` and `{b}`");
                        self.error(
                            Code::TypeMismatch,
                            span,
                            message,
                            "incompatible operands",
                            "`+` adds numbers or joins strings; interpolate other values: \"{x}\""
                                .into(),
                        );
                        return None;
                    }
                };
                make(op, l, r, ty)
            }
        }
    }

    fn validate_regex(&mut self, pattern: &str, span: Span) -> Option<regex_syntax::hir::Hir> {
        match regex_syntax::Parser::new().parse(pattern) {
            Ok(hir) => Some(hir),
            Err(error) => {
                let detail = match &error {
                    regex_syntax::Error::Parse(e) => e.kind().to_string(),
                    regex_syntax::Error::Translate(e) => e.kind().to_string(),
                    _ => error.to_string(),
                };
                self.error(Code::InvalidRegex, span, format!("invalid regex: {detail}"), "does not compile", "regexes use the syntax of the Rust regex crate; write them as raw strings r\"...\" so backslashes need no escaping".into());
                None
            }
        }
    }
}

fn normalized(arg: TExpr, span: Span) -> TExpr {
    TExpr {
        kind: TExprKind::Builtin {
            builtin: Builtin::Path,
            args: vec![arg],
        },
        ty: Ty::Path,
        span,
    }
}

fn default_for(ty: &Ty) -> &'static str {
    match ty {
        Ty::Int => "0",
        Ty::Float => "0.0",
        Ty::Bool => "false",
        Ty::List(_) => "[]",
        _ => "\"\"",
    }
}
