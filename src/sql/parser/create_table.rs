//! Flink's `CREATE TABLE`: physical, computed (`c AS expr`) and metadata (`c T METADATA [FROM
//! 'key'] [VIRTUAL]`) columns, `WATERMARK FOR c AS expr`, `[CONSTRAINT n] PRIMARY KEY (..) NOT
//! ENFORCED`, `PARTITIONED BY (..)` and `WITH ('k' = 'v', ..)` (Flink's `SqlCreateTable`
//! grammar, `flink-sql-parser/src/main/codegen/includes/parserImpls.ftl`).

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Span, Token};

use super::parse::parse_word;
use crate::sql::error::SqlError;

/// A parsed `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    /// The table's name.
    pub name: ast::Ident,
    /// The columns, in order.
    pub columns: Vec<ColumnDef>,
    /// `WATERMARK FOR column AS expr`.
    pub watermark: Option<Watermark>,
    /// `PRIMARY KEY (..) NOT ENFORCED` (table or column constraint).
    pub primary_key: Option<Vec<ast::Ident>>,
    /// `PARTITIONED BY (..)`.
    pub partitioned_by: Vec<ast::Ident>,
    /// `WITH (..)`, in order.
    pub options: Vec<TableOption>,
}

/// One column of a `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    /// The column's name.
    pub name: ast::Ident,
    /// Physical, metadata or computed.
    pub kind: ColumnKind,
}

/// How a column gets its values.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnKind {
    /// Read from the source: `name TYPE [NOT NULL]`.
    Physical {
        /// The declared type.
        ty: ast::DataType,
        /// `NOT NULL`.
        not_null: bool,
    },
    /// `name TYPE METADATA [FROM 'key'] [VIRTUAL]`: a value the connector or format provides.
    Metadata {
        /// The declared type.
        ty: ast::DataType,
        /// The metadata key (`FROM 'key'`), or the column's name.
        key: Option<String>,
        /// `VIRTUAL`: read only, not written by a sink.
        is_virtual: bool,
    },
    /// `name AS expr`: computed from the other columns (`PROCTIME()` makes the processing-time
    /// attribute).
    Computed(Box<ast::Expr>),
}

/// `WATERMARK FOR column AS expr`.
#[derive(Clone, Debug, PartialEq)]
pub struct Watermark {
    /// The rowtime column.
    pub column: ast::Ident,
    /// The watermark expression (`column` or `column - INTERVAL '..' unit`).
    pub expr: ast::Expr,
}

/// One `'key' = 'value'` of `WITH (..)`, with the key's position.
#[derive(Clone, Debug, PartialEq)]
pub struct TableOption {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
    /// Where the key is.
    pub span: Span,
}

/// Parses the rest of `CREATE [TEMPORARY] TABLE` (after `TABLE`).
pub(super) fn parse_create_table(parser: &mut Parser) -> Result<CreateTable, SqlError> {
    let _ = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = parser.parse_identifier()?;
    let mut table = CreateTable {
        name,
        columns: Vec::new(),
        watermark: None,
        primary_key: None,
        partitioned_by: Vec::new(),
        options: Vec::new(),
    };
    parser.expect_token(&Token::LParen)?;
    loop {
        parse_element(parser, &mut table)?;
        if !parser.consume_token(&Token::Comma) {
            break;
        }
    }
    parser.expect_token(&Token::RParen)?;
    if parse_word(parser, "PARTITIONED") {
        parser.expect_keyword(Keyword::BY)?;
        parser.expect_token(&Token::LParen)?;
        table.partitioned_by = parser.parse_comma_separated(|p| p.parse_identifier())?;
        parser.expect_token(&Token::RParen)?;
    }
    if parser.parse_keyword(Keyword::WITH) {
        table.options = parse_options(parser)?;
    }
    Ok(table)
}

/// The `('k' = 'v', ..)` after `WITH`.
pub(super) fn parse_options(parser: &mut Parser) -> Result<Vec<TableOption>, SqlError> {
    parser.expect_token(&Token::LParen)?;
    let mut options = Vec::new();
    loop {
        let span = parser.peek_token().span;
        let key = parser.parse_literal_string()?;
        parser.expect_token(&Token::Eq)?;
        let value = parser.parse_literal_string()?;
        options.push(TableOption { key, value, span });
        if !parser.consume_token(&Token::Comma) {
            break;
        }
    }
    parser.expect_token(&Token::RParen)?;
    Ok(options)
}

