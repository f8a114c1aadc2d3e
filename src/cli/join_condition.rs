//! The join condition of `dtemporal temporal-join` and `lookup-join`: the equi-join keys of `--on`
//! ([`JoinKeys`]) and the residual condition of `--where "EXPR"` ([`Condition`]; semantics rule
//! B5: checked against the version chosen for the probe row only).
//!
//! `--on` is a comma-separated list of `PROBE_COL=BUILD_COL` pairs and constant keys
//! `BUILD_COL='TEXT'` (Flink's constant lookup key, rule B18: `ON o.id = r.id AND r.content =
//! 'x'`): the build column is matched against the constant for every probe row. The build
//! columns of both kinds, in order, are the build side's primary key. A constant is never NULL
//! (`''` is refused); it may contain commas.
//!
//! `--where`:
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
//! NULL (empty) cell compares false with anything, as in SQL. The join plan takes the condition
//! as a scalar expression ([`Condition::expr`]): the comparisons, each a function of this
//! module's (not SQL's comparison, which would compare text cells as text), under an `AND`.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::Error;
use crate::expr::{ScalarExpr, ScalarFunc, ScalarKind, ScalarUdf};
use crate::repr::{DataType, Datum};

/// The parsed `--on` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct JoinKeys {
    /// The probe columns of the `PROBE_COL=BUILD_COL` pairs, in order.
    pub probe: Vec<String>,
    /// Every build column named, in order: the build side's primary key.
    pub build: Vec<String>,
    /// The constant keys: `(position in the build key, constant)`, ascending.
    pub constants: Vec<(usize, String)>,
}

impl JoinKeys {
    /// Parses `--on`; constant keys alone (`id='1'`) when `constants_alone` (a lookup join:
    /// every probe row looks up the constant's rows, Flink's constant lookup key). Errors: a
    /// pair without `=`, an empty column name, an empty or unclosed constant, a constant on
    /// the probe side, no `PROBE_COL=BUILD_COL` pair and not `constants_alone`.
    pub(super) fn parse(on: &str, constants_alone: bool) -> Result<Self, Error> {
        let mut keys = JoinKeys {
            probe: Vec::new(),
            build: Vec::new(),
            constants: Vec::new(),
        };
        let usage = |pair: &str, why: &str| {
            Error::Usage(format!(
                "--on: {pair:?} {why}; expected PROBE_COL=BUILD_COL or BUILD_COL='TEXT'"
            ))
        };
        for pair in split_outside_quotes(on)? {
            let (left, right) = pair
                .split_once('=')
                .ok_or_else(|| usage(pair, "has no ="))?;
            let (left, right) = (left.trim(), right.trim());
            if left.is_empty() || right.is_empty() {
                return Err(usage(pair, "names no column"));
            }
            if left.starts_with('\'') {
                return Err(usage(pair, "has the constant on the probe side"));
            }
            match right.strip_prefix('\'') {
                Some(quoted) => {
                    let text = quoted
                        .strip_suffix('\'')
                        .ok_or_else(|| usage(pair, "has an unclosed constant"))?;
                    if text.is_empty() {
                        return Err(usage(pair, "has an empty constant, which is NULL"));
                    }
                    keys.constants.push((keys.build.len(), text.to_string()));
                    keys.build.push(left.to_string());
                }
                None => {
                    keys.probe.push(left.to_string());
                    keys.build.push(right.to_string());
                }
            }
        }
        let constants_only = constants_alone && !keys.constants.is_empty();
        if keys.probe.is_empty() && !constants_only {
            return Err(Error::Usage(format!(
                "--on: {on:?} has no PROBE_COL=BUILD_COL pair"
            )));
        }
        Ok(keys)
    }
}

