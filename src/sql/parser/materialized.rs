//! Flink's materialized-table statements, which sqlparser does not read:
//! `CREATE [OR ALTER] MATERIALIZED TABLE t [(PRIMARY KEY (..) NOT ENFORCED)] [COMMENT '..']
//! [PARTITIONED BY (..)] [WITH (..)] [FRESHNESS = INTERVAL 'n' unit] [REFRESH_MODE = FULL |
//! CONTINUOUS] AS query`; `ALTER MATERIALIZED TABLE t SUSPEND | RESUME [WITH (..)] | REFRESH
//! [PARTITION (k = 'v', ..)] | AS query`; `DROP MATERIALIZED TABLE [IF EXISTS] t`; `SHOW
//! MATERIALIZED TABLES`; `DESCRIBE t` (Flink's `SqlCreateMaterializedTable` grammar,
//! `flink-sql-parser/src/main/codegen/includes/parserImpls.ftl`).

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Span, Token};

use super::create_table::{parse_options, parse_primary_key_columns, TableOption};
use super::parse::parse_word;
use crate::sql::error::SqlError;

/// A parsed `CREATE [OR ALTER] MATERIALIZED TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateMaterializedTable {
    /// The table's name.
    pub name: ast::Ident,
    /// `OR ALTER`.
    pub or_alter: bool,
    /// `(PRIMARY KEY (..) NOT ENFORCED)`.
    pub primary_key: Option<Vec<ast::Ident>>,
    /// `COMMENT '..'`.
    pub comment: Option<String>,
    /// `PARTITIONED BY (..)`.
    pub partitioned_by: Vec<ast::Ident>,
    /// `WITH (..)`, in order.
    pub options: Vec<TableOption>,
    /// `FRESHNESS = INTERVAL 'n' unit`.
    pub freshness: Option<FreshnessClause>,
    /// `REFRESH_MODE = ..`: `FULL` or `CONTINUOUS` as written (checked when run), and where.
    pub refresh_mode: Option<ast::Ident>,
    /// The definition query.
    pub query: Box<ast::Query>,
    /// The definition query's text, as written.
    pub definition: String,
    /// Where the query starts (to cut its text from the script).
    pub(super) query_start: Location,
}

/// `INTERVAL 'n' unit` of a `FRESHNESS` clause, as written (validated when run).
#[derive(Clone, Debug, PartialEq)]
pub struct FreshnessClause {
    /// The literal's text (`'1'` gives `1`).
    pub interval: String,
    /// The unit's word.
    pub unit: String,
    /// Where the clause is.
    pub span: Span,
}

/// What an `ALTER MATERIALIZED TABLE` does.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterMaterializedTable {
    /// `SUSPEND`.
    Suspend,
    /// `RESUME [WITH (..)]`: options for the resumed refreshes only.
    Resume(Vec<TableOption>),
    /// `REFRESH [PARTITION (k = v, ..)]`: each key, its value's text, and whether the value
    /// was a string literal.
    Refresh(Vec<(ast::Ident, String, bool)>),
    /// `AS query`: a new definition.
    As(Box<NewDefinition>),
}

/// The query of `ALTER MATERIALIZED TABLE t AS query`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewDefinition {
    /// The query.
    pub query: ast::Query,
    /// Its text, as written.
    pub definition: String,
    /// Where the query starts (to cut its text from the script).
    pub(super) query_start: Location,
}

