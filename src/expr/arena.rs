//! Scratch memory for the values an expression computes on one row.

use bumpalo::Bump;

/// Holds the strings and bytes that evaluating an expression computes for one row (`LOWER(s)`,
/// `CONCAT(a, b)`, a cast to STRING), so that evaluation can return borrowed
/// [`Datum`](crate::repr::Datum)s. The caller packs the results into its output row, then calls
/// [`RowArena::clear`] before the next row: the arena keeps its largest chunk, so in steady
/// state evaluation allocates nothing beyond the output rows.
///
/// ```
/// use differential_temporal::expr::RowArena;
///
/// let mut arena = RowArena::new();
/// let s = arena.push_str("abc");
/// assert_eq!(s, "abc");
/// arena.clear();
/// ```
#[derive(Default)]
pub struct RowArena {
    bump: Bump,
}

impl RowArena {
    /// An empty arena.
    pub fn new() -> RowArena {
        RowArena::default()
    }

    /// Copies `s` into the arena.
    pub fn push_str(&self, s: &str) -> &str {
        self.bump.alloc_str(s)
    }

    /// Copies `s` into the arena (the spec's name; `s` is dropped after the copy).
    pub fn push_string(&self, s: String) -> &str {
        self.push_str(&s)
    }

    /// Copies `bytes` into the arena.
    pub fn push_bytes(&self, bytes: &[u8]) -> &[u8] {
        self.bump.alloc_slice_copy(bytes)
    }

    /// A string builder whose buffer lives in the arena; [`ArenaString::finish`] gives the
    /// string with the arena's lifetime, without a copy.
    pub fn string(&self) -> ArenaString<'_> {
        ArenaString {
            inner: bumpalo::collections::String::new_in(&self.bump),
        }
    }

    /// Forgets every value pushed since the last clear, keeping the memory for reuse.
    pub fn clear(&mut self) {
        self.bump.reset();
    }
}

/// A string being built in a [`RowArena`].
pub struct ArenaString<'a> {
    inner: bumpalo::collections::String<'a>,
}

impl<'a> ArenaString<'a> {
    /// Appends `s`.
    pub fn push_str(&mut self, s: &str) {
        self.inner.push_str(s);
    }

    /// Appends `c`.
    pub fn push(&mut self, c: char) {
        self.inner.push(c);
    }

    /// The string, living as long as the arena.
    pub fn finish(self) -> &'a str {
        self.inner.into_bump_str()
    }
}

impl std::fmt::Write for ArenaString<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.inner.push_str(s);
        Ok(())
    }
}
