//! `sluice lsp`: a language server over stdio — diagnostics as you type, hover, go to definition,
//! completion, formatting, and quick fixes for "did you mean" diagnostics.

mod analysis;
mod position;

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::str::FromStr;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CompletionItem, CompletionItemKind, CompletionOptions,
    CompletionParams, DiagnosticRelatedInformation, DiagnosticSeverity,
    DidChangeTextDocumentParams, DidOpenTextDocumentParams, DocumentFormattingParams,
    GotoDefinitionParams, Hover, HoverContents, HoverParams, HoverProviderCapability, Location,
    MarkupContent, MarkupKind, NumberOrString, OneOf, PublishDiagnosticsParams, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextEdit, Uri, WorkspaceEdit,
};
use serde_json::Value as Json;
use sluice_compiler::check::Ty;
use sluice_compiler::db::Database;
use sluice_compiler::load::{Analysis, OpenTexts};

use super::CliError;
use analysis::{builtin_doc, builtin_names, keywords, root_record, word_at};

pub fn run() -> Result<ExitCode, CliError> {
    let (connection, io_threads) = Connection::stdio();
    let capabilities = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    connection
        .initialize(capabilities)
        .map_err(|e| format!("the client did not initialize: {e}"))?;
    let mut server = Server {
        connection: &connection,
        db: Database::default(),
        sets: OpenTexts::default(),
        documents: BTreeMap::new(),
    };
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection
                    .handle_shutdown(&request)
                    .map_err(|e| e.to_string())?
                {
                    break;
                }
                let response = server.request(request);
                server.send(Message::Response(response));
            }
            Message::Notification(notification) => server.notify(notification),
            Message::Response(_) => {}
        }
    }
    drop(server);
    drop(connection);
    io_threads.join().map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into()]),
            ..CompletionOptions::default()
        }),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// An open document: its file path, the editor's text, and its set as last compiled.
struct Document {
    path: String,
    text: String,
    compiled: Analysis,
}

struct Server<'c> {
    connection: &'c Connection,
    db: Database,
    /// The documents' sets, kept so that an edit recomputes only what it changed.
    sets: OpenTexts,
    documents: BTreeMap<String, Document>,
}

