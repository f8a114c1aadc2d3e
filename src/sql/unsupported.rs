//! Naming what Flink SQL has and this crate does not compute yet: a refusal of valid Flink SQL
//! says, at its position, which feature is missing (`MATCH_RECOGNIZE is not supported yet`),
//! named as Flink's documentation names it, rather than a generic syntax error ("Expected: ),
//! found: <") or a wrong diagnosis ("Column 'DAY' not found" for `TIMESTAMPDIFF(DAY, ..)`).
//!
//! Three places ask: a statement sqlparser cannot read ([`at_parse_failure`]: Flink's statements
//! and clauses this crate's grammar lacks, found in the failed statement's tokens up to where
//! the parser stopped), an expression the binder does not translate ([`expression`]), and a
//! call of one of Flink's built-in functions this crate does not have ([`function`]).
//!
//! ```
//! use differential_temporal::sql::parse;
//!
//! let err = parse("SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY a ORDER BY ts\n  MEASURES A.b AS x PATTERN (A) DEFINE A AS A.b > 0)").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "SQL validation error at line 1, column 17: MATCH_RECOGNIZE (pattern recognition) is not supported yet"
//! );
//! ```

use sqlparser::ast;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan};

use super::error::SqlError;

/// The refusal of `feature` at `span`.
pub(super) fn not_supported(span: Span, feature: &str) -> SqlError {
    SqlError::at(span, format!("{feature} is not supported yet"))
}

/// Flink statements this crate does not run, by their leading words (Flink's SQL docs: SHOW,
/// DROP, ALTER, USE, RESET, LOAD / UNLOAD MODULE, JAR statements, ANALYZE, TRUNCATE, DELETE,
/// UPDATE, CALL, statement sets, compiled plans), longest first where one extends another.
const STATEMENTS: &[&[&str]] = &[
    &["EXECUTE", "STATEMENT", "SET"],
    &["BEGIN", "STATEMENT", "SET"],
    &["EXECUTE", "PLAN"],
    &["COMPILE", "PLAN"],
    &["COMPILE", "AND", "EXECUTE", "PLAN"],
    &["EXECUTE"],
    &["SHOW", "CREATE", "TABLE"],
    &["SHOW", "CREATE", "VIEW"],
    &["SHOW", "CREATE", "CATALOG"],
    &["SHOW", "CURRENT", "CATALOG"],
    &["SHOW", "CURRENT", "DATABASE"],
    &["SHOW", "USER", "FUNCTIONS"],
    &["SHOW", "FULL", "MODULES"],
    &["SHOW", "TABLES"],
    &["SHOW", "VIEWS"],
    &["SHOW", "FUNCTIONS"],
    &["SHOW", "CATALOGS"],
    &["SHOW", "DATABASES"],
    &["SHOW", "COLUMNS"],
    &["SHOW", "MODULES"],
    &["SHOW", "JARS"],
    &["SHOW", "JOBS"],
    &["SHOW", "PARTITIONS"],
    &["SHOW", "PROCEDURES"],
    &["SHOW", "MODELS"],
    &["SHOW"],
    &["DROP", "TEMPORARY", "SYSTEM", "FUNCTION"],
    &["DROP", "TEMPORARY", "FUNCTION"],
    &["DROP", "TEMPORARY", "TABLE"],
    &["DROP", "TEMPORARY", "VIEW"],
    &["DROP", "TABLE"],
    &["DROP", "VIEW"],
    &["DROP", "FUNCTION"],
    &["DROP", "CATALOG"],
    &["DROP", "DATABASE"],
    &["DROP", "MODEL"],
    &["ALTER", "TABLE"],
    &["ALTER", "VIEW"],
    &["ALTER", "FUNCTION"],
    &["ALTER", "DATABASE"],
    &["ALTER", "CATALOG"],
    &["ALTER", "MODEL"],
    &["CREATE", "TEMPORARY", "SYSTEM", "FUNCTION"],
    &["CREATE", "TEMPORARY", "FUNCTION"],
    &["CREATE", "FUNCTION"],
    &["CREATE", "CATALOG"],
    &["CREATE", "DATABASE"],
    &["CREATE", "MODEL"],
    &["CREATE", "OR", "REPLACE", "TABLE"],
    &["REPLACE", "TABLE"],
    &["USE", "CATALOG"],
    &["USE", "MODULES"],
    &["USE"],
    &["RESET"],
    &["LOAD", "MODULE"],
    &["UNLOAD", "MODULE"],
    &["ADD", "JAR"],
    &["REMOVE", "JAR"],
    &["ANALYZE", "TABLE"],
    &["TRUNCATE", "TABLE"],
    &["DELETE", "FROM"],
    &["UPDATE"],
    &["CALL"],
    &["STOP", "JOB"],
    &["DESCRIBE", "EXTENDED"],
    &["DESC", "EXTENDED"],
    &["DESCRIBE", "FUNCTION"],
    &["DESCRIBE", "JOB"],
    &["INSERT", "OVERWRITE"],
    &["EXPLAIN", "ESTIMATED_COST"],
    &["EXPLAIN", "CHANGELOG_MODE"],
    &["EXPLAIN", "JSON_EXECUTION_PLAN"],
    &["EXPLAIN", "PLAN_ADVICE"],
];

