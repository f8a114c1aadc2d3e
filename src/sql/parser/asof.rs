//! ASOF joins in SQL: the syntax sqlparser does not read, brought to the form it does (the
//! binder's `asof` module binds that form).
//!
//! Accepted forms (`l` the probe, `r` the build side, `TOLERANCE` optional in each):
//!
//! ```sql
//! SELECT * FROM l ASOF [LEFT] JOIN r MATCH_CONDITION (l.t >= r.t) [ON l.k = r.k] [TOLERANCE INTERVAL '5' SECOND]
//! SELECT * FROM l ASOF [LEFT] JOIN r ON l.k = r.k AND l.t >= r.t [TOLERANCE INTERVAL '5' SECOND]
//! SELECT * FROM l ASOF JOIN r MATCH_CONDITION (NEAREST(l.t, r.t)) ON l.k = r.k TOLERANCE 10
//! ```
//!
//! `MATCH_CONDITION (..)` is Snowflake's form (sqlparser reads it, INNER only), `ON .. AND l.t
//! >= r.t` DuckDB's, `ASOF LEFT JOIN` DuckDB's, `TOLERANCE` QuestDB's (after the join's
//! condition: an INTERVAL, or a number for integer columns). NEAREST has no SQL form elsewhere
//! (pandas' and Polars' `merge_asof`/`join_asof` have `direction="nearest"` and `tolerance`):
//! here it is the match condition `NEAREST(l.t, r.t)`. Snowflake's ASOF JOIN pads rows without
//! a match; here, as in DuckDB, `ASOF JOIN` is INNER and `ASOF LEFT JOIN` pads.
//!
//! [`rewrite`] works on the tokens, before sqlparser parses them, and keeps every token's
//! position (errors name the line and column the user wrote): `ASOF [LEFT [OUTER]] JOIN r
//! [MATCH_CONDITION (c)] [ON o] [TOLERANCE x]` becomes `ASOF JOIN r MATCH_CONDITION
//! (ASOF_JOIN_SPEC(c, left, x)) [ON o]`, with `TRUE` for a missing `c` and `NULL` for a missing
//! `x`. `ASOF_JOIN_SPEC` is this module's internal marker; the binder reads it back
//! ([`crate::sql::binder`]'s `asof` module).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::tokens::{keyword, matching_paren, skip_blank, unquoted};

/// The marker function the rewrite wraps an ASOF join's match condition in.
pub(in crate::sql) const MARKER: &str = "ASOF_JOIN_SPEC";

/// Words that end an ASOF join's clause at parenthesis depth 0.
const CLAUSE_END: &[Keyword] = &[
    Keyword::JOIN,
    Keyword::INNER,
    Keyword::LEFT,
    Keyword::RIGHT,
    Keyword::FULL,
    Keyword::CROSS,
    Keyword::NATURAL,
    Keyword::ASOF,
    Keyword::WHERE,
    Keyword::GROUP,
    Keyword::HAVING,
    Keyword::ORDER,
    Keyword::LIMIT,
    Keyword::OFFSET,
    Keyword::FETCH,
    Keyword::UNION,
    Keyword::EXCEPT,
    Keyword::INTERSECT,
    Keyword::WINDOW,
    Keyword::QUALIFY,
];

