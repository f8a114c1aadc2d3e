//! The generated tables: a `datagen` table's rows or a Nexmark table's events, as a registered
//! table holds them ([`TableSource::generated`](crate::table::TableSource::generated)).

use std::sync::Arc;

use super::{DatagenSource, NexmarkSource};
use crate::repr::Schema;

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