/// Where a statement `start`ing at that token failed to parse at `failed` (the parser's error
/// position), the feature of Flink SQL the statement uses that this crate does not read, if
/// one is found: a statement of [`STATEMENTS`] (at the statement's start), or a clause or type
/// at or before `failed` (`MATCH_RECOGNIZE`, `ROW<..>` and `MAP<..>` types, `CREATE TABLE ..
/// LIKE`, `CREATE TABLE .. AS SELECT`, `DISTRIBUTED BY`). `None`: the statement is not one
/// of those, and the syntax error stands.
pub(super) fn at_parse_failure(
    tokens: &[TokenWithSpan],
    start: Location,
    failed: Location,
) -> Option<SqlError> {
    let from = tokens.iter().position(|t| t.span.start == start)?;
    let words: Vec<(&TokenWithSpan, Option<String>)> = tokens[from..]
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .take_while(|t| t.token != Token::SemiColon)
        .map(|t| (t, word(t)))
        .collect();
    let leading: Vec<&str> = words.iter().map_while(|(_, w)| w.as_deref()).collect();
    if let Some(statement) = STATEMENTS.iter().find(|s| leading.starts_with(s)) {
        return Some(not_supported(words[0].0.span, &statement.join(" ")));
    }
    let reached = |t: &TokenWithSpan| {
        (t.span.start.line, t.span.start.column) <= (failed.line, failed.column) || failed.line == 0
    };
    let create_table = leading.starts_with(&["CREATE", "TABLE"])
        || leading.starts_with(&["CREATE", "TEMPORARY", "TABLE"]);
    let mut depth = 0usize;
    for (i, (token, w)) in words.iter().enumerate() {
        if !reached(token) {
            break;
        }
        let next = words.get(i + 1).map(|(t, w)| (&t.token, w.as_deref()));
        match &token.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        let feature = match (w.as_deref(), next) {
            (Some("MATCH_RECOGNIZE"), _) => "MATCH_RECOGNIZE (pattern recognition)",
            (Some("ROW"), Some((Token::Lt, _))) => "the ROW<..> type",
            (Some("MAP"), Some((Token::Lt, _))) => "the MAP<..> type",
            (Some("MULTISET"), Some((Token::Lt, _))) => "the MULTISET<..> type",
            (Some("LIKE"), _) if create_table && depth == 0 => "CREATE TABLE .. LIKE",
            (Some("AS"), Some((_, Some("SELECT" | "WITH")))) if create_table && depth == 0 => {
                "CREATE TABLE .. AS SELECT"
            }
            (Some("DISTRIBUTED"), Some((_, Some("BY" | "INTO")))) if depth == 0 => "DISTRIBUTED BY",
            _ => continue,
        };
        return Some(not_supported(token.span, feature));
    }
    None
}

/// An unquoted word, upper case.
fn word(token: &TokenWithSpan) -> Option<String> {
    match &token.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

/// The name, as Flink's documentation gives it, of an expression form the binder does not
/// translate (`IN (subquery)`, `EXISTS`, `ARRAY[..]`, `GROUPING SETS`...); `None` for a form
/// Flink does not have either.
pub(super) fn expression(e: &ast::Expr) -> Option<&'static str> {
    use ast::Expr as E;
    Some(match e {
        E::In {
            target: ast::InTarget::Subquery(_),
            ..
        } => "IN with a subquery",
        E::Exists { .. } => "EXISTS (subquery)",
        E::Subquery(_) => "a scalar subquery",
        E::Array(_) => "the ARRAY value constructor (ARRAY[..])",
        E::Map(_) => "the MAP value constructor (MAP[..])",
        E::Tuple(_) => "the implicit ROW value constructor ((a, b))",
        E::Struct { .. } => "the ROW value constructor",
        E::GroupingSets(_) => "GROUPING SETS",
        E::Rollup(_) => "ROLLUP",
        E::Cube(_) => "CUBE",
        E::SimilarTo { .. } => "SIMILAR TO",
        E::Like { any: true, .. } | E::ILike { .. } => "LIKE ANY",
        E::AtTimeZone { .. } => "AT TIME ZONE",
        E::CompoundFieldAccess { .. } => "access to ROW fields and ARRAY or MAP elements",
        E::JsonAccess { .. } => "JSON access",
        E::IsUnknown(_) => "IS UNKNOWN",
        E::IsNotUnknown(_) => "IS NOT UNKNOWN",
        E::Overlay { .. } => "OVERLAY",
        E::Position { .. } => "POSITION(.. IN ..)",
        E::Trim { .. } => "TRIM with BOTH, LEADING, TRAILING or characters",
        E::Collate { .. } => "COLLATE",
        E::AnyOp { .. } | E::AllOp { .. } => "ANY and ALL comparisons",
        E::Cast {
            format: Some(_), ..
        } => "CAST with FORMAT",
        _ => return None,
    })
}

