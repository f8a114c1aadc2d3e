//! Software prefetching: asking the CPU to bring memory into cache before it is read, for
//! operators that visit hash-table entries in an order the hardware cannot predict (a fold's
//! groups, a firing's build keys). Each use looks a fixed number of items ahead, so several
//! cache misses are in flight at once instead of each waited on in turn.

/// Asks the CPU to load the cache lines `value` lies on (at most [`LINES`]), without waiting
/// for them. A hint: it never faults and has no effect on the program's results.
#[inline(always)]
pub(crate) fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let size = std::mem::size_of_val(value);
        if size == 0 {
            return;
        }
        // A value need not start on a line: every line from the one holding its first byte to
        // the one holding its last.
        let start = (value as *const T).cast::<i8>();
        let offset = start as usize % LINE;
        let lines = (offset + size).div_ceil(LINE).min(LINES);
        let first = start.wrapping_sub(offset);
        for line in 0..lines {
            // SAFETY: prefetching is a hint; it never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(line * LINE)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// How many items a prefetching loop works ahead of its use (a fold's updates, a firing's
/// probe rows): enough cache misses in flight to hide most of their latency, few enough that
/// what they fetched is still cached when used. 16 measured slower than 8 for both the group
/// aggregation and the temporal join's firing.
pub(crate) const AHEAD: usize = 8;

/// The bytes of a cache line.
const LINE: usize = 64;

/// At most how many lines one [`prefetch`] asks for.
const LINES: usize = 3;
