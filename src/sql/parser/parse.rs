//! The statement wrapper: Flink's statements that sqlparser does not read (`CREATE TABLE` with
//! Flink's column forms, `CREATE [TEMPORARY] VIEW`, `SET`, `EXPLAIN`, and this crate's
//! `CREATE TEMPORAL TABLE FUNCTION` extension) are parsed here; queries and `INSERT INTO` are
//! sqlparser's own AST. Statements are separated by `;`.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Span, Token, Tokenizer};

use super::create_table::{parse_create_table, CreateTable};
use super::dialect::FlinkDialect;
use super::materialized::{self, AlterMaterializedTable, CreateMaterializedTable};
use crate::sql::error::SqlError;
use crate::sql::unsupported;

/// One statement of a script.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `CREATE [TEMPORARY] TABLE [IF NOT EXISTS] t (..) [PARTITIONED BY (..)] WITH (..)`.
    CreateTable(Box<CreateTable>),
    /// `CREATE [TEMPORARY] VIEW [IF NOT EXISTS] v AS query`.
    CreateView {
        /// The view's name.
        name: ast::Ident,
        /// Its query.
        query: Box<ast::Query>,
    },
    /// `CREATE [TEMPORARY] TEMPORAL TABLE FUNCTION f FOR history TIME time_column KEY
    /// key_column` — an **extension of Flink's grammar** (Flink creates temporal table
    /// functions in the Table API only, `history.createTemporalTableFunction(time, key)`).
    CreateTemporalTableFunction {
        /// The function's name.
        name: ast::Ident,
        /// The append-only history table or view.
        history: ast::Ident,
        /// Its time attribute.
        time: ast::Ident,
        /// Its key.
        key: ast::Ident,
    },
    /// `SET 'key' = 'value'` (or `SET key = value`).
    Set {
        /// The option.
        key: String,
        /// Its value.
        value: String,
        /// Where the statement starts.
        span: Span,
    },
    /// `EXPLAIN [PLAN FOR] statement`: the plan, not the result.
    Explain(Box<Statement>),
    /// A query (`SELECT`, `WITH`, `VALUES`, set operations).
    Query(Box<ast::Query>),
    /// `INSERT INTO sink query`.
    Insert {
        /// The sink table.
        table: ast::Ident,
        /// The rows.
        query: Box<ast::Query>,
    },
    /// `CREATE [OR ALTER] MATERIALIZED TABLE t .. AS query`.
    CreateMaterializedTable(Box<CreateMaterializedTable>),
    /// `ALTER MATERIALIZED TABLE t SUSPEND | RESUME [WITH (..)] | REFRESH [PARTITION (..)] |
    /// AS query`.
    AlterMaterializedTable {
        /// The table.
        name: ast::Ident,
        /// What to do.
        action: AlterMaterializedTable,
    },
    /// `DROP MATERIALIZED TABLE [IF EXISTS] t`.
    DropMaterializedTable {
        /// The table.
        name: ast::Ident,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `SHOW MATERIALIZED TABLES`.
    ShowMaterializedTables,
    /// `DESCRIBE t` (or `DESC t`).
    Describe(ast::Ident),
}

/// Parses a script of `;`-separated Flink SQL statements.
///
/// Errors: the first syntax error, with its line, column and what was expected there; a
/// statement nested deeper than [`MAX_DEPTH`](crate::sql::MAX_DEPTH) levels (an error
/// naming the limit, at the position where it is passed).
///
/// ```
/// use differential_temporal::sql::{parse, Statement};
///
/// let script = "CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
///     WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
///     SELECT a FROM t WHERE a > 1;";
/// let statements = parse(script).unwrap();
/// assert!(matches!(statements[0], Statement::CreateTable(_)));
/// assert!(matches!(statements[1], Statement::Query(_)));
/// let err = parse("SELECT a FROM t WHERE").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "SQL syntax error at line 1, column 22: Expected: an expression, found: EOF"
/// );
/// ```
pub fn parse(sql: &str) -> Result<Vec<Statement>, SqlError> {
    Ok(parse_with_text(sql)?.into_iter().map(|(s, _)| s).collect())
}

