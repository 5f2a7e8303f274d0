//! Walking the bash syntax tree for the simple commands a line runs, in the order it runs them.

use std::time::{Duration, Instant};

use tree_sitter::Node;

use super::command::{Redirect, SimpleCommand};
use super::follow;
use super::grammar::{NoTree, parse_until};
use super::normalize::{Cwd, normalize_command, resolve};
use super::tree::{
    endless_spawning, fields, flatten, misread_list, named_children, word_of_assignment,
};
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

/// Why a walk stopped at [`Limits::commands`].
pub(super) const TOO_MANY_COMMANDS: &str = "more simple commands than can be followed";

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
        last: None,
        code_depth: 0,
    };
    let mut cwd = dirs.cwd.map(|c| resolve(c, None, walker.home.as_deref()));
    walker.script(line, &mut cwd, 0);
    if let Some(reason) = walker.exhausted.take() {
        walker.out.push(SimpleCommand::unresolved(reason));
    }
    walker.out
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
    /// The index of the last command pushed for its own words (not one it runs in turn), so a
    /// pipe or a heredoc can feed it.
    pub(super) last: Option<usize>,
    /// Levels of interpreter code inside code being followed now.
    pub(super) code_depth: usize,
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
            let own = now.checked_add(self.limits.grammar_time).unwrap_or(now);
            crate::budget::deadline().map_or(own, |decision| own.min(decision))
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
        if text.contains('\r') {
            // A terminal shows what follows a carriage return over what comes before it.
            for command in self.out.iter_mut().skip(first) {
                command.mark_unresolved(
                    "the line holds a carriage return, which hides part of it when shown",
                );
            }
        }
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

    /// Whether `depth` is within the nesting limit and time is not up; past either, walking
    /// stops.
    pub(super) fn within(&mut self, depth: usize) -> bool {
        if depth > self.limits.depth {
            self.stop("commands nested too deeply to follow");
        }
        self.on_time()
    }

    /// Whether neither the decision's budget nor the grammar's time is up; past either,
    /// walking stops.
    pub(super) fn on_time(&mut self) -> bool {
        if crate::budget::passed() {
            self.stop(crate::budget::EXCEEDED);
        }
        if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            self.stop(&self.out_of_time());
        }
        self.exhausted.is_none()
    }

    /// Why the clock stopped the walk: the decision's budget, or the grammar's own.
    fn out_of_time(&self) -> String {
        if crate::budget::passed() {
            return crate::budget::EXCEEDED.to_string();
        }
        format!(
            "the command line takes the shell grammar longer than {} ms to read",
            self.limits.grammar_time.as_millis()
        )
    }

    /// One more command than the walker can still follow: a parse that reads that many has
    /// read enough to make the walk stop as it would on the whole line.
    pub(super) fn room(&self) -> usize {
        self.limits.commands.saturating_sub(self.out.len()) + 1
    }

    pub(super) fn stop(&mut self, reason: &str) {
        if self.exhausted.is_none() {
            self.exhausted = Some(reason.to_string());
        }
    }

    pub(super) fn push(&mut self, command: SimpleCommand) {
        if self.out.len() >= self.limits.commands {
            self.stop(TOO_MANY_COMMANDS);
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
                let mut feeder = None;
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
                    let start = own.clone();
                    self.last = None;
                    if heads.is_empty() {
                        self.statement(part, src, &mut own, depth);
                    } else {
                        self.redirected(part, src, &mut own, depth, true);
                    }
                    let reader = self.last;
                    if index > 0
                        && let Some(reader) = reader
                    {
                        follow::pipe(self, feeder, reader, &start, depth);
                    }
                    feeder = reader;
                }
            }
            "subshell" | "command_substitution" | "process_substitution" => {
                let mut inner = cwd.clone();
                for child in named_children(node) {
                    self.statement(child, src, &mut inner, depth + 1);
                }
            }
            "declaration_command" | "unset_command" => self.declaration(node, src, cwd, depth),
            "while_statement" => {
                let first = self.out.len();
                for child in named_children(node) {
                    self.statement(child, src, cwd, depth + 1);
                }
                // `while :; do bash & done`: a loop that never ends and starts a job each time
                // round spawns without end, whatever it runs.
                if endless_spawning(node, src) {
                    for command in self.out.iter_mut().skip(first) {
                        command.mark_unresolved(
                            "an endless loop starts a background job each time: a fork bomb",
                        );
                    }
                }
            }
            "function_definition" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| word(n, src).text)
                    .unwrap_or_default();
                let first = self.out.len();
                for child in named_children(node) {
                    self.statement(child, src, cwd, depth + 1);
                }
                // A function that calls itself spawns without end: `:(){ :|:& };:`, whatever
                // it is called.
                for command in self.out.iter_mut().skip(first) {
                    if !name.is_empty() && command.name == name {
                        command.mark_unresolved(format!(
                            "the function `{name}` calls itself: a fork bomb"
                        ));
                    }
                }
            }
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
                // `time (rm -rf ~)`: the grammar hangs a compound command on the reserved
                // word; it runs all the same.
                (
                    _,
                    "subshell"
                    | "compound_statement"
                    | "if_statement"
                    | "while_statement"
                    | "for_statement"
                    | "c_style_for_statement"
                    | "case_statement"
                    | "pipeline"
                    | "list"
                    | "command"
                    | "redirected_statement"
                    | "negated_command",
                ) => {
                    self.statement(child, src, &mut cwd.clone(), depth + 1);
                }
                _ => {}
            }
        }
        self.last = None;
        let start = cwd.clone();
        normalize_command(self, words, env, redirects.clone(), cwd, depth);
        if let Some(reader) = self.last {
            follow::feed_redirects(self, reader, &redirects, &start, depth);
            self.last = Some(reader);
        }
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
        self.last = None;
        // Files are opened before the command they are given to runs, so in its directory.
        let mut opened_in = cwd.clone();
        let mut redirects = Vec::new();
        let mut later_redirects = Vec::new();
        let mut tails = Vec::new();
        for (field, child) in fields(node) {
            match field {
                Some("body") if tail_only => {
                    let last = flatten(child).pop().unwrap_or(child);
                    (first, opened_in) = self.body(last, src, cwd, depth + 1);
                }
                Some("body") => (first, opened_in) = self.body(child, src, cwd, depth + 1),
                _ if child.kind() == "heredoc_redirect" => {
                    // The rest of the heredoc's line hangs on it: `cat <<EOF > f && bash f`,
                    // `cat <<EOF | sh`.
                    for (inner_field, inner) in fields(child) {
                        match (inner_field, inner.kind()) {
                            (Some("redirect"), _) => {
                                self.substitutions(inner, src, cwd, depth + 1);
                                later_redirects.extend(self.redirect(inner, src, &opened_in));
                            }
                            (_, "heredoc_body") => self.substitutions(inner, src, cwd, depth + 1),
                            (_, "pipeline") => tails.push((true, inner)),
                            (Some("right"), _) => tails.push((false, inner)),
                            _ => {}
                        }
                    }
                    redirects.extend(self.redirect(child, src, &opened_in));
                }
                _ if child.kind().ends_with("redirect") => {
                    self.substitutions(child, src, cwd, depth + 1);
                    redirects.extend(self.redirect(child, src, &opened_in));
                }
                _ => self.statement(child, src, cwd, depth + 1),
            }
        }
        redirects.extend(later_redirects);
        let reader = self.last.filter(|&reader| reader >= first);
        if self.out.len() == start {
            // `> file` alone still truncates the file.
            self.push(SimpleCommand {
                redirects,
                cwd: cwd.clone(),
                ..SimpleCommand::default()
            });
        } else {
            for command in self.out.iter_mut().skip(first) {
                command.redirects.extend(redirects.iter().cloned());
            }
            if let Some(reader) = reader {
                follow::feed_redirects(self, reader, &redirects, &opened_in, depth);
                self.last = Some(reader);
            }
        }
        for (piped, tail) in tails {
            if !piped {
                self.statement(tail, src, cwd, depth + 1);
                continue;
            }
            let mut own = cwd.clone();
            self.last = None;
            for inner in named_children(tail) {
                self.statement(inner, src, &mut own, depth + 1);
            }
            if let Some(next) = self.last {
                follow::pipe(self, reader, next, cwd, depth);
            }
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
                // The grammar may hang more words on a redirection (`>& /dev/tcp/h/1 0>&1`
                // reads `0` as a second destination): the first is the file.
                (Some("destination" | "argument"), _) if target.is_none() => {
                    target = Some(word(child, src));
                }
                // The grammar does not know `<>` (open for reading and writing): it reads `<`
                // and a destination `>`, then the file.
                (Some("destination" | "argument"), _)
                    if redirect.op == "<" && target.as_ref().is_some_and(|t| t.text == ">") =>
                {
                    redirect.op = "<>".to_string();
                    target = Some(word(child, src));
                }
                (Some("destination" | "argument"), _) => {}
                (_, "heredoc_start") => target = Some(Word::literal(source(child, src))),
                (_, "heredoc_body") => {
                    let body = source(child, src);
                    // `<<-` strips the tabs that indent each line.
                    redirect.body = Some(if redirect.op == "<<-" {
                        body.lines()
                            .map(|l| l.trim_start_matches('\t'))
                            .collect::<Vec<_>>()
                            .join("\n")
                    } else {
                        body.to_string()
                    });
                }
                (_, "heredoc_end" | "heredoc_content") => {}
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
        let piped = kind == "pipeline";
        // A redirection after a pipeline (`curl x | bash > out`) wraps the whole pipeline in the
        // grammar: its parts still feed each other, as in a pipeline without one.
        let mut feeder = None;
        for (index, part) in parts.iter().enumerate() {
            let mut own = cwd.clone();
            let start = own.clone();
            let cwd = if piped { &mut own } else { &mut *cwd };
            if piped {
                self.last = None;
            }
            if index + 1 == parts.len() {
                from = self.body(*part, src, cwd, depth);
            } else {
                self.statement(*part, src, cwd, depth);
            }
            if piped {
                let reader = self.last;
                if index > 0
                    && let Some(reader) = reader
                {
                    follow::pipe(self, feeder, reader, &start, depth);
                }
                feeder = reader;
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
