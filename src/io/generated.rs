//! The generated tables: a `datagen` table's rows or a Nexmark table's events, as a registered
//! table holds them ([`TableSource::generated`](crate::table::TableSource::generated)).

use std::sync::Arc;

use super::{DatagenSource, NexmarkSource};
use crate::csv::RowError;
use crate::operators::Change;
use crate::repr::{Row, Schema};

/// The generator of a generated table.
#[derive(Clone, Debug)]
pub enum Generated {
    /// Flink's `datagen` connector.
    Datagen(Arc<DatagenSource>),
    /// The Nexmark benchmark's events.
    Nexmark(Arc<NexmarkSource>),
}

impl Generated {
    /// The generated table's columns.
    pub fn schema(&self) -> &Schema {
        match self {
            Generated::Datagen(d) => d.schema(),
            Generated::Nexmark(n) => n.schema(),
        }
    }

    /// The generated table's name.
    pub fn name(&self) -> &str {
        match self {
            Generated::Datagen(d) => d.name(),
            Generated::Nexmark(n) => n.name(),
        }
    }

    /// How many rows the table has (`u64::MAX` for an unbounded one).
    pub fn rows(&self) -> u64 {
        match self {
            Generated::Datagen(d) => d.rows(),
            Generated::Nexmark(n) => n.rows(),
        }
    }

    /// The rows a second a live run takes from the table: a datagen table's
    /// `rows-per-second`, a Nexmark table's rows among `first-event.rate` events (at least 1).
    pub fn rows_per_second(&self) -> u64 {
        match self {
            Generated::Datagen(d) => d.rows_per_second(),
            Generated::Nexmark(n) => n.rows_per_second(),
        }
    }

    /// Errors: the table is unbounded (a datagen table without `'number-of-rows'` or a
    /// sequence field, a Nexmark table without `'events.num'`), which a batch query (one that
    /// reads its input to the end) cannot read; the message names the table and the option.
    pub fn check_bounded(&self) -> Result<(), String> {
        let (bounded, connector, option) = match self {
            Generated::Datagen(d) => (d.is_bounded(), "datagen", "'number-of-rows'"),
            Generated::Nexmark(n) => (n.is_bounded(), "nexmark", "'events.num'"),
        };
        if bounded {
            return Ok(());
        }
        Err(format!(
            "table '{}' is unbounded (the connector '{connector}' without {option} makes rows forever), so a batch query over it never ends: read it from a CONTINUOUS materialized table, or add {option} = '<n>' to its WITH options",
            self.name()
        ))
    }

    /// Generates the rows `rows` that worker `worker = (index, peers)` makes (those `i` with
    /// `i % peers == index`), each a `+I` change with `seq` its index, passing each to `out`
    /// ([`DatagenSource::generate_rows`], [`NexmarkSource::generate_rows`]).
    pub fn generate_rows(
        &self,
        rows: std::ops::Range<u64>,
        worker: (u64, u64),
        out: impl FnMut(Result<Change<Row>, RowError>),
    ) {
        match self {
            Generated::Datagen(d) => d.generate_rows(rows, worker, out),
            Generated::Nexmark(n) => n.generate_rows(rows, worker, out),
        }
    }

    /// The same generator cutting its rows into blocks of `rows` rows (at least 1).
    pub fn with_block_rows(&self, rows: u64) -> Generated {
        match self {
            Generated::Datagen(d) => (**d).clone().with_block_rows(rows).into(),
            Generated::Nexmark(n) => (**n).clone().with_block_rows(rows).into(),
        }
    }
}

impl From<DatagenSource> for Generated {
    fn from(source: DatagenSource) -> Generated {
        Generated::Datagen(Arc::new(source))
    }
}

impl From<NexmarkSource> for Generated {
    fn from(source: NexmarkSource) -> Generated {
        Generated::Nexmark(Arc::new(source))
    }
}