/// Parses the rest of `CREATE [OR ALTER] MATERIALIZED TABLE` (after `TABLE`).
pub(super) fn parse_create(
    parser: &mut Parser,
    or_alter: bool,
) -> Result<CreateMaterializedTable, SqlError> {
    let name = parser.parse_identifier()?;
    let mut primary_key = None;
    if parser.consume_token(&Token::LParen) {
        if parser.parse_keyword(Keyword::CONSTRAINT) {
            parser.parse_identifier()?;
        }
        parser.expect_keywords(&[Keyword::PRIMARY, Keyword::KEY])?;
        primary_key = Some(parse_primary_key_columns(parser)?);
        parser.expect_token(&Token::RParen)?;
    }
    let comment = if parser.parse_keyword(Keyword::COMMENT) {
        Some(parser.parse_literal_string()?)
    } else {
        None
    };
    let mut partitioned_by = Vec::new();
    if parse_word(parser, "PARTITIONED") {
        parser.expect_keyword(Keyword::BY)?;
        parser.expect_token(&Token::LParen)?;
        partitioned_by = parser.parse_comma_separated(|p| p.parse_identifier())?;
        parser.expect_token(&Token::RParen)?;
    }
    let options = if parser.parse_keyword(Keyword::WITH) {
        parse_options(parser)?
    } else {
        Vec::new()
    };
    let freshness = if parse_word(parser, "FRESHNESS") {
        Some(parse_freshness(parser)?)
    } else {
        None
    };
    let refresh_mode = if parse_word(parser, "REFRESH_MODE") {
        parser.expect_token(&Token::Eq)?;
        Some(parser.parse_identifier()?)
    } else {
        None
    };
    let at = parser.peek_token();
    if !parser.parse_keyword(Keyword::AS) {
        return parser.expected(
            "FRESHNESS, REFRESH_MODE or AS query in CREATE MATERIALIZED TABLE",
            at,
        )?;
    }
    let query_start = parser.peek_token().span.start;
    let query = parser.parse_query()?;
    Ok(CreateMaterializedTable {
        name,
        or_alter,
        primary_key,
        comment,
        partitioned_by,
        options,
        freshness,
        refresh_mode,
        query,
        definition: String::new(),
        query_start,
    })
}

/// `= INTERVAL 'n' unit` after `FRESHNESS`.
fn parse_freshness(parser: &mut Parser) -> Result<FreshnessClause, SqlError> {
    parser.expect_token(&Token::Eq)?;
    let start = parser.peek_token().span;
    parser.expect_keyword(Keyword::INTERVAL)?;
    let literal = parser.next_token();
    let interval = match literal.token {
        Token::SingleQuotedString(s) => s,
        Token::Number(n, _) => n,
        _ => return parser.expected("the freshness interval, a quoted integer ('3')", literal)?,
    };
    let unit = parser.next_token();
    let Token::Word(word) = unit.token else {
        return parser.expected("a time unit (SECOND, MINUTE, HOUR or DAY)", unit)?;
    };
    Ok(FreshnessClause {
        interval,
        unit: word.value,
        span: start.union(&unit.span),
    })
}

/// Parses the rest of `ALTER MATERIALIZED TABLE` (after `TABLE`).
pub(super) fn parse_alter(
    parser: &mut Parser,
) -> Result<(ast::Ident, AlterMaterializedTable), SqlError> {
    let name = parser.parse_identifier()?;
    let action = if parse_word(parser, "SUSPEND") {
        AlterMaterializedTable::Suspend
    } else if parse_word(parser, "RESUME") {
        let options = if parser.parse_keyword(Keyword::WITH) {
            parse_options(parser)?
        } else {
            Vec::new()
        };
        AlterMaterializedTable::Resume(options)
    } else if parser.parse_keyword(Keyword::REFRESH) {
        let mut spec = Vec::new();
        if parser.parse_keyword(Keyword::PARTITION) {
            parser.expect_token(&Token::LParen)?;
            spec = parser.parse_comma_separated(parse_partition_value)?;
            parser.expect_token(&Token::RParen)?;
        }
        AlterMaterializedTable::Refresh(spec)
    } else if parser.parse_keyword(Keyword::AS) {
        let query_start = parser.peek_token().span.start;
        AlterMaterializedTable::As(Box::new(NewDefinition {
            query: *parser.parse_query()?,
            definition: String::new(),
            query_start,
        }))
    } else {
        return parser.expected(
            "SUSPEND, RESUME, REFRESH or AS after ALTER MATERIALIZED TABLE name",
            parser.peek_token(),
        )?;
    };
    Ok((name, action))
}

/// `k = 'v'` (or `k = 5`) of a `PARTITION (..)` spec.
fn parse_partition_value(
    parser: &mut Parser,
) -> Result<(ast::Ident, String, bool), sqlparser::parser::ParserError> {
    let key = parser.parse_identifier()?;
    parser.expect_token(&Token::Eq)?;
    let value = parser.next_token();
    match value.token {
        Token::SingleQuotedString(s) => Ok((key, s, true)),
        Token::Number(n, _) => Ok((key, n, false)),
        _ => parser.expected("a partition value (a literal)", value),
    }
}
