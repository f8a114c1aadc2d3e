//! Flink SQL's lexical and syntactic flavour for `sqlparser`.

use sqlparser::ast::{DataType, Expr, Ident, ObjectName, TypedString, Value};
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Flink SQL as `sqlparser` reads it: backtick-quoted identifiers (`` `order` ``), `FOR
/// SYSTEM_TIME AS OF` after a table name (temporal joins), `FILTER (WHERE ..)` on aggregates,
/// named arguments with `=>` (window TVFs), `GROUP BY` expressions; and two expression forms
/// sqlparser's generic grammar lacks: the literal `TIMESTAMP_LTZ '2024-01-01 10:00:00'` (a
/// typed string of the custom type `TIMESTAMP_LTZ`) and the table argument `TABLE t` of a
/// window table-valued function (`TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)`, also
/// named: `DATA => TABLE t`), read as the query `TABLE t`. Everything else is
/// sqlparser's generic grammar; the Flink DDL sqlparser does not read (`WATERMARK`, computed and
/// `METADATA` columns) is parsed by [`super::parse`]'s statement wrapper.
///
/// ```
/// use differential_temporal::sql::FlinkDialect;
/// use sqlparser::parser::Parser;
///
/// let sql = "SELECT o.id FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.t AS r ON o.c = r.c";
/// assert!(Parser::parse_sql(&FlinkDialect, sql).is_ok());
/// let tvf = "SELECT * FROM TABLE(TUMBLE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(t), \
///            SIZE => INTERVAL '10' MINUTES)) WHERE t > TIMESTAMP_LTZ '2024-01-01 10:00:00'";
/// assert!(Parser::parse_sql(&FlinkDialect, tvf).is_ok());
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

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let first = parser.peek_nth_token_ref(0);
        let second = &parser.peek_nth_token_ref(1).token;
        match (&first.token, second) {
            (Token::Word(w), Token::SingleQuotedString(_))
                if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("TIMESTAMP_LTZ") =>
            {
                let name = Ident::with_span(first.span, w.value.clone());
                parser.next_token();
                let literal = parser.next_token();
                let Token::SingleQuotedString(text) = literal.token else {
                    unreachable!("peeked a string literal")
                };
                Some(Ok(Expr::TypedString(TypedString {
                    data_type: DataType::Custom(ObjectName::from(vec![name]), vec![]),
                    value: Value::SingleQuotedString(text).with_span(literal.span),
                    uses_odbc_syntax: false,
                })))
            }
            (Token::Word(w), Token::Word(_)) if w.keyword == Keyword::TABLE => {
                Some(parser.parse_query().map(Expr::Subquery))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(sql: &str) -> Expr {
        Parser::new(&FlinkDialect)
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap()
    }

    #[test]
    fn timestamp_ltz_literal_and_table_argument() {
        assert_eq!(
            expr("TIMESTAMP_LTZ '2024-01-01 10:00:00'").to_string(),
            "TIMESTAMP_LTZ '2024-01-01 10:00:00'"
        );
        assert!(matches!(
            expr("timestamp_ltz '2024-01-01'"),
            Expr::TypedString(TypedString {
                data_type: DataType::Custom(..),
                ..
            })
        ));
        // A column named timestamp_ltz is still a column.
        assert!(matches!(expr("timestamp_ltz + 1"), Expr::BinaryOp { .. }));
        assert_eq!(
            expr("TUMBLE(TABLE orders, DESCRIPTOR(t), INTERVAL '10' MINUTES)").to_string(),
            "TUMBLE((TABLE orders), DESCRIPTOR(t), INTERVAL '10' MINUTES)"
        );
        assert_eq!(
            expr("TUMBLE(DATA => TABLE o, TIMECOL => DESCRIPTOR(t), SIZE => INTERVAL '1' HOUR)")
                .to_string(),
            "TUMBLE(DATA => (TABLE o), TIMECOL => DESCRIPTOR(t), SIZE => INTERVAL '1' HOUR)"
        );
    }
}
