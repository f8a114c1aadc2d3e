//! `dtemporal warehouse`: maintenance of a warehouse directory. `--remove-unknown DIR` removes
//! `<warehouse>/data/DIR`, a directory the catalog does not name, which opening the warehouse
//! reported and kept (a table an older, restored catalog does not know; a copy put there by
//! hand): recovery never deletes what the catalog does not own, this command does when asked.

use clap::Args;

use crate::warehouse::Warehouse;

/// Example shown by `dtemporal warehouse --help`.
pub const EXAMPLE: &str = "Example:
  dtemporal warehouse --warehouse wh --remove-unknown old_totals
    removes wh/data/old_totals, which wh/catalog.json does not name (a table's own directory
    is refused: DROP MATERIALIZED TABLE removes those)";

/// `dtemporal warehouse`'s arguments.
#[derive(Args, Debug)]
pub struct WarehouseArgs {
    /// The warehouse directory.
    #[arg(long, value_name = "DIR")]
    pub warehouse: String,
    /// Removes `data/NAME`, a directory no table of the catalog owns.
    #[arg(long, value_name = "NAME")]
    pub remove_unknown: String,
}

/// Runs the command; the exit code (0 done, 2 refused or failed, said on standard error).
pub fn run(args: &WarehouseArgs) -> i32 {
    let result =
        Warehouse::open(&args.warehouse).and_then(|w| w.remove_unknown(&args.remove_unknown));
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("dtemporal: error: {e}");
            2
        }
    }
}
