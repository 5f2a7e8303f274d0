//! Walking the bash syntax tree for the simple commands a line runs, in the order it runs them.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

use super::command::{Redirect, SimpleCommand};
use super::normalize::{Cwd, normalize_command, resolve};
use super::word::{Word, source, word};

/// Bounds on hostile input: past them, the rest of the line is one unresolved command.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Nesting of subshells, groups, substitutions and `bash -c` scripts.
    pub depth: usize,
    /// Simple commands in one line.
    pub commands: usize,
    /// Bytes in one line: a longer line is one unresolved command, not parsed at all.
    pub bytes: usize,
    /// Time the bash grammar may spend on one line, its `bash -c` scripts included. The
    /// grammar's error recovery is super-linear on some hostile lines (a pipeline ending in `|`
    /// thousands of times); past the budget the parse stops and the rest of the line is one
    /// unresolved command. Plain lines take the fast path and never start the clock.
    pub grammar_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            depth: 32,
            commands: 512,
            bytes: 1 << 20,
            grammar_time: Duration::from_millis(GRAMMAR_MILLIS),
        }
    }
}

/// The default [`Limits::grammar_time`], in milliseconds (lang-spec/evaluation.md documents it).
pub const GRAMMAR_MILLIS: u64 = 20;

/// Where a line runs: its working directory and the home directory that `~` and `$HOME` name,
/// each as far as it is known.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dirs<'a> {
    pub cwd: Option<&'a str>,
    pub home: Option<&'a str>,
}

/// The simple commands `line` runs, with paths resolved against `cwd` when it is known.
pub fn parse_command(line: &str, cwd: Option<&str>) -> Vec<SimpleCommand> {
    parse_command_in(line, Dirs { cwd, home: None }, Limits::default())
}

/// [`parse_command`] with explicit limits.
pub fn parse_command_with(line: &str, cwd: Option<&str>, limits: Limits) -> Vec<SimpleCommand> {
    parse_command_in(line, Dirs { cwd, home: None }, limits)
}

/// The simple commands `line` runs in `dirs`: relative paths joined to the working directory,
/// `~` and `$HOME` to the home directory.
pub fn parse_command_in(line: &str, dirs: Dirs<'_>, limits: Limits) -> Vec<SimpleCommand> {
    walk(line, dirs, limits, true)
}

/// [`parse_command_with`] through the bash grammar alone, without the fast path: the reference
/// the fast path is tested against. Neither side of such a test may run out of grammar time,
/// or a busy machine would make the two disagree: see [`untimed`].
#[cfg(test)]
pub(super) fn parse_with_grammar(line: &str, cwd: Option<&str>) -> Vec<SimpleCommand> {
    walk(line, Dirs { cwd, home: None }, untimed(), false)
}

/// The default limits with no grammar deadline, for tests that compare two parses.
#[cfg(test)]
pub(super) fn untimed() -> Limits {
    Limits {
        grammar_time: Duration::from_secs(600),
        ..Limits::default()
    }
}

fn walk(line: &str, dirs: Dirs<'_>, limits: Limits, fast: bool) -> Vec<SimpleCommand> {
    if line.len() > limits.bytes {
        return vec![SimpleCommand::unresolved(format!(
            "the command line is longer than {} bytes",
            limits.bytes
        ))];
    }
    let mut walker = Walker {
        limits,
        fast,
        out: Vec::new(),
        exhausted: None,
        deadline: None,
        home: dirs
            .home
            .map(|home| crate::interp::path::normalize(home, None)),
    };
    let mut cwd = dirs.cwd.map(|c| resolve(c, None, walker.home.as_deref()));
    walker.script(line, &mut cwd, 0);
    if let Some(reason) = walker.exhausted.take() {
        walker.out.push(SimpleCommand::unresolved(reason));
    }
    walker.out
}

thread_local! {
    /// One parser per thread: making one loads the grammar's tables.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn with_parser<T>(f: impl FnOnce(&mut Parser) -> Option<T>) -> Option<T> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        f(slot.as_mut()?)
    })
}

