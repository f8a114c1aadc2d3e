//! `dtemporal`: see `dtemporal --help`.

/// The binary's allocator (the crate's default `mimalloc` feature): rows are allocated per cell,
/// and glibc's malloc took over half of a merge-engine run's time.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(differential_temporal::cli::main_with_args(
        std::env::args_os(),
    ));
}
