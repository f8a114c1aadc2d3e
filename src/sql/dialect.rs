//! Flink SQL's lexical and syntactic flavour for `sqlparser`.

use sqlparser::dialect::Dialect;

/// Flink SQL as `sqlparser` reads it: backtick-quoted identifiers (`` `order` ``), `FOR
/// SYSTEM_TIME AS OF` after a table name (temporal joins), `FILTER (WHERE ..)` on aggregates,
/// named arguments with `=>` (window TVFs), `GROUP BY` expressions. Everything else is
/// sqlparser's generic grammar; the Flink DDL sqlparser does not read (`WATERMARK`, computed and
/// `METADATA` columns) is parsed by [`super::parse`]'s statement wrapper.
///
/// ```
/// use differential_temporal::sql::FlinkDialect;
/// use sqlparser::parser::Parser;
///
/// let sql = "SELECT o.id FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.t AS r ON o.c = r.c";
/// assert!(Parser::parse_sql(&FlinkDialect, sql).is_ok());
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct FlinkDialect;

impl Dialect for FlinkDialect {
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        ch == '`'
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        ch.is_alphabetic() || ch == '_'
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        ch.is_alphanumeric() || ch == '_' || ch == '$'
    }

    fn supports_table_versioning(&self) -> bool {
        true
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }

    fn supports_named_fn_args_with_rarrow_operator(&self) -> bool {
        true
    }

    fn supports_group_by_expr(&self) -> bool {
        true
    }

    fn supports_left_associative_joins_without_parens(&self) -> bool {
        true
    }
}