/// [`parse`], with each statement's text as written (without the `;`): what a warehouse's
/// catalog records of the statements that define something.
///
/// ```
/// use differential_temporal::sql::parse_with_text;
///
/// let statements = parse_with_text("SET 'parallelism.default' = '2';\n  SELECT 1 AS a ;").unwrap();
/// assert_eq!(statements[1].1, "SELECT 1 AS a");
/// ```
pub fn parse_with_text(sql: &str) -> Result<Vec<(Statement, String)>, SqlError> {
    parse_script(sql).map_err(|e| match e {
        // sqlparser's end of input has no position: it is just after the last character.
        SqlError::Syntax {
            line: 0, message, ..
        } => SqlError::Syntax {
            line: sql.split('\n').count() as u64,
            column: sql.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64 + 1,
            message,
        },
        other => other,
    })
}

fn parse_script(sql: &str) -> Result<Vec<(Statement, String)>, SqlError> {
    let text = SourceText::new(sql);
    let tokens = Tokenizer::new(&FlinkDialect, sql)
        .tokenize_with_location()
        .map_err(ParserError::from)?;
    let tokens = super::tokens::rewrite(tokens);
    super::depth::check(&tokens)?;
    let mut parser = Parser::new(&FlinkDialect).with_tokens_with_locations(tokens.clone());
    let mut statements = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        if parser.peek_token().token == Token::EOF {
            return Ok(statements);
        }
        let start = parser.peek_token().span.start;
        // A statement that does not parse may be Flink SQL this crate's grammar lacks: then
        // the error names the feature, at its position, not what the parser expected.
        let named = |e: SqlError| match e {
            SqlError::Syntax { line, column, .. } => {
                let failed = Location { line, column };
                unsupported::at_parse_failure(&tokens, start, failed).unwrap_or(e)
            }
            other => other,
        };
        let mut statement = parse_statement(&mut parser).map_err(named)?;
        let next = parser.peek_token();
        if !matches!(next.token, Token::SemiColon | Token::EOF) {
            let expected = parser.expected::<()>("';' or the end of the script", next);
            return Err(named(SqlError::from(expected.unwrap_err())));
        }
        let end = (next.token != Token::EOF).then_some(next.span.start);
        match &mut statement {
            Statement::CreateMaterializedTable(t) => {
                t.definition = text.slice(t.query_start, end);
            }
            Statement::AlterMaterializedTable {
                action: AlterMaterializedTable::As(new),
                ..
            } => new.definition = text.slice(new.query_start, end),
            _ => {}
        }
        statements.push((statement, text.slice(start, end)));
    }
}

/// A script's text, cut by token locations (1-based lines and columns in characters).
struct SourceText<'a> {
    sql: &'a str,
    /// The byte offset where each line starts.
    lines: Vec<usize>,
}

