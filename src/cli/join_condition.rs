//! The residual join condition of `dtemporal temporal-join --where "EXPR"` (semantics rule B5:
//! checked against the version chosen for the probe row only).
//!
//! Grammar (keywords case-insensitive):
//!
//! ```text
//! EXPR    := COMPARE ( AND COMPARE )*
//! COMPARE := OPERAND OP OPERAND
//! OP      := = | != | <> | < | <= | > | >=
//! OPERAND := column | "quoted column" | number | 'string'
//! ```
//!
//! Columns are named as in the output header (build columns with their suffix, e.g.
//! `currency0`). A comparison compares numbers when both sides parse as numbers, else text; a
//! NULL (empty) cell compares false with anything, as in SQL.

use std::cmp::Ordering;

use crate::error::Error;
use crate::row::Row;

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq)]
enum Operand {
    /// A probe column, by index in the probe row.
    Probe(usize),
    /// A build column, by index in the build row.
    Build(usize),
    /// A literal (a number or a quoted string), as text.
    Literal(String),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn holds(self, o: Ordering) -> bool {
        match self {
            Op::Eq => o.is_eq(),
            Op::Ne => o.is_ne(),
            Op::Lt => o.is_lt(),
            Op::Le => o.is_le(),
            Op::Gt => o.is_gt(),
            Op::Ge => o.is_ge(),
        }
    }
}

/// A parsed `--where` condition: comparisons joined by AND.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Condition {
    all: Vec<(Operand, Op, Operand)>,
}

/// A token with its 1-based character position in the expression.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Name(String),
    Number(String),
    Text(String),
    Op(Op),
}

fn error(pos: usize, msg: impl std::fmt::Display) -> Error {
    Error::Usage(format!("--where: at character {pos}: {msg}"))
}

fn tokens(expr: &str) -> Result<Vec<(usize, Token)>, Error> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (pos, c) = (i + 1, chars[i]);
        let next = chars.get(i + 1).copied();
        let op = |op, len| (Token::Op(op), len);
        let (token, len) = match (c, next) {
            (c, _) if c.is_whitespace() => {
                i += 1;
                continue;
            }
            ('<', Some('=')) => op(Op::Le, 2),
            ('<', Some('>')) | ('!', Some('=')) => op(Op::Ne, 2),
            ('>', Some('=')) => op(Op::Ge, 2),
            ('<', _) => op(Op::Lt, 1),
            ('>', _) => op(Op::Gt, 1),
            ('=', Some('=')) => op(Op::Eq, 2),
            ('=', _) => op(Op::Eq, 1),
            ('\'' | '"', _) => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&d| d == c)
                    .ok_or_else(|| error(pos, format!("unclosed {c}")))?;
                let text: String = chars[i + 1..i + 1 + end].iter().collect();
                let token = if c == '"' {
                    Token::Name(text)
                } else {
                    Token::Text(text)
                };
                (token, end + 2)
            }
            (c, _) if c.is_ascii_digit() || c == '-' || c == '.' => {
                let len = chars[i..]
                    .iter()
                    .enumerate()
                    .take_while(|&(j, d)| d.is_ascii_alphanumeric() || *d == '.' || j == 0)
                    .count();
                let text: String = chars[i..i + len].iter().collect();
                if text.parse::<f64>().is_err() {
                    return Err(error(pos, format!("{text:?} is not a number")));
                }
                (Token::Number(text), len)
            }
            (c, _) if c.is_alphanumeric() || c == '_' => {
                let len = chars[i..]
                    .iter()
                    .take_while(|d| d.is_alphanumeric() || **d == '_' || **d == '.')
                    .count();
                (Token::Name(chars[i..i + len].iter().collect()), len)
            }
            (c, _) => return Err(error(pos, format!("unexpected {c:?}"))),
        };
        out.push((pos, token));
        i += len;
    }
    Ok(out)
}