/// A column, a `WATERMARK` or a table constraint.
fn parse_element(parser: &mut Parser, table: &mut CreateTable) -> Result<(), SqlError> {
    if parse_word(parser, "WATERMARK") {
        parser.expect_keyword(Keyword::FOR)?;
        let column = parser.parse_identifier()?;
        parser.expect_keyword(Keyword::AS)?;
        let expr = parser.parse_expr()?;
        table.watermark = Some(Watermark { column, expr });
        return Ok(());
    }
    if parser.parse_keyword(Keyword::CONSTRAINT) {
        parser.parse_identifier()?;
        parser.expect_keywords(&[Keyword::PRIMARY, Keyword::KEY])?;
        return parse_table_primary_key(parser, table);
    }
    if parser.parse_keywords(&[Keyword::PRIMARY, Keyword::KEY]) {
        return parse_table_primary_key(parser, table);
    }
    let name = parser.parse_identifier()?;
    if parser.parse_keyword(Keyword::AS) {
        let expr = parser.parse_expr()?;
        skip_comment(parser)?;
        table.columns.push(ColumnDef {
            name,
            kind: ColumnKind::Computed(Box::new(expr)),
        });
        return Ok(());
    }
    let ty = parser.parse_data_type()?;
    let kind = if parse_word(parser, "METADATA") {
        let key = if parser.parse_keyword(Keyword::FROM) {
            Some(parser.parse_literal_string()?)
        } else {
            None
        };
        let is_virtual = parse_word(parser, "VIRTUAL");
        ColumnKind::Metadata {
            ty,
            key,
            is_virtual,
        }
    } else {
        let not_null = parser.parse_keywords(&[Keyword::NOT, Keyword::NULL]);
        if !not_null {
            let _ = parser.parse_keyword(Keyword::NULL);
        }
        ColumnKind::Physical { ty, not_null }
    };
    if parser.parse_keywords(&[Keyword::PRIMARY, Keyword::KEY]) {
        expect_not_enforced(parser)?;
        table.primary_key = Some(vec![name.clone()]);
    }
    skip_comment(parser)?;
    table.columns.push(ColumnDef { name, kind });
    Ok(())
}

fn parse_table_primary_key(parser: &mut Parser, table: &mut CreateTable) -> Result<(), SqlError> {
    table.primary_key = Some(parse_primary_key_columns(parser)?);
    Ok(())
}

/// The `(a, b) NOT ENFORCED` after `PRIMARY KEY`.
pub(super) fn parse_primary_key_columns(parser: &mut Parser) -> Result<Vec<ast::Ident>, SqlError> {
    parser.expect_token(&Token::LParen)?;
    let key = parser.parse_comma_separated(|p| p.parse_identifier())?;
    parser.expect_token(&Token::RParen)?;
    expect_not_enforced(parser)?;
    Ok(key)
}

/// Flink owns no data, so it checks no constraint: `NOT ENFORCED` is required (Flink's
/// message: "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint").
fn expect_not_enforced(parser: &mut Parser) -> Result<(), SqlError> {
    let at = parser.peek_token();
    if parser.parse_keyword(Keyword::NOT) && parse_word(parser, "ENFORCED") {
        return Ok(());
    }
    Err(SqlError::syntax(
        at.span.start,
        format!("Expected: NOT ENFORCED after PRIMARY KEY (Flink doesn't support ENFORCED mode for PRIMARY KEY constraint), found: {}", at.token),
    ))
}

fn skip_comment(parser: &mut Parser) -> Result<(), SqlError> {
    if parser.parse_keyword(Keyword::COMMENT) {
        parser.parse_literal_string()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::parse::{parse, Statement};
    use super::*;

    fn create(sql: &str) -> CreateTable {
        match parse(sql).unwrap().remove(0) {
            Statement::CreateTable(t) => *t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn seed_products_ddl() {
        let t = create(
            "CREATE TABLE products (
                product_id    STRING,
                product_name  STRING,
                price         DECIMAL(32, 2),
                update_time   TIMESTAMP(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
                PRIMARY KEY (product_id) NOT ENFORCED,
                WATERMARK FOR update_time AS update_time
            ) WITH ('connector' = 'filesystem', 'path' = 'p.csv', 'format' = 'csv')",
        );
        assert_eq!(t.name.value, "products");
        assert_eq!(t.columns.len(), 4);
        assert_eq!(
            t.columns[3].kind,
            ColumnKind::Metadata {
                ty: ast::DataType::Timestamp(Some(3), ast::TimezoneInfo::None),
                key: Some("value.source.timestamp".into()),
                is_virtual: true
            }
        );
        assert_eq!(t.primary_key.unwrap()[0].value, "product_id");
        assert_eq!(t.watermark.unwrap().column.value, "update_time");
        let keys: Vec<&str> = t.options.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["connector", "path", "format"]);
    }

    #[test]
    fn computed_columns_and_constraints() {
        let t = create(
            "CREATE TEMPORARY TABLE IF NOT EXISTS o (id BIGINT NOT NULL PRIMARY KEY NOT ENFORCED,
                price INT, qty INT, cost AS price * qty, pt AS PROCTIME() COMMENT 'arrival')
             PARTITIONED BY (id)",
        );
        assert!(matches!(t.columns[3].kind, ColumnKind::Computed(_)));
        assert_eq!(t.columns[4].name.value, "pt");
        assert_eq!(t.partitioned_by[0].value, "id");
        assert_eq!(t.primary_key.unwrap()[0].value, "id");
    }

    #[test]
    fn enforced_primary_key_is_refused() {
        let err = parse("CREATE TABLE t (a INT, PRIMARY KEY (a))").unwrap_err();
        assert_eq!(
            err.to_string(),
            "SQL syntax error at line 1, column 39: Expected: NOT ENFORCED after PRIMARY KEY (Flink doesn't support ENFORCED mode for PRIMARY KEY constraint), found: )"
        );
    }
}
