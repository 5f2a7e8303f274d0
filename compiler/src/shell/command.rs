//! The parsed form of a command line: its simple commands.

/// One simple command as it will run: words after quote removal, wrappers stripped.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SimpleCommand {
    /// The words that run: `argv[0]` is the program.
    pub argv: Vec<String>,
    /// The file name of `argv[0]` (`/bin/rm` is `rm`); empty for a bare redirection (`> file`).
    pub name: String,
    /// Every flag as written and, for a cluster of short flags, each letter on its own (`-rf`
    /// gives `-rf`, `-r` and `-f`); `--key=value` gives `--key`.
    pub flags: Vec<String>,
    /// The operands: words after the name that are not flags, and the values of `--key=value`.
    pub args: Vec<String>,
    /// `args` resolved lexically (no file system) against the working directory, as far as it is
    /// known: the call's, then what `cd` changed it to.
    pub paths: Vec<String>,
    /// The working directory the command runs in, as far as it is known.
    pub cwd: Option<String>,
    pub redirects: Vec<Redirect>,
    /// `NAME=VALUE` assignments made for this command (written before it, or given to `env`).
    pub env: Vec<String>,
    /// The wrappers stripped from the front, outermost first (`sudo`, `env`, `xargs`, ...).
    pub wrappers: Vec<String>,
    /// Why the command cannot be known without running the shell, if it cannot.
    pub unresolved: Option<String>,
    /// Options known to take a value, each with its value (`git -C dir` gives `("-C", "dir")`):
    /// the value is not an operand. Read by the effect table's `option:` selectors.
    #[serde(skip)]
    pub options: Vec<(String, String)>,
    /// Whether what it runs destroys data no path names (SQL `DROP` given to `psql -c`).
    #[serde(skip)]
    pub destroys: bool,
}

/// A redirection: `2> err.log`, `>> ~/.bashrc`, `< input`, `2>&1`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Redirect {
    /// The file descriptor written before the operator, if any.
    pub fd: Option<u32>,
    /// The operator: `>`, `>>`, `<`, `&>`, `>&`, `<<<`, `<<`, ...
    pub op: String,
    /// The target after quote removal.
    pub target: String,
    /// The target resolved like [`SimpleCommand::paths`].
    pub path: String,
    /// A heredoc's body as written, for a shell or an interpreter that reads its script from it.
    #[serde(skip)]
    pub body: Option<String>,
}

impl SimpleCommand {
    /// A command that cannot be known, standing for a part of the line nothing else describes.
    pub(crate) fn unresolved(reason: impl Into<String>) -> SimpleCommand {
        SimpleCommand {
            unresolved: Some(reason.into()),
            ..SimpleCommand::default()
        }
    }

    /// Marks the command unresolved, keeping the first reason.
    pub(crate) fn mark_unresolved(&mut self, reason: impl Into<String>) {
        if self.unresolved.is_none() {
            self.unresolved = Some(reason.into());
        }
    }
}
