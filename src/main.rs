//! `dtemporal`: see `dtemporal --help`.

fn main() {
    std::process::exit(differential_temporal::cli::main_with_args(
        std::env::args_os(),
    ));
}
