//! The interactive prompt of `dtemporal sql` (in the manner of Flink's SQL client and DuckDB's
//! CLI): statements are read line by line until one ends with `;`, run against one
//! [`TableEnv`] (tables and views created earlier stay), and each query's result is printed.
//!
//! On a terminal, lines are edited with `rustyline` (history in `~/.dtemporal_history`);
//! otherwise standard input is read as it comes, without prompts, so statements can be piped in.
//! A statement that fails prints `[ERROR] ...` and the prompt goes on; `QUIT;`, `EXIT;` or the
//! end of input ends it. Piped input that had a failing statement exits with code 2.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::Error;
use crate::run::Outcome;
use crate::sql::FlinkDialect;
use crate::table::TableEnv;

/// The prompt of a new statement and of its continuation lines.
const PROMPT: &str = "dtemporal> ";
const CONTINUATION: &str = "         > ";

/// What the user typed.
enum Line {
    /// A line, with its `\n`.
    Text(String),
    /// Ctrl-C: drop the statement being typed, as a shell does.
    Interrupted,
}

/// Where lines come from.
enum Input {
    /// A terminal: line editing and history.
    Editor(Box<DefaultEditor>, Option<PathBuf>),
    /// A pipe or file: plain lines.
    Piped(std::io::StdinLock<'static>),
}

impl Input {
    fn open() -> Result<Input, Error> {
        if !std::io::stdin().is_terminal() {
            return Ok(Input::Piped(std::io::stdin().lock()));
        }
        let mut editor = DefaultEditor::new()
            .map_err(|e| Error::Usage(format!("cannot start the prompt: {e}")))?;
        let history =
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".dtemporal_history"));
        if let Some(path) = history.as_ref().filter(|p| p.exists()) {
            if let Err(e) = editor.load_history(path) {
                eprintln!("dtemporal: cannot read the history {}: {e}", path.display());
            }
        }
        Ok(Input::Editor(Box::new(editor), history))
    }

    /// The next line, or `None` at the end of input.
    fn line(&mut self, continuation: bool) -> Result<Option<Line>, Error> {
        match self {
            Input::Piped(stdin) => {
                let mut line = String::new();
                match stdin.read_line(&mut line) {
                    Ok(0) => Ok(None),
                    Ok(_) => Ok(Some(Line::Text(line))),
                    Err(e) => Err(Error::Usage(format!("standard input: {e}"))),
                }
            }
            Input::Editor(editor, _) => {
                match editor.readline(if continuation { CONTINUATION } else { PROMPT }) {
                    Ok(line) => {
                        let _ = editor.add_history_entry(line.as_str());
                        Ok(Some(Line::Text(line + "\n")))
                    }
                    Err(ReadlineError::Interrupted) => Ok(Some(Line::Interrupted)),
                    Err(ReadlineError::Eof) => Ok(None),
                    Err(e) => Err(Error::Usage(format!("the prompt failed: {e}"))),
                }
            }
        }
    }

    fn is_terminal(&self) -> bool {
        matches!(self, Input::Editor(..))
    }

    fn save_history(&mut self) {
        if let Input::Editor(editor, Some(path)) = self {
            if let Err(e) = editor.save_history(path) {
                eprintln!(
                    "dtemporal: cannot write the history {}: {e}",
                    path.display()
                );
            }
        }
    }
}

/// Runs the prompt until `QUIT;` or the end of input; `run` executes one complete script of
/// statements and prints its results.
pub(super) fn run(
    env: &TableEnv,
    mut run: impl FnMut(&TableEnv, &str, &mut Outcome) -> Result<(), Error>,
) -> Result<Outcome, Error> {
    let mut input = Input::open()?;
    if input.is_terminal() {
        super::print_out("dtemporal SQL: statements end with ';'. QUIT; leaves, Ctrl-C drops the statement being typed.\n")?;
    }
    let mut outcome = Outcome {
        lines: 0,
        rejected: 0,
        ignored: Vec::new(),
        wrote: true,
    };
    let mut failed = 0usize;
    let mut buffer = String::new();
    while let Some(line) = input.line(!buffer.trim().is_empty())? {
        match line {
            Line::Text(line) => buffer.push_str(&line),
            Line::Interrupted => {
                buffer.clear();
                continue;
            }
        }
        if !is_complete(&buffer) {
            continue;
        }
        let script = std::mem::take(&mut buffer);
        if is_quit(&script) {
            break;
        }
        if let Err(e) = run(env, &script, &mut outcome) {
            eprintln!("[ERROR] {e}");
            failed += 1;
        }
    }
    input.save_history();
    if !buffer.trim().is_empty() && !is_quit(&buffer) {
        eprintln!("[ERROR] the input ended inside a statement (a statement ends with ';')");
        failed += 1;
    }
    if failed > 0 && !input.is_terminal() {
        return Err(Error::Usage(format!("{failed} statement(s) failed")));
    }
    Ok(outcome)
}

/// Whether `text` ends with a `;` outside quotes and comments (an unterminated quote is not
/// complete).
fn is_complete(text: &str) -> bool {
    let Ok(tokens) = Tokenizer::new(&FlinkDialect, text).tokenize() else {
        return false;
    };
    tokens
        .iter()
        .rev()
        .find(|t| !matches!(t, Token::Whitespace(_)))
        .is_some_and(|t| *t == Token::SemiColon)
}

/// Whether `text` is `QUIT;` or `EXIT;` (Flink's SQL client's words), any case.
fn is_quit(text: &str) -> bool {
    let word = text.trim().trim_end_matches(';').trim();
    word.eq_ignore_ascii_case("quit") || word.eq_ignore_ascii_case("exit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_end_with_a_semicolon_outside_quotes_and_comments() {
        assert!(is_complete("SELECT 1;\n"));
        assert!(is_complete("SELECT a\nFROM t ;  -- done\n"));
        assert!(!is_complete("SELECT a\n"));
        assert!(!is_complete("SELECT ';\n"));
        assert!(!is_complete("SELECT a -- ;\n"));
        assert!(!is_complete(""));
        assert!(is_quit("quit;\n"));
        assert!(is_quit(" EXIT ;"));
        assert!(!is_quit("SELECT 1;"));
    }
}