#[cfg(test)]
thread_local! {
    /// Steps of the tree's cursors and of the grammar's progress checks, for tests that hold
    /// the cost of a parse to the size of its line.
    pub(super) static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Why a script has no syntax tree.
enum NoTree {
    /// The parse ran past the deadline and was stopped.
    OutOfTime,
    /// The grammar could not be loaded.
    NoGrammar,
}

/// Parses `text` with the bash grammar, stopping at `deadline`. Tree-sitter asks whether to go
/// on every hundred or so steps of its parser, error recovery included.
fn parse_until(text: &str, deadline: Instant) -> Result<Tree, NoTree> {
    let mut out_of_time = false;
    let mut progress = |_: &ParseState| {
        #[cfg(test)]
        STEPS.with(|steps| steps.set(steps.get() + 100));
        if Instant::now() >= deadline {
            out_of_time = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    let tree = with_parser(|parser| {
        let options = ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(options),
        );
        if tree.is_none() {
            // A stopped parse would otherwise resume on the parser's next line.
            parser.reset();
        }
        tree
    });
    match tree {
        Some(tree) => Ok(tree),
        None if out_of_time => Err(NoTree::OutOfTime),
        None => Err(NoTree::NoGrammar),
    }
}

pub(super) struct Walker {
    limits: Limits,
    /// Whether plain lines take the hand-written fast path.
    fast: bool,
    pub(super) out: Vec<SimpleCommand>,
    /// Why walking stopped early, when a limit was reached.
    exhausted: Option<String>,
    /// When the grammar's time runs out: set by the first parse through the grammar.
    deadline: Option<Instant>,
    /// The home directory `~` and `$HOME` name, normalized, when the policy gives it.
    pub(super) home: Option<String>,
}

impl Walker {
    /// Parses a script (the line, or a `bash -c` string) and walks it.
    pub(super) fn script(&mut self, text: &str, cwd: &mut Cwd, depth: usize) {
        if !self.within(depth) {
            return;
        }
        if self.fast && super::fast::script(self, text, cwd, depth) {
            return;
        }
        let deadline = *self.deadline.get_or_insert_with(|| {
            let now = Instant::now();
            now.checked_add(self.limits.grammar_time).unwrap_or(now)
        });
        // A parse may re-enter through `bash -c`; the parser is free again by then.
        let tree = match parse_until(text, deadline) {
            Ok(tree) => tree,
            Err(NoTree::OutOfTime) => {
                self.stop(&self.out_of_time());
                return;
            }
            Err(NoTree::NoGrammar) => {
                self.push(SimpleCommand::unresolved(
                    "the shell grammar could not be loaded",
                ));
                return;
            }
        };
        let root = tree.root_node();
        let first = self.out.len();
        self.statement(root, text, cwd, depth);
        if root.has_error() {
            let reason = "the command line does not parse as a shell script";
            if self.out.len() == first {
                self.push(SimpleCommand::unresolved(reason));
            }
            for command in self.out.iter_mut().skip(first) {
                command.mark_unresolved(reason);
            }
        }
    }

    /// Whether `depth` is within the nesting limit and the grammar's time is not up; past
    /// either, walking stops.
    pub(super) fn within(&mut self, depth: usize) -> bool {
        if depth > self.limits.depth {
            self.stop("commands nested too deeply to follow");
        }
        if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            self.stop(&self.out_of_time());
        }
        self.exhausted.is_none()
    }

    fn out_of_time(&self) -> String {
        format!(
            "the command line takes the shell grammar longer than {} ms to read",
            self.limits.grammar_time.as_millis()
        )
    }

    fn stop(&mut self, reason: &str) {
        if self.exhausted.is_none() {
            self.exhausted = Some(reason.to_string());
        }
    }

    pub(super) fn push(&mut self, command: SimpleCommand) {
        if self.out.len() >= self.limits.commands {
            self.stop("more simple commands than can be followed");
            return;
        }
        self.out.push(command);
    }

    fn statement(&mut self, node: Node<'_>, src: &str, cwd: &mut Cwd, depth: usize) {
        if !self.within(depth) {
            return;
        }
        match node.kind() {
            "command" => self.command(node, src, cwd, depth),
            "redirected_statement" => self.redirected(node, src, cwd, depth, false),
            // `a && b || c` nests one level per operator: walked flat, so a long chain is not
            // deep.
            "list" => {
                for part in flatten(node) {
                    self.statement(part, src, cwd, depth);
                }
            }
            // Parts of a pipeline, subshells and substitutions run in their own shell: a `cd`
            // inside them does not move what follows.
            "pipeline" => {
                for (index, part) in flatten(node).into_iter().enumerate() {
                    // The grammar reads `a && b 2>&1 | c` as `(a && b 2>&1) | c`; the shell as
                    // `a && (b 2>&1 | c)`: `a` runs first, in this shell, and may `cd`.
                    let heads = if index == 0 {
                        misread_list(part)
                    } else {
                        Vec::new()
                    };
                    for head in &heads {
                        self.statement(*head, src, cwd, depth);
                    }
                    let mut own = cwd.clone();
                    if heads.is_empty() {
                        self.statement(part, src, &mut own, depth);
                    } else {
                        self.redirected(part, src, &mut own, depth, true);
                    }
                }
            }
            "subshell" | "command_substitution" | "process_substitution" => {
                let mut inner = cwd.clone();
                for child in named_children(node) {
                    self.statement(child, src, &mut inner, depth + 1);
                }
            }
            "declaration_command" | "unset_command" => self.declaration(node, src, cwd, depth),
            "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
            _ => {
                for child in named_children(node) {
                    self.statement(child, src, cwd, depth + 1);
                }
            }
        }
    }

    fn command(&mut self, node: Node<'_>, src: &str, cwd: &mut Cwd, depth: usize) {
        let mut words = Vec::new();
        let mut env = Vec::new();
        let mut redirects = Vec::new();
        for (field, child) in fields(node) {
            // Substitutions in a command's words run before it.
            self.substitutions(child, src, cwd, depth + 1);
            match (field, child.kind()) {
                (Some("name" | "argument"), _) => words.push(word(child, src)),
                (Some("redirect"), _) => redirects.extend(self.redirect(child, src, cwd)),
                (_, "variable_assignment") => env.push(word_of_assignment(child, src)),
                _ => {}
            }
        }
        normalize_command(self, words, env, redirects, cwd, depth);
    }

    /// `export A=1 B=2`, `declare -x A`, `unset A`: builtins that set or clear variables.
    fn declaration(&mut self, node: Node<'_>, src: &str, cwd: &mut Cwd, depth: usize) {
        let mut words = Vec::new();
        for (i, (_, child)) in fields(node).into_iter().enumerate() {
            self.substitutions(child, src, cwd, depth + 1);
            if child.is_named() {
                words.push(match child.kind() {
                    "variable_assignment" => word_of_assignment(child, src),
                    _ => word(child, src),
                });
            } else if i == 0 {
                words.push(Word::literal(source(child, src)));
            }
        }
        normalize_command(self, words, Vec::new(), Vec::new(), cwd, depth);
    }

    /// A statement with redirections: they apply to every command the statement runs (for a list
    /// or pipeline, to its last command).
    /// With `tail_only`, of a list body only the last part is walked (the others were, as the
    /// commands before a pipeline the grammar misread).
    fn redirected(
        &mut self,
        node: Node<'_>,
        src: &str,
        cwd: &mut Cwd,
        depth: usize,
        tail_only: bool,
    ) {
        let start = self.out.len();
        let mut first = start;
        // Files are opened before the command they are given to runs, so in its directory.
        let mut opened_in = cwd.clone();
        let mut redirects = Vec::new();
        for (field, child) in fields(node) {
            match field {
                Some("body") if tail_only => {
                    let last = flatten(child).pop().unwrap_or(child);
                    (first, opened_in) = self.body(last, src, cwd, depth + 1);
                }
                Some("body") => (first, opened_in) = self.body(child, src, cwd, depth + 1),
                _ if child.kind().ends_with("redirect") => {
                    self.substitutions(child, src, cwd, depth + 1);
                    redirects.extend(self.redirect(child, src, &opened_in));
                }
                _ => self.statement(child, src, cwd, depth + 1),
            }
        }
        if self.out.len() == start {
            // `> file` alone still truncates the file.
            self.push(SimpleCommand {
                redirects,
                cwd: cwd.clone(),
                ..SimpleCommand::default()
            });
            return;
        }
        for command in self.out.iter_mut().skip(first) {
            command.redirects.extend(redirects.iter().cloned());
        }
    }

    fn redirect(&mut self, node: Node<'_>, src: &str, cwd: &Cwd) -> Option<Redirect> {
        let mut redirect = Redirect::default();
        let mut target = None;
        for (field, child) in fields(node) {
            match (field, child.kind()) {
                (Some("descriptor"), _) | (_, "file_descriptor") if target.is_none() => {
                    redirect.fd = source(child, src).parse().ok();
                }
                (Some("destination" | "argument"), _) => target = Some(word(child, src)),
                (_, "heredoc_start") => target = Some(Word::literal(source(child, src))),
                (_, "heredoc_body" | "heredoc_end" | "heredoc_content") => {}
                (_, kind) if !child.is_named() && target.is_none() => {
                    redirect.op.push_str(kind);
                }
                (_, _) if target.is_none() => target = Some(word(child, src)),
                _ => {}
            }
        }
        let target = target.unwrap_or_default();
        // `2>&1` and `<&-` name a descriptor, not a file.
        let names_descriptor = (redirect.op.ends_with('&')
            && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit())))
            || redirect.op.ends_with("&-");
        if !names_descriptor {
            redirect.path = resolve(&target.text, cwd.as_deref(), self.home.as_deref());
        }
        redirect.target = target.text;
        Some(redirect)
    }

    /// Walks the body of a redirected statement, and says from which command on the
    /// redirections apply and in which directory that command starts. The grammar hangs
    /// `a && b > f` and `a | b > f` on the whole list or pipeline; the shell gives the
    /// redirection to the last command only.
    fn body(&mut self, node: Node<'_>, src: &str, cwd: &mut Cwd, depth: usize) -> (usize, Cwd) {
        let kind = node.kind();
        if !matches!(kind, "list" | "pipeline") || !self.within(depth) {
            let from = (self.out.len(), cwd.clone());
            self.statement(node, src, cwd, depth);
            return from;
        }
        let parts = flatten(node);
        let mut from = (self.out.len(), cwd.clone());
        for (index, part) in parts.iter().enumerate() {
            let mut own = cwd.clone();
            let cwd = if kind == "pipeline" {
                &mut own
            } else {
                &mut *cwd
            };
            if index + 1 == parts.len() {
                from = self.body(*part, src, cwd, depth);
            } else {
                self.statement(*part, src, cwd, depth);
            }
        }
        from
    }

    /// Walks a word (or any part of a command) for the commands its substitutions run.
    fn substitutions(&mut self, node: Node<'_>, src: &str, cwd: &Cwd, depth: usize) {
        if !self.within(depth) {
            return;
        }
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                self.statement(node, src, &mut cwd.clone(), depth + 1);
            }
            _ => {
                for child in named_children(node) {
                    self.substitutions(child, src, cwd, depth + 1);
                }
            }
        }
    }
}

