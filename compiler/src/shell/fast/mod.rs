//! The fast path: plain command lines lexed and parsed by hand in one pass.
//!
//! Most lines an agent runs are plain — words, quotes, `$NAME`, simple `$(…)`, `&&`, `||`, `;`,
//! `&`, `|` and simple redirections — and the bash grammar's general parser costs far more than
//! they need. This path accepts exactly such lines and gives the walker the same commands, in
//! the same order, with the same working directories, that walking the bash syntax tree would.
//! Anything else (backquotes, backslashes, parentheses and braces outside `$(…)`/`${…}`, `#`,
//! `!`, newlines, keywords, declarations, heredocs) makes it decline before it emits anything,
//! and the line goes to the grammar. A property test checks that both paths agree on every line.

mod lex;

use super::command::Redirect;
use super::extract::Walker;
use super::follow;
use super::normalize::{Cwd, MAX_WORDS, normalize_command, resolve};
use super::word::Word;
use lex::{RESERVED, Token, lex};

/// Statements, each a `&&`/`||` list of pipelines of commands.
pub(super) type Statements = Vec<Vec<Vec<Command>>>;

/// A simple command: its assignments, words and redirections, and the scripts its `$(…)`
/// substitutions run first.
#[derive(Debug, Default)]
pub(super) struct Command {
    env: Vec<Word>,
    words: Vec<Word>,
    redirects: Vec<Redirect>,
    substitutions: Vec<Statements>,
}

/// Parses and walks `text` if it is plain; `false` (having emitted nothing) if it is not.
pub(in crate::shell) fn script(
    walker: &mut Walker,
    text: &str,
    cwd: &mut Cwd,
    depth: usize,
) -> bool {
    let mut reader = Reader::new(walker.room());
    let Some(statements) = reader.read(text) else {
        return false;
    };
    walk(walker, statements, cwd, depth);
    if let Some(reason) = reader.cut {
        walker.stop(reason);
    }
    true
}

/// As the grammar's tree is walked: statements and `&&`/`||` lists share the working
/// directory; each part of a pipeline has its own copy; a command with redirections sits one
/// level deeper.
fn walk(walker: &mut Walker, statements: Statements, cwd: &mut Cwd, depth: usize) {
    for list in statements {
        for pipeline in list {
            let single = pipeline.len() == 1;
            let mut feeder = None;
            for (index, command) in pipeline.into_iter().enumerate() {
                if !walker.on_time() {
                    return;
                }
                let depth = depth + 1 + usize::from(!command.redirects.is_empty());
                walker.last = None;
                if single {
                    emit(walker, command, cwd, depth);
                    continue;
                }
                let start = cwd.clone();
                emit(walker, command, &mut cwd.clone(), depth);
                let reader = walker.last;
                if index > 0
                    && let Some(reader) = reader
                {
                    follow::pipe(walker, feeder, reader, &start, depth);
                }
                feeder = reader;
            }
        }
    }
}

fn emit(walker: &mut Walker, mut command: Command, cwd: &mut Cwd, depth: usize) {
    // The redirections are counted over the substitutions too, as the grammar's walk does:
    // more than the shell would, never less.
    let first = walker.out.len();
    // Substitutions run before the command, each in a subshell of the directory it starts in.
    for substitution in std::mem::take(&mut command.substitutions) {
        walk(walker, substitution, &mut cwd.clone(), depth + 2);
    }
    // Files are resolved where the command runs, after the `cd`s before it.
    for redirect in &mut command.redirects {
        if !redirect.op.ends_with('&') {
            redirect.path = resolve(&redirect.target, cwd.as_deref(), walker.home.as_deref());
        }
    }
    normalize_command(walker, command.words, command.env, Vec::new(), cwd, depth);
    // The redirections apply to what the command runs in turn too (`bash -c 'x' > f`).
    for pushed in walker.out.iter_mut().skip(first) {
        pushed.redirects.extend(command.redirects.iter().cloned());
    }
}