impl Server<'_> {
    fn send(&self, message: Message) {
        // A client that has gone away cannot be told anything; the loop ends when it closes.
        let _ = self.connection.sender.send(message);
    }

    fn notify(&mut self, notification: Notification) {
        match notification.method.as_str() {
            "textDocument/didOpen" => {
                if let Ok(params) =
                    serde_json::from_value::<DidOpenTextDocumentParams>(notification.params)
                {
                    let document = params.text_document;
                    self.update(document.uri, document.text);
                }
            }
            "textDocument/didChange" => {
                if let Ok(params) =
                    serde_json::from_value::<DidChangeTextDocumentParams>(notification.params)
                    && let Some(change) = params.content_changes.into_iter().last()
                {
                    self.update(params.text_document.uri, change.text);
                }
            }
            "textDocument/didClose" => {
                if let Some(uri) = notification.params.pointer("/textDocument/uri")
                    && let Some(uri) = uri.as_str()
                {
                    self.documents.remove(uri);
                }
            }
            _ => {}
        }
    }

    /// Recompiles the document's set and publishes its diagnostics.
    fn update(&mut self, uri: Uri, text: String) {
        let Some(path) = uri_path(&uri) else {
            return;
        };
        let open: Vec<(String, String)> = self
            .documents
            .values()
            .map(|d| (d.path.clone(), d.text.clone()))
            .collect();
        let compiled = analysis::compile(&mut self.db, &mut self.sets, &path, &text, &open);
        let diagnostics = compiled
            .diagnostics
            .iter()
            .filter(|d| d.primary.file == path)
            .map(|d| lsp_diagnostic(d, &compiled))
            .collect();
        let params = PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: None,
        };
        self.send(Message::Notification(Notification::new(
            "textDocument/publishDiagnostics".into(),
            params,
        )));
        self.documents.insert(
            uri.as_str().to_string(),
            Document {
                path,
                text,
                compiled,
            },
        );
    }

    fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            "textDocument/hover" => parse(request).map(|p| self.hover(p)),
            "textDocument/definition" => parse(request).map(|p| self.definition(p)),
            "textDocument/completion" => parse(request).map(|p| self.completion(p)),
            "textDocument/formatting" => parse(request).map(|p| self.formatting(p)),
            "textDocument/codeAction" => parse(request).map(|p| self.code_actions(p)),
            other => {
                return Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    format!("`{other}` is not supported"),
                );
            }
        };
        match result {
            Ok(value) => Response::new_ok(id, value),
            Err(message) => Response::new_err(id, ErrorCode::InvalidParams as i32, message),
        }
    }

    fn document(&self, uri: &Uri) -> Option<&Document> {
        self.documents.get(uri.as_str())
    }

    fn hover(&self, params: HoverParams) -> Json {
        let at = params.text_document_position_params;
        let Some(document) = self.document(&at.text_document.uri) else {
            return Json::Null;
        };
        let offset = position::offset(&document.text, at.position);
        // Over a diagnostic, the hover explains its code (see `code_explanation`).
        let explained: Vec<(usize, usize, String)> = document
            .compiled
            .diagnostics
            .iter()
            .filter(|d| d.primary.file == document.path)
            .filter(|d| {
                (d.primary.span.start as usize..=d.primary.span.end as usize).contains(&offset)
            })
            .map(|d| {
                let span = d.primary.span;
                (
                    span.start as usize,
                    span.end as usize,
                    analysis::code_explanation(d),
                )
            })
            .collect();
        let word = word_at(&document.text, offset).and_then(|(start, word)| {
            Some((start, start + word.len(), describe(document, word, offset)?))
        });
        let (start, end) = match (explained.first(), &word) {
            (_, Some((start, end, _))) => (*start, *end),
            (Some((start, end, _)), None) => (*start, *end),
            (None, None) => return Json::Null,
        };
        let mut parts: Vec<String> = word.into_iter().map(|(_, _, text)| text).collect();
        parts.extend(explained.into_iter().map(|(_, _, text)| text));
        let hover = Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: parts.join("\n\n---\n\n"),
            }),
            range: Some(position::range(&document.text, start, end)),
        };
        serde_json::to_value(hover).unwrap_or(Json::Null)
    }

    fn definition(&self, params: GotoDefinitionParams) -> Json {
        let at = params.text_document_position_params;
        let Some(document) = self.document(&at.text_document.uri) else {
            return Json::Null;
        };
        let offset = position::offset(&document.text, at.position);
        let Some((_, word)) = word_at(&document.text, offset) else {
            return Json::Null;
        };
        let name = word.rsplit('.').next().unwrap_or(word);
        let checked = &document.compiled.checked;
        let target = match checked.decls.tools.get(name) {
            Some(tool) => Some((tool.file.clone(), tool.span)),
            None => checked
                .rules
                .iter()
                .find(|placed| placed.rule.name == name)
                .map(|placed| {
                    (
                        placed.rule.file.clone(),
                        placed.place(placed.rule.name_span),
                    )
                }),
        };
        let Some((file, span)) = target else {
            return Json::Null;
        };
        let Some(uri) = path_uri(&file) else {
            return Json::Null;
        };
        let text = document.compiled.sources.get(&file).unwrap_or("");
        let location = Location::new(
            uri,
            position::range(text, span.start as usize, span.end as usize),
        );
        serde_json::to_value(location).unwrap_or(Json::Null)
    }

    fn completion(&self, params: CompletionParams) -> Json {
        let at = params.text_document_position;
        let Some(document) = self.document(&at.text_document.uri) else {
            return Json::Null;
        };
        let offset = position::offset(&document.text, at.position);
        let before = document.text.get(..offset).unwrap_or("");
        let token_start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |i| i + 1);
        let token = before.get(token_start..).unwrap_or("");
        let checked = &document.compiled.checked;
        let item = |label: &str, kind, detail: Option<String>| CompletionItem {
            label: label.to_string(),
            kind: Some(kind),
            detail,
            ..CompletionItem::default()
        };
        let items: Vec<CompletionItem> = match token.split_once('.') {
            Some((root, rest)) if !rest.contains('.') => {
                match root_record(root, &document.text, offset, checked) {
                    Some((_, record)) => record
                        .fields
                        .iter()
                        .map(|(name, ty)| {
                            item(name, CompletionItemKind::FIELD, Some(ty.to_string()))
                        })
                        .collect(),
                    None => builtin_names()
                        .into_iter()
                        .map(|name| item(name, CompletionItemKind::METHOD, builtin_doc(name)))
                        .collect(),
                }
            }
            Some(_) => builtin_names()
                .into_iter()
                .map(|name| item(name, CompletionItemKind::METHOD, builtin_doc(name)))
                .collect(),
            None => {
                let mut items: Vec<CompletionItem> = ["args", "agent", "context", "result", "tool"]
                    .iter()
                    .map(|root| item(root, CompletionItemKind::VARIABLE, None))
                    .collect();
                items.extend(
                    builtin_names()
                        .into_iter()
                        .map(|name| item(name, CompletionItemKind::FUNCTION, builtin_doc(name))),
                );
                items.extend(keywords().map(|k| item(k, CompletionItemKind::KEYWORD, None)));
                items.extend(
                    checked
                        .decls
                        .tools
                        .keys()
                        .map(|tool| item(tool, CompletionItemKind::CLASS, Some("tool".into()))),
                );
                items
            }
        };
        serde_json::to_value(items).unwrap_or(Json::Null)
    }

    fn formatting(&self, params: DocumentFormattingParams) -> Json {
        let Some(document) = self.document(&params.text_document.uri) else {
            return Json::Null;
        };
        let Ok(formatted) = sluice_compiler::format::format_source(&document.path, &document.text)
        else {
            return Json::Null;
        };
        let edit = TextEdit::new(
            position::range(&document.text, 0, document.text.len()),
            formatted,
        );
        serde_json::to_value(vec![edit]).unwrap_or(Json::Null)
    }

    fn code_actions(&self, params: CodeActionParams) -> Json {
        let uri = params.text_document.uri;
        let actions: Vec<CodeActionOrCommand> = params
            .context
            .diagnostics
            .into_iter()
            .filter_map(|diagnostic| {
                let suggestion = suggestion(&diagnostic.message)?;
                let edit = TextEdit::new(diagnostic.range, suggestion.clone());
                Some(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("replace with `{suggestion}`"),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic]),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                }))
            })
            .collect();
        serde_json::to_value(actions).unwrap_or(Json::Null)
    }
}

