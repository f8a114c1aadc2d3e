//! Reading a generated table in blocks: block `b` holds rows `b * block_rows ..`, is passed by
//! every worker, and is not due before `b * block_rows / rows_per_second` seconds after the
//! first; each worker makes its share of a block's rows (row `i` by worker `i % peers`).

use std::time::{Duration, Instant};

use crate::csv::Block;

/// The blocks of a [`DatagenSource`](super::DatagenSource): block `b` holds rows `b * block_rows ..`, carried as a
/// [`Block`] with no bytes whose `first_line` is its first row.
///
/// ```
/// use differential_temporal::io::{DatagenSource, FieldGenerator, Generator};
/// use differential_temporal::repr::{DataType, Datum, Schema};
///
/// let schema = Schema::builder().column("id", DataType::Int.not_null()).build().unwrap();
/// let ids = FieldGenerator::new(Generator::Sequence { start: 1, end: 5 });
/// let source = DatagenSource::new("ids", schema, vec![ids], None)
///     .unwrap()
///     .with_rows_per_second(1_000_000)
///     .with_block_rows(2);
/// // Worker 1 of 2 makes rows 1 and 3 (ids 2 and 4), in blocks 0 and 1; block 2 is row 4 only.
/// let mut blocks = source.blocks();
/// let mut mine = Vec::new();
/// while let Some(block) = blocks.next_block() {
///     source.generate_block(&block, (1, 2), |change| {
///         let change = change.unwrap();
///         let Some(Datum::Int(id)) = change.row.get(0) else { panic!() };
///         mine.push((block.index, change.seq, id));
///     });
/// }
/// assert_eq!(mine, [(0, 1, 2), (1, 3, 4)]);
/// assert_eq!(blocks.blocks_seen(), 3);
/// ```
#[derive(Debug)]
pub struct DatagenBlocks {
    rows: u64,
    block_rows: u64,
    rows_per_second: u64,
    next: u64,
    started: Instant,
}

/// The rows `first..last` of a block that worker `index` of `peers` makes: those `i` with
/// `i % peers == index`.
pub(crate) fn worker_share(
    first: u64,
    last: u64,
    index: u64,
    peers: u64,
) -> std::iter::StepBy<std::ops::Range<u64>> {
    let peers = peers.max(1);
    let mine = first + (index + peers - first % peers) % peers;
    (mine..last).step_by(peers as usize)
}

impl DatagenBlocks {
    /// The blocks of `rows` rows, `block_rows` a block, block `b` not passed before
    /// `b * block_rows / rows_per_second` seconds after the first.
    pub(crate) fn new(rows: u64, block_rows: u64, rows_per_second: u64) -> DatagenBlocks {
        DatagenBlocks {
            rows,
            block_rows,
            rows_per_second,
            next: 0,
            started: Instant::now(),
        }
    }

    /// The next block, after sleeping until it is due; `None` after the last.
    pub fn next_block(&mut self) -> Option<Block> {
        let first = self.next.checked_mul(self.block_rows)?;
        if first >= self.rows {
            return None;
        }
        let index = self.next;
        self.next += 1;
        let due = Duration::from_secs_f64(first as f64 / self.rows_per_second as f64);
        if let Some(wait) = due.checked_sub(self.started.elapsed()) {
            std::thread::sleep(wait);
        }
        Some(Block {
            index,
            first_line: first,
            bytes: Vec::new(),
            open_quote: None,
        })
    }

    /// Number of blocks passed so far (all of them at the end).
    pub fn blocks_seen(&self) -> u64 {
        self.next
    }
}
