//! Helpers over sqlparser's token stream, for the rewrites that bring Flink and ASOF syntax
//! sqlparser does not read to a form it does ([`rewrite`]): each keeps every token's position,
//! so errors still name the line and column the user wrote.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// Applies every token rewrite of the SQL front end: ASOF joins ([`super::asof::rewrite`]) and
/// `SESSION(.. PARTITION BY ..)` ([`super::session::rewrite_partition`]).
pub(super) fn rewrite(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    super::session::rewrite_partition(super::asof::rewrite(tokens))
}

/// The index of the parenthesis closing the one at `open`.
pub(super) fn matching_paren(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the first token from `i` on that is not whitespace.
pub(super) fn skip_blank(tokens: &[TokenWithSpan], mut i: usize) -> usize {
    while matches!(tokens.get(i).map(|t| &t.token), Some(Token::Whitespace(_))) {
        i += 1;
    }
    i
}

/// The word of an unquoted word token.
pub(super) fn unquoted(token: &TokenWithSpan) -> Option<&Word> {
    match &token.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w),
        _ => None,
    }
}

/// The keyword an unquoted word token is, if any.
pub(super) fn keyword(token: &TokenWithSpan) -> Option<Keyword> {
    unquoted(token)
        .map(|w| w.keyword)
        .filter(|k| *k != Keyword::NoKeyword)
}
