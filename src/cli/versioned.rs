//! `dtemporal versioned`: read a versioned table (Flink versioned tables, semantics rules A1-A5)
//! as of an event time, or as the history of its versions.

use clap::{ArgGroup, Args};

use super::{columns, Cli, CommonArgs};
use crate::error::Error;
use crate::run::Outcome;

/// The example shown by `dtemporal versioned --help`.
pub(super) const EXAMPLE: &str = "\
Example (the products changelog as of 10:00):
  dtemporal -w 2 versioned --input products.csv --key product_id --time update_time --as-of 10:00

Exit codes: 0 ok, 1 more rows rejected than --max-errors, 2 usage or I/O error.";

/// Arguments of `dtemporal versioned`.
#[derive(Args, Debug, Clone)]
#[command(group(ArgGroup::new("read").required(true).args(["as_of", "history"])))]
pub struct VersionedArgs {
    /// Input CSV file: a changelog (with an `op` column) or append-only (every row a version).
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Primary-key columns, comma-separated.
    #[arg(long, value_name = "COLS")]
    pub key: String,
    /// Event-time column: a version is valid from its row's time.
    #[arg(long, value_name = "COL")]
    pub time: String,
    /// Write the table's rows valid at this event time (same forms as the time column).
    #[arg(long, value_name = "T")]
    pub as_of: Option<String>,
    /// Write every version with a `valid_to` column (empty while current).
    #[arg(long)]
    pub history: bool,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Runs `dtemporal versioned`.
pub(super) fn run(_cli: &Cli, args: &VersionedArgs) -> Result<Outcome, Error> {
    let _ = columns(&args.key);
    Err(Error::Usage(
        "versioned: not wired to the operators yet".into(),
    ))
}