impl Condition {
    /// Parses `expr` against the output `header` (`op`, the probe columns, then the
    /// `probe_width`.. build columns).
    pub(super) fn parse(expr: &str, header: &[String], probe_width: usize) -> Result<Self, Error> {
        let tokens = tokens(expr)?;
        let end = expr.chars().count() + 1;
        let mut it = tokens.into_iter().peekable();
        let mut all = Vec::new();
        let operand = |t: Option<(usize, Token)>| -> Result<Operand, Error> {
            match t {
                Some((_, Token::Number(n))) => Ok(Operand::Literal(n)),
                Some((_, Token::Text(s))) => Ok(Operand::Literal(s)),
                Some((pos, Token::Name(name))) => {
                    match header.iter().skip(1).position(|h| *h == name) {
                        Some(i) if i < probe_width => Ok(Operand::Probe(i)),
                        Some(i) => Ok(Operand::Build(i - probe_width)),
                        None => Err(error(
                            pos,
                            format!(
                                "no column {name:?}; the columns are {}",
                                header[1..].join(", ")
                            ),
                        )),
                    }
                }
                Some((pos, Token::Op(_))) => Err(error(
                    pos,
                    "expected a column or a literal, found an operator",
                )),
                None => Err(error(end, "expected a column or a literal, found the end")),
            }
        };
        loop {
            let left = operand(it.next())?;
            let op = match it.next() {
                Some((_, Token::Op(op))) => op,
                Some((pos, _)) => {
                    return Err(error(pos, "expected an operator (= != < <= > >=)"));
                }
                None => return Err(error(end, "expected an operator, found the end")),
            };
            let right = operand(it.next())?;
            all.push((left, op, right));
            match it.next() {
                None => return Ok(Condition { all }),
                Some((_, Token::Name(and))) if and.eq_ignore_ascii_case("and") => {}
                Some((pos, _)) => return Err(error(pos, "expected AND or the end")),
            }
        }
    }

    /// `true` iff every comparison holds for this probe row and build row.
    pub(super) fn holds(&self, probe: &Row, build: &Row) -> bool {
        fn value<'a>(o: &'a Operand, probe: &'a Row, build: &'a Row) -> Option<&'a str> {
            match o {
                Operand::Probe(i) => probe.get(*i)?.as_deref(),
                Operand::Build(i) => build.get(*i)?.as_deref(),
                Operand::Literal(s) => Some(s),
            }
        }
        self.all.iter().all(|(l, op, r)| {
            let (Some(l), Some(r)) = (value(l, probe, build), value(r, probe, build)) else {
                return false;
            };
            let order = match (l.trim().parse::<f64>(), r.trim().parse::<f64>()) {
                (Ok(a), Ok(b)) => a.partial_cmp(&b),
                _ => Some(l.cmp(r)),
            };
            order.is_some_and(|o| op.holds(o))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Condition;

    fn header() -> Vec<String> {
        ["op", "id", "amount", "currency", "currency0", "rate"]
            .map(String::from)
            .to_vec()
    }

    fn row(cells: &[&str]) -> Vec<Option<String>> {
        cells
            .iter()
            .map(|c| (!c.is_empty()).then(|| c.to_string()))
            .collect()
    }

    fn check(expr: &str, probe: &[&str], build: &[&str]) -> bool {
        let c = Condition::parse(expr, &header(), 3).expect("parses");
        c.holds(&row(probe), &row(build))
    }

    #[test]
    fn compares_numbers_text_and_null() {
        let (p, b) = (["1", "10", "Euro"], ["Euro", "9.5"]);
        assert!(check("amount > rate", &p, &b)); // 10 > 9.5 as numbers
        assert!(!check("amount < rate", &p, &b));
        assert!(check("currency = currency0 AND rate >= 9.5", &p, &b));
        assert!(check("currency != 'Yen' and rate <> 1", &p, &b));
        assert!(check("\"currency0\" = 'Euro'", &p, &b));
        assert!(check("currency < 'Yen'", &p, &b)); // text
        assert!(!check("rate = 9.5", &p, &["Euro", ""])); // NULL compares false
        assert!(!check("rate != 9.5", &p, &["Euro", ""]));
    }

    #[test]
    fn parse_errors_name_the_position() {
        let err = |e: &str| Condition::parse(e, &header(), 3).unwrap_err().to_string();
        assert!(err("amount >").contains("at character 9: expected a column or a literal"));
        assert!(err("amount rate").contains("at character 8: expected an operator"));
        assert!(err("price > 1").contains("at character 1: no column \"price\""));
        assert!(err("amount > 1 OR rate > 2").contains("at character 12: expected AND"));
        assert!(err("amount > 'x").contains("at character 10: unclosed '"));
        assert!(err("amount ? 1").contains("at character 8: unexpected '?'"));
    }
}
