//! Writing to standard output: a reader that goes away (`sluice eval … | head`) ends the program
//! quietly, as it ends other command-line tools, instead of a panic inside `println!`.

use std::fmt;
use std::io::Write;

/// The exit status of a program whose output pipe closed (128 + SIGPIPE), as shells report it.
const CLOSED_OUTPUT: i32 = 141;

/// Writes formatted text to standard output, exiting quietly when it is closed.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| {
        if newline {
            out.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if written.is_err() {
        std::process::exit(CLOSED_OUTPUT);
    }
}

/// `println!` for the CLI.
macro_rules! outln {
    () => { $crate::cli::output::write(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::cli::output::write(format_args!($($arg)*), true) };
}

/// `print!` for the CLI.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::write(format_args!($($arg)*), false) };
}