fn parse<P: serde::de::DeserializeOwned>(request: Request) -> Result<P, String> {
    serde_json::from_value(request.params).map_err(|e| format!("invalid parameters: {e}"))
}

/// The replacement a "did you mean" diagnostic suggests.
fn suggestion(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("did you mean `")?;
    let (word, _) = rest.split_once("`?")?;
    Some(word.to_string())
}

/// Hover text for the word under the cursor.
fn describe(document: &Document, word: &str, offset: usize) -> Option<String> {
    let checked = &document.compiled.checked;
    let mut parts = word.split('.');
    let root = parts.next()?;
    if let Some((whose, record)) = root_record(root, &document.text, offset, checked) {
        let fields: Vec<&str> = parts.collect();
        let Some((first, rest)) = fields.split_first() else {
            let list: Vec<String> = record
                .fields
                .iter()
                .map(|(name, ty)| format!("{name}: {ty}"))
                .collect();
            return Some(format!("`{root}`: {whose}\n\n`{{ {} }}`", list.join(", ")));
        };
        let mut ty = record.get(first)?.clone();
        for field in rest {
            match ty.required() {
                Ty::Record(inner) => ty = inner.get(field)?.clone(),
                _ => return builtin_doc(field),
            }
        }
        return Some(format!("`{word}`: `{ty}` — a field of {whose}"));
    }
    let last = word.rsplit('.').next().unwrap_or(word);
    if let Some(doc) = builtin_doc(last) {
        return Some(doc);
    }
    if let Some(tool) = checked.decls.tools.get(last) {
        let fields: Vec<String> = tool
            .args
            .fields
            .iter()
            .map(|(name, ty)| format!("{name}: {ty}"))
            .collect();
        return Some(format!(
            "tool `{}` {{ {} }}\n\ndeclared in `{}`",
            tool.name,
            fields.join(", "),
            tool.file
        ));
    }
    let rule = &checked
        .rules
        .iter()
        .find(|placed| placed.rule.name == last)?
        .rule;
    Some(format!(
        "{} `{}` in `{}`",
        rule.kind.keyword(),
        rule.name,
        rule.file
    ))
}

fn lsp_diagnostic(
    diagnostic: &sluice_compiler::diagnostics::Diagnostic,
    compiled: &Analysis,
) -> lsp_types::Diagnostic {
    let text = compiled.sources.get(&diagnostic.primary.file).unwrap_or("");
    let span = diagnostic.primary.span;
    let message = if diagnostic.help.is_empty() {
        diagnostic.message.clone()
    } else {
        format!("{}\nhelp: {}", diagnostic.message, diagnostic.help)
    };
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .secondary
        .iter()
        .filter_map(|label| {
            let text = compiled.sources.get(&label.file)?;
            Some(DiagnosticRelatedInformation {
                location: Location::new(
                    path_uri(&label.file)?,
                    position::range(text, label.span.start as usize, label.span.end as usize),
                ),
                message: label.text.clone().unwrap_or_default(),
            })
        })
        .collect();
    lsp_types::Diagnostic {
        range: position::range(text, span.start as usize, span.end as usize),
        severity: Some(if analysis::is_warning(diagnostic) {
            DiagnosticSeverity::WARNING
        } else {
            DiagnosticSeverity::ERROR
        }),
        code: Some(NumberOrString::String(diagnostic.code.short().to_string())),
        source: Some("sluice".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp_types::Diagnostic::default()
    }
}

fn uri_path(uri: &Uri) -> Option<String> {
    let url = url::Url::parse(uri.as_str()).ok()?;
    url.to_file_path()
        .ok()
        .map(|path| path.display().to_string())
}

fn path_uri(path: &str) -> Option<Uri> {
    let absolute = std::path::absolute(path).ok()?;
    let url = url::Url::from_file_path(absolute).ok()?;
    Uri::from_str(url.as_str()).ok()
}
