//! The seeded randomness of generated rows: a table's seed (FNV-1a of its name) and, per cell,
//! a splitmix64 stream seeded by the table's seed, the column and the row, so that a cell's
//! value is a pure function of the three.

/// The FNV-1a hash of a table's name: its seed, the same in every process and build.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The state of cell (`field`, `row`) of a table seeded `seed`.
pub(super) fn mix(seed: u64, field: u64, row: u64) -> u64 {
    let mut state = SplitMix(seed ^ field.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let salted = state.next();
    SplitMix(salted ^ row).next()
}

/// Vigna's splitmix64: a tiny generator whose every output is a good hash of its counter.
pub(super) struct SplitMix(pub(super) u64);

impl SplitMix {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[min, max]` (`min <= max`), by a widening multiply.
    pub(super) fn int_in(&mut self, min: i64, max: i64) -> i64 {
        let span = (max as i128 - min as i128 + 1) as u128;
        let draw = self.next() as u128;
        if span > u128::from(u64::MAX) {
            return draw as u64 as i64;
        }
        (min as i128 + ((draw * span) >> 64) as i128) as i64
    }

    /// Uniform in `[min, max)` (`min` when they are equal), without overflow for wide ranges.
    pub(super) fn float_in(&mut self, min: f64, max: f64) -> f64 {
        let u = self.unit();
        min * (1.0 - u) + max * u
    }
}
