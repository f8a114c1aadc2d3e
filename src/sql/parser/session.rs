//! `SESSION(TABLE t PARTITION BY k, ..)`, Flink's session window table-valued function with its
//! partition keys, whose `PARTITION BY` clause sqlparser does not read: a token rewrite brings
//! it to a named argument sqlparser does read, which the binder's `window` module takes as the
//! session's partition columns.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

use super::tokens::{keyword, matching_paren, skip_blank, unquoted};

/// The internal named argument [`rewrite_partition`] gives a SESSION TVF's `PARTITION BY`.
pub(in crate::sql) const PARTITION_KEYS: &str = "PARTITION_KEYS";

/// Rewrites `SESSION(TABLE t PARTITION BY k, ..)` and `SESSION(TABLE t PARTITION BY (k1, k2),
/// ..)`, which sqlparser does not read, into `SESSION(TABLE t, PARTITION_KEYS => (k1, k2), ..)`;
/// every token keeps its position. Other tokens are untouched.
pub(super) fn rewrite_partition(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut i = 0;
    while i < tokens.len() {
        let session = unquoted(&tokens[i]).is_some_and(|w| w.value.eq_ignore_ascii_case("SESSION"));
        let open = skip_blank(&tokens, i + 1);
        if session && tokens.get(open).map(|t| &t.token) == Some(&Token::LParen) {
            if let Some(replaced) = partition_clause(&tokens, open) {
                let (range, with) = replaced;
                tokens.splice(range, with);
            }
        }
        i += 1;
    }
    tokens
}

/// In the call whose `(` is `tokens[open]`, the `PARTITION BY ..` clause at its top level, and
/// the tokens that replace it.
fn partition_clause(
    tokens: &[TokenWithSpan],
    open: usize,
) -> Option<(std::ops::Range<usize>, Vec<TokenWithSpan>)> {
    let close = matching_paren(tokens, open)?;
    let mut depth = 0usize;
    let at = (open + 1..close).find(|&j| {
        match tokens[j].token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0 && keyword(&tokens[j]) == Some(Keyword::PARTITION)
    })?;
    let by = skip_blank(tokens, at + 1);
    if keyword(tokens.get(by)?) != Some(Keyword::BY) {
        return None;
    }
    let first = skip_blank(tokens, by + 1);
    let span = tokens[at].span;
    let token = |t: Token| TokenWithSpan::new(t, span);
    let mut with = vec![
        token(Token::Comma),
        token(Token::Whitespace(Whitespace::Space)),
        token(Token::make_word(PARTITION_KEYS, None)),
        token(Token::RArrow),
    ];
    let end = match tokens.get(first)?.token {
        Token::LParen => {
            let end = matching_paren(tokens, first)?;
            with.extend_from_slice(&tokens[first..=end]);
            end
        }
        Token::Word(_) => {
            with.push(token(Token::LParen));
            with.push(tokens[first].clone());
            with.push(token(Token::RParen));
            first
        }
        _ => return None,
    };
    Some((at..end + 1, with))
}
