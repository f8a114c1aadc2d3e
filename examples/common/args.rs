//! The examples' command line: timely's flags and the example's own arguments.

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
