//! `dtemporal`: see `dtemporal --help`.

/// The binary's allocator (the crate's default `mimalloc` feature): rows are allocated per cell,
/// and glibc's malloc took over half of a merge-engine run's time.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: `libmimalloc-sys` does not name it, but it is the option
/// just before `mi_option_use_numa_nodes` in `mimalloc.h` (v2 and v3).
#[cfg(feature = "mimalloc")]
const PURGE_DELAY: libmimalloc_sys::mi_option_t = libmimalloc_sys::mi_option_use_numa_nodes - 1;

/// Returns freed memory to the system after 10 ms instead of mimalloc's default 1 s, which
/// outlasts most runs over a file: every page a run ever freed (input blocks, rows consumed by
/// a join) then stayed resident, and the peak RSS of the flights x weather join was 232 MB
/// instead of 192 MB. `MIMALLOC_PURGE_DELAY` in the environment still decides when set.
#[cfg(feature = "mimalloc")]
fn purge_freed_memory_soon() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options; any value is valid for it.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 10) };
    }
}

/// Turns transparent huge pages off for this process (Linux `PR_SET_THP_DISABLE`), unless
/// `MIMALLOC_ALLOW_THP` in the environment decides. mimalloc asks for huge pages
/// (`MADV_HUGEPAGE`) on the memory it maps, so every first touch of a 2 MiB region zeroes all of
/// it, and with freed memory returned after 10 ms (above) a run zeroed the same regions again
/// and again: the kernel's page clearing was 15-20% of the flights x weather join's samples.
/// With 4 KiB pages that join takes ~10% less CPU time (task-clock 921-983 against 993-1,153
/// ms, 4 alternating runs) and 20-30 MB less peak RSS (175-184 against 199-205 MB); the dedup
/// of flights by tailnum 30 MB instead of 54-57.
#[cfg(target_os = "linux")]
fn no_transparent_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: sets a flag of this process; no memory is passed. A kernel that refuses it
        // leaves huge pages on, which is only slower.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
}

fn main() {
    #[cfg(target_os = "linux")]
    no_transparent_huge_pages();
    #[cfg(feature = "mimalloc")]
    purge_freed_memory_soon();
    std::process::exit(differential_temporal::cli::main_with_args(
        std::env::args_os(),
    ));
}

#[cfg(all(test, target_os = "linux"))]
mod thp_tests {
    /// Without `MIMALLOC_ALLOW_THP` the process runs without transparent huge pages.
    #[test]
    fn transparent_huge_pages_are_off_unless_the_environment_says() {
        super::no_transparent_huge_pages();
        // SAFETY: reads a flag of this process.
        let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        // With the variable set, mimalloc applies it, not this function.
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
            assert_eq!(disabled, 1);
        }
    }
}

#[cfg(all(test, feature = "mimalloc"))]
mod tests {
    /// `PURGE_DELAY` is the option whose default is mimalloc's 1 s purge delay, which
    /// `MIMALLOC_PURGE_DELAY` sets: without the variable it goes from 1000 to 10 ms; with a
    /// number in it, mimalloc read that number into the option and it stays.
    #[test]
    fn purge_delay_names_mimallocs_purge_delay() {
        let (before, after) = match std::env::var("MIMALLOC_PURGE_DELAY") {
            Err(std::env::VarError::NotPresent) => (1000, 10),
            Ok(set) => {
                let n = set
                    .trim()
                    .parse()
                    .expect("MIMALLOC_PURGE_DELAY is a number of ms");
                (n, n)
            }
            Err(e) => panic!("MIMALLOC_PURGE_DELAY: {e}"),
        };
        // SAFETY: reads one of mimalloc's options.
        let get = || unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        assert_eq!(get(), before);
        super::purge_freed_memory_soon();
        assert_eq!(get(), after);
    }
}
