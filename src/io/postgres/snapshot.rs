//! A table's snapshot: every row in one `REPEATABLE READ, READ ONLY` transaction, read through
//! a cursor in batches in primary-key order, shared by the workers in blocks.

use std::sync::Arc;

use postgres::{Client, SimpleQueryMessage};

use super::{quote_ident, source_text, PostgresSource, PostgresType};
use crate::csv::{Block, RowError};
use crate::error::Error;
use crate::operators::{Change, RowKind, Seq};
use crate::repr::Row;

impl PostgresSource {
    /// Reads the table's snapshot: every row in one `REPEATABLE READ, READ ONLY`
    /// transaction, through a cursor in batches, in primary-key order; each row a `+I` change
    /// whose `seq` is its position in the snapshot (from 1), or the row error of its first
    /// value the declared type cannot hold.
    ///
    /// Errors: the server cannot be reached or refuses the credentials, the table or a
    /// declared column does not exist, a column's type is not read (or not as declared), the
    /// read fails.
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        let mut client = self.connect()?;
        let columns = self.physical_columns(&mut client)?;
        Ok(self.read_snapshot(&mut client, &columns)?.0)
    }

    /// The snapshot of the table's `columns` (see [`snapshot`](Self::snapshot)) read on
    /// `client`, and the transactions it sees ([`Visible`]).
    pub(super) fn read_snapshot(
        &self,
        client: &mut Client,
        columns: &[(String, PostgresType)],
    ) -> Result<(Snapshot, Visible), Error> {
        let o = &self.options;
        let list = match columns.is_empty() {
            true => "NULL".to_string(),
            false => columns
                .iter()
                .map(|(name, _)| quote_ident(name))
                .collect::<Vec<_>>()
                .join(", "),
        };
        // In primary-key order, so that a row's position (its `seq`, the row its errors name)
        // does not depend on where the server keeps it.
        let order = match self.primary_key(client)? {
            key if key.is_empty() => String::new(),
            key => format!(" ORDER BY {}", key.join(", ")),
        };
        let query = format!(
            "DECLARE dtemporal_snapshot NO SCROLL CURSOR FOR SELECT {list} FROM {}.{}{order}",
            quote_ident(&o.schema),
            quote_ident(&o.table)
        );
        let fail = |e: postgres::Error| self.error(source_text(&e));
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(fail)?;
        let visible = tx
            .query_one("SELECT pg_current_snapshot()::text", &[])
            .map_err(fail)?;
        let visible = Visible::parse(visible.get(0))
            .ok_or_else(|| self.error("pg_current_snapshot() is not xmin:xmax:xip".into()))?;
        tx.batch_execute(&query).map_err(fail)?;
        let header: Vec<String> = self.schema.names().map(str::to_string).collect();
        let path = o.qualified_name();
        let mut rows = Vec::new();
        let mut scratch = Vec::new();
        loop {
            let batch = tx
                .simple_query("FETCH 10000 FROM dtemporal_snapshot")
                .map_err(fail)?;
            let before = rows.len();
            for message in batch {
                let SimpleQueryMessage::Row(values) = message else {
                    continue;
                };
                let seq = rows.len() as Seq + 1;
                // A snapshot row's change time is 0, as Flink CDC gives it.
                let text = |k: usize| values.get(k);
                let row = self.pack(text, (columns, false), 0, &mut scratch).map_err(
                    |(column, reason)| RowError::at(0, &path, &header, seq, Some(column), reason),
                );
                rows.push(row.map(|row| Change::new(seq, RowKind::Insert, row)));
            }
            if rows.len() == before {
                break;
            }
        }
        tx.commit().map_err(fail)?;
        let snapshot = Snapshot {
            path,
            rows: Arc::new(rows),
            block_rows: SNAPSHOT_BLOCK_ROWS,
        };
        Ok((snapshot, visible))
    }
}

/// The transactions a snapshot sees (PostgreSQL's `pg_snapshot`, `xmin:xmax:xip,...`): those
/// committed before it was taken. A change stream started before the snapshot skips them, so
/// that no change is in both. Transaction ids are compared modulo 2^32, as `pgoutput` sends
/// them: exact while the snapshot and the stream are within one wraparound epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visible {
    xmin: u64,
    xmax: u64,
    in_progress: Vec<u64>,
}

impl Visible {
    /// Parses `pg_current_snapshot()`'s text.
    fn parse(text: &str) -> Option<Visible> {
        let mut parts = text.split(':');
        let xmin = parts.next()?.parse().ok()?;
        let xmax = parts.next()?.parse().ok()?;
        let in_progress = match parts.next()? {
            "" => Vec::new(),
            list => list
                .split(',')
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?,
        };
        Some(Visible {
            xmin,
            xmax,
            in_progress,
        })
    }