/// Flink's built-in functions (lower case; Flink's `docs/data/sql_functions.yml`), called by
/// name; a call of one this crate does not define is refused as not supported yet, not as an
/// unknown function. The functions this crate has are found first, so the list may hold them.
const FLINK_FUNCTIONS: &[&str] = &[
    "proctime",
    "current_watermark",
    "current_row_timestamp",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtime",
    "localtimestamp",
    "now",
    "timestampdiff",
    "timestampadd",
    "convert_tz",
    "from_unixtime",
    "unix_timestamp",
    "to_timestamp_ltz",
    "date_add",
    "date_sub",
    "datediff",
    "year",
    "quarter",
    "month",
    "week",
    "dayofyear",
    "dayofmonth",
    "dayofweek",
    "hour",
    "minute",
    "second",
    "ifnull",
    "greatest",
    "least",
    "is_alpha",
    "is_decimal",
    "is_digit",
    "character_length",
    "repeat",
    "regexp",
    "regexp_replace",
    "regexp_extract",
    "regexp_extract_all",
    "regexp_count",
    "regexp_instr",
    "regexp_substr",
    "overlay",
    "initcap",
    "lpad",
    "rpad",
    "from_base64",
    "to_base64",
    "ascii",
    "chr",
    "decode",
    "encode",
    "instr",
    "left",
    "right",
    "locate",
    "parse_url",
    "reverse",
    "str_to_map",
    "substr",
    "translate",
    "elt",
    "url_decode",
    "url_encode",
    "printf",
    "btrim",
    "startswith",
    "endswith",
    "split",
    "md5",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha2",
    "log",
    "log2",
    "sin",
    "sinh",
    "cos",
    "cosh",
    "tan",
    "tanh",
    "cot",
    "asin",
    "acos",
    "atan",
    "atan2",
    "degrees",
    "radians",
    "sign",
    "pi",
    "e",
    "rand",
    "rand_integer",
    "uuid",
    "bin",
    "hex",
    "unhex",
    "truncate",
    "ceiling",
    "cardinality",
    "element",
    "array",
    "map",
    "row",
    "array_append",
    "array_contains",
    "array_distinct",
    "array_position",
    "array_prepend",
    "array_remove",
    "array_reverse",
    "array_slice",
    "array_sort",
    "array_union",
    "array_concat",
    "array_max",
    "array_min",
    "array_join",
    "array_except",
    "array_intersect",
    "map_keys",
    "map_values",
    "map_entries",
    "map_from_arrays",
    "map_union",
    "json_exists",
    "json_string",
    "json_value",
    "json_query",
    "json_object",
    "json_array",
    "json_objectagg",
    "json_arrayagg",
    "json_quote",
    "json_unquote",
    "typeof",
    "group_id",
    "grouping",
    "grouping_id",
    "collect",
    "array_agg",
    "variance",
    "stddev",
    "rank",
    "dense_rank",
    "row_number",
    "percent_rank",
    "cume_dist",
    "ntile",
    "lag",
    "lead",
    "bit_and",
    "bit_or",
    "bit_xor",
];

/// The refusal of a call `e` of `name` (lower case), one of Flink's built-in functions this
/// crate does not define (the caller checked it has no function of that name).
pub(super) fn function(name: &str, e: &ast::Expr) -> Option<SqlError> {
    use sqlparser::ast::Spanned;
    let feature = match name {
        "row" => "the ROW value constructor (ROW(..))".to_string(),
        "array" => "the ARRAY value constructor".to_string(),
        "map" => "the MAP value constructor".to_string(),
        _ if FLINK_FUNCTIONS.contains(&name) => {
            format!("the built-in function {}", name.to_ascii_uppercase())
        }
        _ => return None,
    };
    Some(not_supported(e.span(), &feature))
}