impl<'a> SourceText<'a> {
    fn new(sql: &'a str) -> SourceText<'a> {
        let lines = std::iter::once(0)
            .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceText { sql, lines }
    }

    fn offset(&self, at: Location) -> usize {
        let Some(&line) = self.lines.get((at.line as usize).saturating_sub(1)) else {
            return self.sql.len();
        };
        self.sql[line..]
            .char_indices()
            .nth((at.column as usize).saturating_sub(1))
            .map_or(self.sql.len(), |(i, _)| line + i)
    }

    /// The trimmed text from `start` to `end` (`None`: the end of the script).
    fn slice(&self, start: Location, end: Option<Location>) -> String {
        let end = end.map_or(self.sql.len(), |e| self.offset(e));
        self.sql[self.offset(start)..end].trim().to_string()
    }
}

fn parse_statement(parser: &mut Parser) -> Result<Statement, SqlError> {
    let start = parser.peek_token();
    if parser.parse_keyword(Keyword::EXPLAIN) {
        let _ = parser.parse_keywords(&[Keyword::PLAN, Keyword::FOR]);
        return Ok(Statement::Explain(Box::new(parse_statement(parser)?)));
    }
    if parser.parse_keyword(Keyword::SET) {
        let key = parse_key_or_value(parser)?;
        parser.expect_token(&Token::Eq)?;
        let value = parse_key_or_value(parser)?;
        return Ok(Statement::Set {
            key,
            value,
            span: start.span,
        });
    }
    if parser.parse_keyword(Keyword::CREATE) {
        let or_alter = parser.parse_keywords(&[Keyword::OR, Keyword::ALTER]);
        if or_alter || parser.parse_keywords(&[Keyword::MATERIALIZED, Keyword::TABLE]) {
            if or_alter {
                parser.expect_keywords(&[Keyword::MATERIALIZED, Keyword::TABLE])?;
            }
            return Ok(Statement::CreateMaterializedTable(Box::new(
                materialized::parse_create(parser, or_alter)?,
            )));
        }
        let _ = parser.parse_keyword(Keyword::TEMPORARY);
        if parser.parse_keyword(Keyword::TABLE) {
            return Ok(Statement::CreateTable(Box::new(parse_create_table(
                parser,
            )?)));
        }
        if parser.parse_keyword(Keyword::VIEW) {
            let _ = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
            let name = parser.parse_identifier()?;
            parser.expect_keyword(Keyword::AS)?;
            let query = parser.parse_query()?;
            return Ok(Statement::CreateView { name, query });
        }
        if parse_word(parser, "TEMPORAL") {
            parser.expect_keywords(&[Keyword::TABLE, Keyword::FUNCTION])?;
            let name = parser.parse_identifier()?;
            parser.expect_keyword(Keyword::FOR)?;
            let history = parser.parse_identifier()?;
            parser.expect_keyword(Keyword::TIME)?;
            let time = parser.parse_identifier()?;
            parser.expect_keyword(Keyword::KEY)?;
            let key = parser.parse_identifier()?;
            return Ok(Statement::CreateTemporalTableFunction {
                name,
                history,
                time,
                key,
            });
        }
        return parser.expected(
            "TABLE, VIEW, TEMPORAL TABLE FUNCTION or MATERIALIZED TABLE after CREATE [TEMPORARY]",
            parser.peek_token(),
        )?;
    }
    if parser.parse_keywords(&[Keyword::ALTER, Keyword::MATERIALIZED, Keyword::TABLE]) {
        let (name, action) = materialized::parse_alter(parser)?;
        return Ok(Statement::AlterMaterializedTable { name, action });
    }
    if parser.parse_keywords(&[Keyword::DROP, Keyword::MATERIALIZED, Keyword::TABLE]) {
        let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let name = parser.parse_identifier()?;
        return Ok(Statement::DropMaterializedTable { name, if_exists });
    }
    if parser.parse_keywords(&[Keyword::SHOW, Keyword::MATERIALIZED, Keyword::TABLES]) {
        return Ok(Statement::ShowMaterializedTables);
    }
    if parser.parse_keyword(Keyword::DESCRIBE) || parser.parse_keyword(Keyword::DESC) {
        return Ok(Statement::Describe(parser.parse_identifier()?));
    }
    if parser.parse_keyword(Keyword::INSERT) {
        parser.expect_keyword(Keyword::INTO)?;
        let table = parser.parse_identifier()?;
        let query = parser.parse_query()?;
        return Ok(Statement::Insert { table, query });
    }
    if matches!(
        start.token,
        Token::Word(ref w) if matches!(w.keyword, Keyword::SELECT | Keyword::WITH | Keyword::VALUES)
    ) || start.token == Token::LParen
    {
        return Ok(Statement::Query(parser.parse_query()?));
    }
    parser.expected(
        "a statement (SELECT, INSERT INTO, CREATE TABLE, CREATE VIEW, CREATE MATERIALIZED TABLE, ALTER MATERIALIZED TABLE, DROP MATERIALIZED TABLE, SHOW MATERIALIZED TABLES, DESCRIBE, SET or EXPLAIN)",
        start,
    )?
}

/// A `SET` key or value: a quoted string, or a dotted word list (`table.exec.mini-batch` is
/// not an identifier, so Flink's documentation quotes keys).
fn parse_key_or_value(parser: &mut Parser) -> Result<String, SqlError> {
    let token = parser.next_token();
    match token.token {
        Token::SingleQuotedString(s) => Ok(s),
        Token::Word(w) => Ok(w.value),
        Token::Number(n, _) => Ok(n),
        _ => parser.expected("a quoted key or value", token)?,
    }
}

/// Consumes the unquoted word `word` (any case) if it is next.
pub(super) fn parse_word(parser: &mut Parser, word: &str) -> bool {
    match &parser.peek_token().token {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word) => {
            parser.next_token();
            true
        }
        _ => false,
    }
}