    /// Whether the transaction `xid` (32 bits, as `pgoutput` sends it) committed before the
    /// snapshot: its changes are in it.
    pub fn sees(&self, xid: u32) -> bool {
        let low = |x: u64| x as u32;
        let before = |a: u32, b: u32| (a.wrapping_sub(b) as i32) < 0;
        before(xid, low(self.xmin))
            || (before(xid, low(self.xmax)) && !self.in_progress.iter().any(|&x| low(x) == xid))
    }
}

/// Rows of a snapshot a block: the blocks the workers share, as a generated table's.
const SNAPSHOT_BLOCK_ROWS: u64 = 1024;

/// A table's snapshot, read once by the driver and shared by the workers: block `b` holds the
/// rows `b * block_rows ..`, of which worker `index` of `peers` enters those `i` with
/// `i % peers == index`.
#[derive(Clone, Debug)]
pub struct Snapshot {
    path: String,
    rows: Arc<Vec<Result<Change<Row>, RowError>>>,
    block_rows: u64,
}

impl Snapshot {
    /// `SCHEMA.TABLE`, as row errors name it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// How many rows (row errors included).
    pub fn len(&self) -> u64 {
        self.rows.len() as u64
    }

    /// The rows, in snapshot order.
    pub fn rows(&self) -> &[Result<Change<Row>, RowError>] {
        &self.rows
    }

    /// The rows, in snapshot order, taken out of the snapshot (copied only if a clone of it
    /// is still held).
    pub fn into_rows(self) -> Vec<Result<Change<Row>, RowError>> {
        Arc::unwrap_or_clone(self.rows)
    }

    /// Whether the table was empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The blocks' reader: every block by index (its rows are shared, not owned).
    pub fn blocks(&self) -> SnapshotBlocks {
        SnapshotBlocks {
            blocks: self.len().div_ceil(self.block_rows),
            next: 0,
        }
    }

    /// Hands worker `(index, peers)`'s share of `block`'s rows to `out`.
    pub fn block_rows(
        &self,
        block: &Block,
        (index, peers): (u64, u64),
        out: &mut dyn FnMut(Result<Change<Row>, RowError>),
    ) {
        let first = block.index * self.block_rows;
        let last = (first + self.block_rows).min(self.len());
        for i in crate::io::datagen::worker_share(first, last, index, peers) {
            out(self.rows[i as usize].clone());
        }
    }
}

/// The blocks of a [`Snapshot`], walked by each worker.
#[derive(Debug)]
pub struct SnapshotBlocks {
    blocks: u64,
    next: u64,
}

impl SnapshotBlocks {
    /// The next block; `None` after the last.
    pub fn next_block(&mut self) -> Option<Block> {
        (self.next < self.blocks).then(|| {
            self.next += 1;
            Block {
                index: self.next - 1,
                first_line: 0,
                bytes: Vec::new(),
                open_quote: None,
            }
        })
    }

    /// Blocks passed so far.
    pub fn blocks_seen(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::Visible;

    /// `pg_current_snapshot()` is `xmin:xmax:in-progress`: an xid below xmin committed before
    /// it, one from xmax on after it, one between before it unless in progress; compared
    /// modulo 2^32 (as pgoutput sends xids), across a wraparound too.
    #[test]
    fn a_snapshot_sees_the_transactions_committed_before_it() {
        let visible = Visible::parse("100:105:101,103").unwrap();
        let sees: Vec<u32> = (95..110).filter(|&x| visible.sees(x)).collect();
        assert_eq!(sees, [95, 96, 97, 98, 99, 100, 102, 104]);
        // 64-bit xids of the epoch after a wraparound: 2^32 + 5 is xid 5 on the wire.
        let epoch = 1u64 << 32;
        let wrapped = Visible::parse(&format!("{}:{}:", epoch - 2, epoch + 3)).unwrap();
        let sees: Vec<u32> = [u32::MAX - 3, u32::MAX - 1, u32::MAX, 0, 2, 3, 4]
            .into_iter()
            .filter(|&x| wrapped.sees(x))
            .collect();
        assert_eq!(sees, [u32::MAX - 3, u32::MAX - 1, u32::MAX, 0, 2]);
        for text in ["", "1:2", "a:2:", "1:2:x"] {
            assert_eq!(Visible::parse(text), None, "{text:?}");
        }
    }
}
