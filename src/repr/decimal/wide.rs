//! `U256`: the unsigned 256-bit integer behind exact `DECIMAL` arithmetic whose intermediate
//! values pass 128 bits (a product of two 38-digit values has up to 76 digits).

use std::cmp::Ordering;

/// An unsigned 256-bit integer as four little-endian 64-bit limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct U256([u64; 4]);

impl Ord for U256 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl U256 {
    pub(super) const ZERO: U256 = U256([0; 4]);

    pub(super) const fn from_u128(v: u128) -> U256 {
        U256([v as u64, (v >> 64) as u64, 0, 0])
    }

    /// The value as a `u128`, when it fits.
    pub(super) fn to_u128(self) -> Option<u128> {
        (self.0[2] == 0 && self.0[3] == 0)
            .then_some(u128::from(self.0[0]) | (u128::from(self.0[1]) << 64))
    }

    pub(super) fn is_zero(self) -> bool {
        self == U256::ZERO
    }

    /// `self * m`, or `None` past 256 bits.
    pub(super) fn checked_mul(self, m: u128) -> Option<U256> {
        let m = [m as u64, (m >> 64) as u64];
        let mut out = [0u64; 6];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in m.iter().enumerate() {
                let t = u128::from(a) * u128::from(b) + u128::from(out[i + j]) + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            // The full product is below 2^384, so the carry stops inside `out`.
            let mut k = i + 2;
            while carry != 0 {
                let t = u128::from(out[k]) + carry;
                out[k] = t as u64;
                carry = t >> 64;
                k += 1;
            }
        }
        (out[4] == 0 && out[5] == 0).then_some(U256([out[0], out[1], out[2], out[3]]))
    }

    /// `self + other`, or `None` past 256 bits.
    pub(super) fn checked_add(self, other: U256) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut carry = false;
        for (i, slot) in out.iter_mut().enumerate() {
            let (s, c1) = self.0[i].overflowing_add(other.0[i]);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *slot = s;
            carry = c1 || c2;
        }
        (!carry).then_some(U256(out))
    }

    /// `self - other` for `self >= other`.
    pub(super) fn sub(self, other: U256) -> U256 {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for (i, slot) in out.iter_mut().enumerate() {
            let (d, b1) = self.0[i].overflowing_sub(other.0[i]);
            let (d, b2) = d.overflowing_sub(u64::from(borrow));
            *slot = d;
            borrow = b1 || b2;
        }
        U256(out)
    }

    fn shl1(self) -> U256 {
        let l = self.0;
        U256([
            l[0] << 1,
            (l[1] << 1) | (l[0] >> 63),
            (l[2] << 1) | (l[1] >> 63),
            (l[3] << 1) | (l[2] >> 63),
        ])
    }

    fn bit(self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    /// `(self / d, self % d)` for `0 < d < 2^255`.
    pub(super) fn div_rem(self, d: U256) -> (U256, U256) {
        if let (Some(n), Some(d)) = (self.to_u128(), d.to_u128()) {
            return (U256::from_u128(n / d), U256::from_u128(n % d));
        }
        let mut q = U256::ZERO;
        let mut r = U256::ZERO;
        for i in (0..256).rev() {
            r = r.shl1();
            r.0[0] |= u64::from(self.bit(i));
            if r >= d {
                r = r.sub(d);
                q.0[i / 64] |= 1 << (i % 64);
            }
        }
        (q, r)
    }

    /// `10^k`, or `None` past 256 bits (`k > 77`).
    pub(super) fn pow10(k: u32) -> Option<U256> {
        let mut v = U256::from_u128(1);
        let mut left = k;
        while left > 0 {
            let step = left.min(38);
            v = v.checked_mul(10u128.pow(step))?;
            left -= step;
        }
        Some(v)
    }

    /// The number of decimal digits (0 for zero).
    pub(super) fn digits(self) -> u32 {
        if let Some(v) = self.to_u128() {
            return v.checked_ilog10().map_or(0, |d| d + 1);
        }
        let mut n = 38;
        while U256::pow10(n).is_some_and(|p| p <= self) {
            n += 1;
        }
        n
    }
}