/// Rewrites every ASOF join of `tokens` into the form sqlparser reads (see the [module
/// documentation](self)). Tokens outside ASOF joins are untouched.
pub(super) fn rewrite(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if keyword(&tokens[i]) == Some(Keyword::ASOF) {
            if let Some(next) = asof_join(&tokens, i, &mut out) {
                i = next;
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// Rewrites the ASOF join whose `ASOF` is `tokens[start]` into `out`; returns the index after
/// its clause, or `None` (nothing written) if `ASOF` is not followed by `[LEFT [OUTER]] JOIN`.
fn asof_join(
    tokens: &[TokenWithSpan],
    start: usize,
    out: &mut Vec<TokenWithSpan>,
) -> Option<usize> {
    let at = tokens[start].span;
    let mut i = skip_blank(tokens, start + 1);
    let left = keyword(tokens.get(i)?) == Some(Keyword::LEFT);
    if left {
        i = skip_blank(tokens, i + 1);
        if keyword(tokens.get(i)?) == Some(Keyword::OUTER) {
            i = skip_blank(tokens, i + 1);
        }
    }
    if keyword(tokens.get(i)?) != Some(Keyword::JOIN) {
        return None;
    }
    // The relation, then MATCH_CONDITION (..), ON .., TOLERANCE .. in any order.
    let (relation, mut i) = until_part(tokens, i + 1);
    let (mut condition, mut on, mut tolerance) = (None, None, None);
    loop {
        match keyword_or_word(tokens.get(i)) {
            Some("MATCH_CONDITION") => {
                let open = skip_blank(tokens, i + 1);
                if tokens.get(open).map(|t| &t.token) != Some(&Token::LParen) {
                    return None;
                }
                let close = matching_paren(tokens, open)?;
                condition = Some(&tokens[open + 1..close]);
                i = skip_blank(tokens, close + 1);
            }
            Some("ON") => {
                let (part, next) = until_part(tokens, i + 1);
                on = Some(part);
                i = next;
            }
            Some("TOLERANCE") => {
                let (part, next) = until_part(tokens, i + 1);
                tolerance = Some(part);
                i = next;
            }
            _ => break,
        }
    }
    let token = |t: Token| TokenWithSpan::new(t, at);
    let word = |w: &str| token(Token::make_word(w, None));
    out.extend([
        word("ASOF"),
        token(Token::Whitespace(space())),
        word("JOIN"),
    ]);
    out.extend_from_slice(relation);
    out.extend([
        word("MATCH_CONDITION"),
        token(Token::LParen),
        word(MARKER),
        token(Token::LParen),
    ]);
    match condition {
        Some(c) => out.extend_from_slice(c),
        None => out.push(word("TRUE")),
    }
    out.extend([
        token(Token::Comma),
        word(if left { "TRUE" } else { "FALSE" }),
        token(Token::Comma),
    ]);
    match tolerance {
        Some(t) => out.extend_from_slice(t),
        None => out.push(word("NULL")),
    }
    out.extend([token(Token::RParen), token(Token::RParen)]);
    if let Some(on) = on {
        out.extend([
            token(Token::Whitespace(space())),
            word("ON"),
            token(Token::Whitespace(space())),
        ]);
        out.extend_from_slice(on);
    }
    Some(i)
}

fn space() -> sqlparser::tokenizer::Whitespace {
    sqlparser::tokenizer::Whitespace::Space
}

/// The tokens from `from` up to the next part of an ASOF join (`MATCH_CONDITION`, `ON`,
/// `TOLERANCE`) or the end of its clause, at parenthesis depth 0; and the index there.
fn until_part(tokens: &[TokenWithSpan], from: usize) -> (&[TokenWithSpan], usize) {
    let mut depth = 0usize;
    let mut i = from;
    while let Some(t) = tokens.get(i) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => break,
            Token::RParen => depth -= 1,
            Token::SemiColon | Token::Comma | Token::EOF if depth == 0 => break,
            _ if depth == 0 => {
                let ends = matches!(
                    keyword_or_word(Some(t)),
                    Some("MATCH_CONDITION" | "ON" | "TOLERANCE")
                ) || keyword(t).is_some_and(|k| CLAUSE_END.contains(&k));
                if ends {
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (&tokens[from..i], i)
}

/// The upper-case text of an unquoted word (`MATCH_CONDITION`, `ON`, `TOLERANCE`).
fn keyword_or_word(token: Option<&TokenWithSpan>) -> Option<&'static str> {
    let w = unquoted(token?)?;
    ["MATCH_CONDITION", "ON", "TOLERANCE"]
        .into_iter()
        .find(|k| w.value.eq_ignore_ascii_case(k))
}
