//! What the examples share: their command line (timely's flags and their own arguments) and
//! running a query with its time.

use std::time::{Duration, Instant};

use differential_temporal::table::{Table, TableResult};

/// Splits `args` into timely's flags (`-w N`, `-n N`, `-p I`, `-h FILE`; 2 workers unless `-w`
/// is given) and the other arguments, in order.
pub fn split_args(args: impl IntoIterator<Item = String>) -> (Vec<String>, Vec<String>) {
    let (mut timely, mut rest) = (Vec::new(), Vec::new());
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if ["-w", "-n", "-p", "-h"].contains(&arg.as_str()) {
            timely.push(arg);
            timely.extend(args.next());
        } else {
            rest.push(arg);
        }
    }
    if !timely.iter().any(|a| a == "-w") {
        timely.extend(["-w".to_string(), "2".to_string()]);
    }
    (timely, rest)
}

/// Runs `table`; its result and how long the run took, or `None` in a process that does not
/// host worker 0 (the result is gathered there).
pub fn execute_timed(table: &Table) -> Result<Option<(TableResult, Duration)>, String> {
    let start = Instant::now();
    let result = table.execute().map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    Ok(result.is_complete().then_some((result, elapsed)))
}
