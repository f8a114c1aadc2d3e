//! String functions, as Flink defines them: positions count characters (not bytes) from 1;
//! a computed string is built in the row's [`RowArena`].

use crate::repr::Datum;

use super::{arg, ScalarFunc};
use crate::expr::arena::RowArena;
use crate::expr::error::Fault;

/// Which ends TRIM strips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimSide {
    /// `TRIM(BOTH ' ' FROM s)`, `TRIM(s)`.
    Both,
    /// `LTRIM(s)`.
    Leading,
    /// `RTRIM(s)`.
    Trailing,
}

fn str_arg<'a>(args: &[Datum<'a>], i: usize) -> Option<&'a str> {
    match arg(args, i) {
        Datum::Str(s) => Some(s),
        _ => None,
    }
}

fn int_arg(args: &[Datum<'_>], i: usize) -> Option<i64> {
    match arg(args, i) {
        Datum::Int(v) => Some(v),
        _ => None,
    }
}

/// The string functions' kernel.
pub(crate) fn apply<'a>(
    func: &ScalarFunc,
    args: &[Datum<'a>],
    arena: &'a RowArena,
) -> Result<Datum<'a>, Fault> {
    let s = str_arg(args, 0);
    Ok(match (func, s) {
        (ScalarFunc::Lower, Some(s)) => Datum::Str(map_chars(s, arena, char::to_lowercase)),
        (ScalarFunc::Upper, Some(s)) => Datum::Str(map_chars(s, arena, char::to_uppercase)),
        (ScalarFunc::CharLength, Some(s)) => Datum::Int(s.chars().count() as i64),
        (ScalarFunc::Trim(side), Some(s)) => Datum::Str(match side {
            TrimSide::Both => s.trim_matches(' '),
            TrimSide::Leading => s.trim_start_matches(' '),
            TrimSide::Trailing => s.trim_end_matches(' '),
        }),
        (ScalarFunc::Substring, Some(s)) => match int_arg(args, 1) {
            Some(from) => substring(s, from, int_arg(args, 2)),
            None => Datum::Null,
        },
        (ScalarFunc::Concat, _) => {
            let mut out = arena.string();
            for datum in args {
                if let Datum::Str(s) = datum {
                    out.push_str(s);
                }
            }
            Datum::Str(out.finish())
        }
        (ScalarFunc::ConcatWs, Some(sep)) => {
            let mut out = arena.string();
            let mut first = true;
            for datum in &args[1..] {
                if let Datum::Str(s) = datum {
                    if !first {
                        out.push_str(sep);
                    }
                    out.push_str(s);
                    first = false;
                }
            }
            Datum::Str(out.finish())
        }
        (ScalarFunc::Replace, Some(s)) => match (str_arg(args, 1), str_arg(args, 2)) {
            (Some(""), Some(_)) => Datum::Str(s),
            (Some(from), Some(to)) => {
                let mut out = arena.string();
                let mut rest = s;
                while let Some(at) = rest.find(from) {
                    out.push_str(&rest[..at]);
                    out.push_str(to);
                    rest = &rest[at + from.len()..];
                }
                out.push_str(rest);
                Datum::Str(out.finish())
            }
            _ => Datum::Null,
        },
        (ScalarFunc::SplitIndex, Some(s)) => match (str_arg(args, 1), int_arg(args, 2)) {
            (Some(sep), Some(index)) if index >= 0 && !sep.is_empty() => s
                .split(sep)
                .nth(index as usize)
                .map_or(Datum::Null, Datum::Str),
            _ => Datum::Null,
        },
        (ScalarFunc::Position, Some(needle)) => match str_arg(args, 1) {
            Some(haystack) => Datum::Int(match haystack.find(needle) {
                Some(at) => haystack[..at].chars().count() as i64 + 1,
                None => 0,
            }),
            None => Datum::Null,
        },
        _ => Datum::Null,
    })
}

/// Each character of `s` mapped through `f` into the arena (no copy when nothing changes).
fn map_chars<'a, I: Iterator<Item = char>>(
    s: &'a str,
    arena: &'a RowArena,
    f: impl Fn(char) -> I,
) -> &'a str {
    let mut out = arena.string();
    for c in s.chars() {
        for m in f(c) {
            out.push(m);
        }
    }
    let mapped = out.finish();
    if mapped == s {
        s
    } else {
        mapped
    }
}

/// `SUBSTRING(s FROM pos [FOR len])` as Flink's `BinaryStringDataUtil.substringSQL`: 1-based;
/// a negative `pos` counts from the end, `0` is the start; a negative `len` is NULL; positions
/// past either end give the empty string.
fn substring(s: &str, pos: i64, len: Option<i64>) -> Datum<'_> {
    let len = match len {
        Some(len) if len < 0 => return Datum::Null,
        Some(len) => len,
        None => i64::MAX,
    };
    let chars = s.chars().count() as i64;
    let start = match pos {
        p if p > chars => return Datum::Str(""),
        p if p > 0 => p - 1,
        p if p < 0 && chars + p < 0 => return Datum::Str(""),
        p if p < 0 => chars + p,
        _ => 0,
    };
    let end = if chars - start < len {
        chars
    } else {
        start + len
    };
    let begin = s
        .char_indices()
        .nth(start as usize)
        .map_or(s.len(), |(i, _)| i);
    let rest = &s[begin..];
    let stop = rest
        .char_indices()
        .nth((end - start) as usize)
        .map_or(rest.len(), |(i, _)| i);
    Datum::Str(&rest[..stop])
}
