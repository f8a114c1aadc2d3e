//! Comparisons, `IS [NOT] DISTINCT FROM`, `IN`, `NULLIF` and `LIKE`.
//!
//! Operands are of one type (the binder casts them to their common type), so datums compare
//! by value ([`Datum`]'s order), except FLOAT/DOUBLE, which compare as Java primitives do in
//! Flink's generated code: `NaN` is unequal to everything and `-0.0 = 0.0`.

use std::cmp::Ordering;

use crate::repr::Datum;

use crate::expr::error::Fault;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`.
    Eq,
    /// `<>`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// The operator's SQL text.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// `a op b`, NULL if either is NULL.
    #[inline]
    pub fn apply(self, a: Datum<'_>, b: Datum<'_>) -> Datum<'static> {
        match compare(a, b) {
            Some(ordering) => Datum::Bool(self.holds(ordering)),
            None if a.is_null() || b.is_null() => Datum::Null,
            // NaN: only `<>` holds.
            None => Datum::Bool(self == CmpOp::Ne),
        }
    }

    /// Whether the operator holds for `ordering`.
    #[inline]
    pub fn holds(self, ordering: Ordering) -> bool {
        match self {
            CmpOp::Eq => ordering == Ordering::Equal,
            CmpOp::Ne => ordering != Ordering::Equal,
            CmpOp::Lt => ordering == Ordering::Less,
            CmpOp::Le => ordering != Ordering::Greater,
            CmpOp::Gt => ordering == Ordering::Greater,
            CmpOp::Ge => ordering != Ordering::Less,
        }
    }
}

/// The SQL order of two non-NULL datums of one type; `None` when either is NULL or NaN.
#[inline]
pub fn compare(a: Datum<'_>, b: Datum<'_>) -> Option<Ordering> {
    match (a, b) {
        (Datum::Null, _) | (_, Datum::Null) => None,
        (Datum::Float(a), Datum::Float(b)) => a.partial_cmp(&b),
        (a, b) => Some(a.cmp(&b)),
    }
}

/// `a IS [NOT] DISTINCT FROM b`: equality where NULL equals NULL.
pub fn is_distinct_from(args: &[Datum<'_>], distinct: bool) -> Datum<'static> {
    let (a, b) = (super::arg(args, 0), super::arg(args, 1));
    let same = match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => compare(a, b) == Some(Ordering::Equal),
        _ => false,
    };
    Datum::Bool(same != distinct)
}

/// `x IN (v1, v2, ...)`: TRUE if some `vi = x`; else NULL if `x` or some `vi` is NULL; else
/// FALSE.
pub fn in_list(args: &[Datum<'_>]) -> Datum<'static> {
    let Some((&x, list)) = args.split_first() else {
        return Datum::Null;
    };
    if x.is_null() {
        return Datum::Null;
    }
    let mut null = false;
    for &v in list {
        match compare(x, v) {
            Some(Ordering::Equal) => return Datum::Bool(true),
            None if v.is_null() => null = true,
            _ => {}
        }
    }
    if null {
        Datum::Null
    } else {
        Datum::Bool(false)
    }
}

/// `NULLIF(a, b)`.
pub fn null_if<'a>(a: Datum<'a>, b: Datum<'a>) -> Datum<'a> {
    if compare(a, b) == Some(Ordering::Equal) {
        Datum::Null
    } else {
        a
    }
}

/// One element of a LIKE pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    /// A literal character.
    Char(char),
    /// `_`: any one character.
    One,
    /// `%`: any run of characters.
    Any,
}

/// A compiled LIKE pattern: `%` matches any run of characters, `_` one character, and the
/// escape character (none by default, as in Flink) makes the next `%`, `_` or itself literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LikePattern {
    tokens: Vec<Token>,
}

impl LikePattern {
    /// Compiles `pattern`; an escape that is not followed by `%`, `_` or the escape itself is
    /// an error (Calcite: "Invalid escape sequence").
    pub fn new(pattern: &str, escape: Option<char>) -> Result<LikePattern, String> {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            if Some(c) == escape {
                match chars.next() {
                    Some(n) if n == '%' || n == '_' || Some(n) == escape => {
                        tokens.push(Token::Char(n))
                    }
                    _ => return Err(format!("Invalid escape sequence '{pattern}'")),
                }
            } else {
                tokens.push(match c {
                    '%' => Token::Any,
                    '_' => Token::One,
                    c => Token::Char(c),
                });
            }
        }
        Ok(LikePattern { tokens })
    }

    /// Whether `text` matches (the two-pointer wildcard match: linear but for backtracking to
    /// the last `%`).
    pub fn matches(&self, text: &str) -> bool {
        let text: &str = text;
        let tokens = &self.tokens;
        let (mut t, mut p) = (0usize, 0usize);
        let mut backtrack: Option<(usize, usize)> = None;
        let bytes_at = |i: usize| text[i..].chars().next();
        loop {
            if p < tokens.len() {
                match (&tokens[p], bytes_at(t)) {
                    (Token::Any, _) => {
                        backtrack = Some((p, t));
                        p += 1;
                        continue;
                    }
                    (Token::One, Some(c)) => {
                        t += c.len_utf8();
                        p += 1;
                        continue;
                    }
                    (Token::Char(x), Some(c)) if *x == c => {
                        t += c.len_utf8();
                        p += 1;
                        continue;
                    }
                    _ => {}
                }
            } else if t == text.len() {
                return true;
            }
            // Mismatch: let the last `%` swallow one more character.
            match backtrack {
                Some((bp, bt)) => match bytes_at(bt) {
                    Some(c) => {
                        backtrack = Some((bp, bt + c.len_utf8()));
                        p = bp + 1;
                        t = bt + c.len_utf8();
                    }
                    None => return false,
                },
                None => return false,
            }
        }
    }
}

/// `s LIKE pattern [ESCAPE e]`; `compiled` when the pattern and escape were literals.
pub(crate) fn like<'a>(
    args: &[Datum<'a>],
    compiled: Option<&LikePattern>,
) -> Result<Datum<'a>, Fault> {
    let Datum::Str(text) = super::arg(args, 0) else {
        return Ok(Datum::Null);
    };
    if let Some(pattern) = compiled {
        return Ok(Datum::Bool(pattern.matches(text)));
    }
    let Datum::Str(pattern) = super::arg(args, 1) else {
        return Ok(Datum::Null);
    };
    let escape = match args.get(2) {
        Some(Datum::Str(e)) => Some(escape_char(e).map_err(Fault::Argument)?),
        _ => None,
    };
    let pattern = LikePattern::new(pattern, escape).map_err(Fault::Argument)?;
    Ok(Datum::Bool(pattern.matches(text)))
}

/// The escape character of `ESCAPE 'e'`: exactly one character.
pub fn escape_char(escape: &str) -> Result<char, String> {
    let mut chars = escape.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(format!("Invalid escape character '{escape}'")),
    }
}