/// Caps on what one line may hold, so a hostile line costs the commands the walker follows,
/// not its length: past a cap the parse stops, and the walk ends with the rest unresolved.
struct Reader {
    /// Commands still to read, its `$(…)` scripts' included.
    commands_left: usize,
    /// Why the parse stopped before the end of the line.
    cut: Option<&'static str>,
}

impl Reader {
    fn new(commands: usize) -> Self {
        Reader {
            commands_left: commands,
            cut: None,
        }
    }

    /// The statements of a plain script.
    fn read(&mut self, text: &str) -> Option<Statements> {
        self.parse(lex(text))
    }

    /// Statements of `&&`/`||` lists of pipelines of commands, or `None` for any line the grammar
    /// would read otherwise or not at all.
    fn parse(&mut self, tokens: lex::Lexer<'_>) -> Option<Statements> {
        let mut statements = Vec::new();
        let mut list: Vec<Vec<Command>> = Vec::new();
        let mut pipeline: Vec<Command> = Vec::new();
        let mut command = Command::default();
        for token in tokens {
            if self.cut.is_some() {
                break;
            }
            match token.ok()? {
                Token::Word(lexed) => {
                    if !command.redirects.is_empty() {
                        return None;
                    }
                    let mut word = lexed.word;
                    for inner in lexed.substitutions {
                        command.substitutions.push(self.read(&inner)?);
                    }
                    if command.words.is_empty() && lexed.assignable && is_assignment(&word) {
                        // The grammar reads an assignment's value as text, never as a glob.
                        word.glob = false;
                        command.env.push(word);
                        continue;
                    }
                    // The grammar reads a reserved word, a leading `-`, an `=` or a glob in command
                    // position otherwise.
                    if command.words.is_empty()
                        && (lexed.keyword
                            || RESERVED.contains(&word.text.as_str())
                            || word.text.starts_with('-')
                            || word.text.contains('=')
                            || word.glob)
                    {
                        return None;
                    }
                    // Words past the cap are not kept: the command is unresolved already.
                    if command.words.len() <= MAX_WORDS {
                        command.words.push(word);
                    }
                }
                Token::Redirect(redirect) => {
                    if command.words.is_empty() {
                        return None;
                    }
                    if command.redirects.len() >= MAX_WORDS {
                        self.cut = Some("the command has more redirections than can be followed");
                    }
                    command.redirects.push(redirect);
                }
                token @ (Token::Pipe | Token::And | Token::Or | Token::End) => {
                    if command.words.is_empty() {
                        return None;
                    }
                    pipeline.push(std::mem::take(&mut command));
                    self.commands_left = self.commands_left.saturating_sub(1);
                    if self.commands_left == 0 {
                        self.cut = Some(super::extract::TOO_MANY_COMMANDS);
                    }
                    if matches!(token, Token::Pipe) {
                        continue;
                    }
                    list.push(std::mem::take(&mut pipeline));
                    if matches!(token, Token::End) {
                        statements.push(std::mem::take(&mut list));
                    }
                }
            }
        }
        if self.cut.is_some() {
            // Cut short: what was read is walked, and the walk ends there.
            if !command.words.is_empty() {
                pipeline.push(command);
            }
            if !pipeline.is_empty() {
                list.push(pipeline);
            }
            if !list.is_empty() {
                statements.push(list);
            }
        } else if command.words.is_empty() {
            // A line may end with `;` or `&`, never with `|`, `&&`, `||` or bare assignments, and
            // is not empty.
            let dangling = !command.env.is_empty() || !command.substitutions.is_empty();
            if dangling || !pipeline.is_empty() || !list.is_empty() || statements.is_empty() {
                return None;
            }
        } else {
            pipeline.push(command);
            list.push(pipeline);
            statements.push(list);
        }
        Some(statements)
    }
}

/// `NAME=VALUE` before the command: an assignment, as the grammar reads it.
fn is_assignment(word: &Word) -> bool {
    word.text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whether the fast path takes `text`.
#[cfg(test)]
pub(super) fn accepts(text: &str) -> bool {
    Reader::new(usize::MAX).read(text).is_some()
}