/// The commands before the last of a `&&`/`||` list that the grammar put inside the first part
/// of a pipeline (`a && b 2>&1 | c` read as `(a && b 2>&1) | c`); empty when it did not.
fn misread_list(part: Node<'_>) -> Vec<Node<'_>> {
    if part.kind() != "redirected_statement" {
        return Vec::new();
    }
    match part.child_by_field_name("body") {
        Some(body) if body.kind() == "list" => {
            let mut parts = flatten(body);
            parts.pop();
            parts
        }
        _ => Vec::new(),
    }
}

/// `NAME=VALUE` with the value after quote removal.
fn word_of_assignment(node: Node<'_>, src: &str) -> Word {
    let name = node
        .child_by_field_name("name")
        .map_or("", |n| source(n, src));
    let value = node
        .child_by_field_name("value")
        .map(|v| word(v, src))
        .unwrap_or_default();
    Word {
        text: format!("{name}={}", value.text),
        dynamic: value.dynamic,
        glob: false,
    }
}

/// The operands of a chain of one operator (`list` or `pipeline` nodes nested in each other), in
/// order, found without recursion.
fn flatten(node: Node<'_>) -> Vec<Node<'_>> {
    let kind = node.kind();
    let mut parts = Vec::new();
    let mut stack = vec![node];
    while let Some(next) = stack.pop() {
        if next.kind() == kind {
            let children: Vec<Node<'_>> = named_children(next).collect();
            stack.extend(children.into_iter().rev());
        } else {
            parts.push(next);
        }
    }
    parts
}

/// A node's named children, in order.
pub(super) fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    fields(node)
        .into_iter()
        .filter_map(|(_, child)| child.is_named().then_some(child))
}

/// A node's children with their field names, in order, read in one pass of a cursor: fetching
/// a child by its index scans the children before it, so a loop over indices is quadratic in a
/// node's width, and a hostile line can make a node thousands of children wide.
pub(super) fn fields(node: Node<'_>) -> Vec<(Option<&str>, Node<'_>)> {
    let mut cursor = node.walk();
    let mut out = Vec::new();
    if cursor.goto_first_child() {
        loop {
            #[cfg(test)]
            STEPS.with(|steps| steps.set(steps.get() + 1));
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}