/// `list` split at the commas outside `'...'`, each part trimmed. Errors: an unclosed `'`.
fn split_outside_quotes(list: &str) -> Result<Vec<&str>, Error> {
    let (mut parts, mut start, mut quoted) = (Vec::new(), 0, false);
    for (i, c) in list.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(Error::Usage(format!("--on: {list:?} has an unclosed '")));
    }
    parts.push(list[start..].trim());
    Ok(parts)
}

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
    /// The name of the comparison's function in a plan.
    fn name(self) -> &'static str {
        match self {
            Op::Eq => "cell_eq",
            Op::Ne => "cell_ne",
            Op::Lt => "cell_lt",
            Op::Le => "cell_le",
            Op::Gt => "cell_gt",
            Op::Ge => "cell_ge",
        }
    }

    /// Whether the cells `l` and `r` compare so: as numbers when both parse as numbers, else
    /// as text; never when one is NULL.
    fn compares(self, l: Datum, r: Datum) -> bool {
        let (Datum::Str(l), Datum::Str(r)) = (l, r) else {
            return false;
        };
        let order = match (l.trim().parse::<f64>(), r.trim().parse::<f64>()) {
            (Ok(a), Ok(b)) => a.partial_cmp(&b),
            _ => Some(l.cmp(r)),
        };
        order.is_some_and(|o| self.holds(o))
    }

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

    /// The condition over a joined row whose probe column `i` is at `probe_at(i)` and build
    /// column `i` at `build_at(i)`: TRUE iff every comparison holds.
    pub(super) fn expr(
        &self,
        probe_at: impl Fn(usize) -> usize,
        build_at: impl Fn(usize) -> usize,
    ) -> ScalarExpr {
        let text = DataType::STRING;
        let operand = |o: &Operand| match o {
            Operand::Probe(i) => ScalarExpr::column(probe_at(*i), text.clone().nullable()),
            Operand::Build(i) => ScalarExpr::column(build_at(*i), text.clone().nullable()),
            Operand::Literal(s) => ScalarExpr::literal(Datum::Str(s), text.clone().not_null()),
        };
        let comparisons = (self.all.iter())
            .map(|(l, op, r)| {
                let op = *op;
                let udf = ScalarUdf::new(
                    op.name(),
                    vec![text.clone(), text.clone()],
                    DataType::Boolean.not_null(),
                    move |args, _| Ok(Datum::Bool(op.compares(args[0], args[1]))),
                );
                ScalarExpr {
                    kind: ScalarKind::Udf {
                        udf: Arc::new(udf),
                        args: vec![operand(l), operand(r)],
                    },
                    ty: DataType::Boolean.not_null(),
                }
            })
            .collect();
        ScalarExpr {
            kind: ScalarKind::Call {
                func: ScalarFunc::And,
                args: comparisons,
                text: "--where".into(),
            },
            ty: DataType::Boolean.not_null(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Condition, JoinKeys};
    use crate::expr::RowArena;
    use crate::repr::Datum;
    use crate::row::{pack_cells, Row};

    #[test]
    fn on_pairs_and_constant_keys() {
        let keys = JoinKeys::parse("id=id, kind='a, b' ,cur=currency", false).expect("parses");
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            keys,
            JoinKeys {
                probe: names(&["id", "cur"]),
                build: names(&["id", "kind", "currency"]),
                constants: vec![(1, "a, b".to_string())],
            }
        );
    }

    #[test]
    fn on_errors_say_what_is_wrong() {
        let err = |on: &str| JoinKeys::parse(on, false).unwrap_err().to_string();
        let expected = "; expected PROBE_COL=BUILD_COL or BUILD_COL='TEXT'";
        assert_eq!(err("cur"), format!("--on: \"cur\" has no ={expected}"));
        assert_eq!(
            err("id=id,=x"),
            format!("--on: \"=x\" names no column{expected}")
        );
        assert_eq!(
            err("id=id,'x'=kind"),
            format!("--on: \"'x'=kind\" has the constant on the probe side{expected}")
        );
        assert_eq!(
            err("id=id,kind=''"),
            format!("--on: \"kind=''\" has an empty constant, which is NULL{expected}")
        );
        assert_eq!(
            err("id=id,kind='x'y"),
            format!("--on: \"kind='x'y\" has an unclosed constant{expected}")
        );
        assert_eq!(
            err("id=id,kind='x"),
            "--on: \"id=id,kind='x\" has an unclosed '"
        );
        assert_eq!(
            err("kind='x'"),
            "--on: \"kind='x'\" has no PROBE_COL=BUILD_COL pair"
        );
        // A lookup join takes a constant key alone (issue 46).
        let constant = JoinKeys::parse("kind='x'", true).expect("parses");
        assert_eq!(constant.constants, vec![(0, "x".to_string())]);
        assert!(constant.probe.is_empty());
    }

    fn header() -> Vec<String> {
        ["op", "id", "amount", "currency", "currency0", "rate"]
            .map(String::from)
            .to_vec()
    }

    fn row(cells: &[&str]) -> Row {
        pack_cells(cells.iter().map(|c| (!c.is_empty()).then_some(*c)))
    }

    /// The condition on a probe row and a build row, through its expression over the joined
    /// row (here the probe row, then the build row).
    fn check(expr: &str, probe: &[&str], build: &[&str]) -> bool {
        let c = Condition::parse(expr, &header(), 3).expect("parses");
        let e = c.expr(|i| i, |i| 3 + i);
        let (probe, build) = (row(probe), row(build));
        let joined: Vec<Datum> = probe.iter().chain(build.iter()).collect();
        let arena = RowArena::new();
        assert_eq!(e.compile().eval(&joined, &arena), e.eval(&joined, &arena));
        e.eval(&joined, &arena) == Ok(Datum::Bool(true))
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
