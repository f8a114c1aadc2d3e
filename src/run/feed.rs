//! Reading a run's inputs: each input cut into blocks ([`BlockInput`], [`BlockReader`]), block
//! `i` parsed by worker `i % peers` and entered at system time `i` ([`feed`]), as the
//! [driver's docs](super) say.

use std::io::Read;

use differential_dataflow::input::InputSession;
use differential_dataflow::ExchangeData;
use timely::dataflow::ProbeHandle;

use super::LAG;
use crate::csv::{Block, Record, RowError, Schema, Splitter};
use crate::error::Error;
use crate::operators::SysTime;
use crate::progress::Progress;

/// An input the driver reads in blocks: a CSV file read into records of some shape (the
/// command line's text [`Record`]s, or the relational layer's typed changes), or rows
/// generated block by block ([`DatagenSource`](crate::io::DatagenSource)).
pub trait BlockInput {
    /// What a row of the input becomes.
    type Record: ExchangeData;
    /// The file (or generated table), for error messages.
    fn path(&self) -> &str;
    /// The input's blocks, positioned after the header.
    fn blocks(&self, block_bytes: usize) -> Result<Box<dyn BlockReader>, Error>;
    /// Parses one block that worker `worker = (index, peers)` read, handing each row (or its
    /// error) to `out`: a file's block whole (the worker owns it), a generated block's rows `i`
    /// with `i % peers == index` (every worker reads every generated block).
    fn parse_block(
        &self,
        block: &Block,
        worker: (u64, u64),
        out: &mut dyn FnMut(Result<Self::Record, RowError>),
    );
}

/// The blocks of one input, as each worker walks them: every worker passes every block, and
/// keeps the ones it owns (a file's), or every one (a generated table's, whose rows the workers
/// share).
pub trait BlockReader {
    /// The next block `owns` accepts (by its index); `None` at the end of the input.
    fn next_owned(&mut self, owns: &dyn Fn(u64) -> bool) -> std::io::Result<Option<Block>>;
    /// Number of blocks passed so far, owned or not (all of them at the end).
    fn blocks_seen(&self) -> u64;
}

impl<R: Read> BlockReader for Splitter<R> {
    fn next_owned(&mut self, owns: &dyn Fn(u64) -> bool) -> std::io::Result<Option<Block>> {
        Splitter::next_owned(self, owns)
    }
    fn blocks_seen(&self) -> u64 {
        Splitter::blocks_seen(self)
    }
}

impl BlockReader for crate::io::DatagenBlocks {
    fn next_owned(&mut self, _owns: &dyn Fn(u64) -> bool) -> std::io::Result<Option<Block>> {
        Ok(crate::io::DatagenBlocks::next_block(self))
    }
    fn blocks_seen(&self) -> u64 {
        crate::io::DatagenBlocks::blocks_seen(self)
    }
}

impl BlockReader for crate::io::postgres::SnapshotBlocks {
    fn next_owned(&mut self, _owns: &dyn Fn(u64) -> bool) -> std::io::Result<Option<Block>> {
        Ok(crate::io::postgres::SnapshotBlocks::next_block(self))
    }
    fn blocks_seen(&self) -> u64 {
        crate::io::postgres::SnapshotBlocks::blocks_seen(self)
    }
}

impl BlockInput for Schema {
    type Record = Record;
    fn path(&self) -> &str {
        &self.path
    }
    fn blocks(&self, block_bytes: usize) -> Result<Box<dyn BlockReader>, Error> {
        Ok(Box::new(Schema::blocks(self, block_bytes)?))
    }
    fn parse_block(
        &self,
        block: &Block,
        _worker: (u64, u64),
        out: &mut dyn FnMut(Result<Record, RowError>),
    ) {
        Schema::parse_block(self, block, out)
    }
}

impl BlockInput for crate::io::TypedSource {
    type Record = crate::operators::Change<crate::repr::Row>;
    fn path(&self) -> &str {
        crate::io::TypedSource::path(self)
    }
    fn blocks(&self, block_bytes: usize) -> Result<Box<dyn BlockReader>, Error> {
        Ok(Box::new(crate::io::TypedSource::blocks(self, block_bytes)?))
    }
    fn parse_block(
        &self,
        block: &Block,
        _worker: (u64, u64),
        out: &mut dyn FnMut(Result<Self::Record, RowError>),
    ) {
        crate::io::TypedSource::parse_block(self, block, out)
    }
}

/// A generated table's blocks hold no bytes: every worker passes every block and generates its
/// share of the block's rows, row `i` by worker `i % peers` (`block_bytes` is not used; the
/// source's block size in rows is, e.g. [`DatagenSource::block_rows`](crate::io::DatagenSource::block_rows)).
impl BlockInput for crate::io::Generated {
    type Record = crate::operators::Change<crate::repr::Row>;
    fn path(&self) -> &str {
        self.name()
    }
    fn blocks(&self, _block_bytes: usize) -> Result<Box<dyn BlockReader>, Error> {
        Ok(Box::new(match self {
            Self::Datagen(d) => d.blocks(),
            Self::Nexmark(n) => n.blocks(),
        }))
    }
    fn parse_block(
        &self,
        block: &Block,
        worker: (u64, u64),
        out: &mut dyn FnMut(Result<Self::Record, RowError>),
    ) {
        match self {
            Self::Datagen(d) => d.generate_block(block, worker, out),
            Self::Nexmark(n) => n.generate_block(block, worker, out),
        }
    }
}

/// Feeds `inputs` into `sessions` (malformed rows into `malformed`), as the module
/// documentation says: block `i` of an input is parsed by worker `i % peers` (a generated
/// table's block by every worker, each making its share of the rows) and entered at epoch `i`
/// ([`Epochs::PerBlock`]; the worker steps after every block and stays at most [`LAG`] epochs
/// ahead of `probe`), or at epoch 0 ([`Epochs::One`]: a batch run, not paced). At the end every
/// worker advances to the same final epoch and steps until `probe` reaches it. The sessions are
/// left open (drop them to close the inputs). Each parsed block is counted on `progress`.
#[allow(clippy::too_many_arguments)]
pub fn feed<I: BlockInput>(
    worker: &mut timely::worker::Worker,
    inputs: &[I],
    sessions: &mut [InputSession<SysTime, I::Record, isize>],
    malformed: &mut InputSession<SysTime, RowError, isize>,
    block_bytes: usize,
    epochs: Epochs,
    probe: &ProbeHandle<SysTime>,
    progress: &Progress,
) -> Result<(), Error> {
    let (me, peers) = (worker.index() as u64, worker.peers() as u64);
    let owns = |block: u64| block % peers == me;
    let mut splitters = inputs
        .iter()
        .map(|i| i.blocks(block_bytes))
        .collect::<Result<Vec<_>, _>>()?;
    let read = |s: &mut Box<dyn BlockReader>, input: &I| {
        s.next_owned(&owns).map_err(|e| Error::io(input.path(), e))
    };
    let mut next: Vec<Option<Block>> = splitters
        .iter_mut()
        .zip(inputs)
        .map(|(s, input)| read(s, input))
        .collect::<Result<_, _>>()?;
    // Feed blocks in epoch order across inputs.
    while let Some((which, index)) = next
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.as_ref().map(|b| (i, b.index)))
        .min_by_key(|&(i, block)| (block, i))
    {
        let epoch = match epochs {
            Epochs::PerBlock => index,
            Epochs::One => 0,
        };
        for s in sessions.iter_mut() {
            s.advance_to(epoch);
        }
        malformed.advance_to(epoch);
        if let Some(block) = next[which].take() {
            let rows = enter_rows(&mut sessions[which], malformed, |out| {
                inputs[which].parse_block(&block, (me, peers), out)
            });
            progress.block(block.bytes.len(), rows);
        }
        next[which] = read(&mut splitters[which], &inputs[which])?;
        for s in sessions.iter_mut() {
            s.flush();
        }
        malformed.flush();
        worker.step();
        if epochs == Epochs::PerBlock {
            let bound = epoch.saturating_sub(LAG);
            worker.step_or_park_while(None, || probe.less_than(&bound));
        }
    }
    let blocks = splitters.iter().map(|s| s.blocks_seen()).max().unwrap_or(0);
    let last = match epochs {
        Epochs::PerBlock => blocks,
        Epochs::One => blocks.min(1),
    };
    for s in sessions.iter_mut() {
        s.advance_to(last);
        s.flush();
    }
    malformed.advance_to(last);
    malformed.flush();
    worker.step_or_park_while(None, || probe.less_than(&last));
    Ok(())
}

/// Which system times a run's input blocks enter at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epochs {
    /// Block `i` of each input at epoch `i` (streaming: the output at each epoch is that of the
    /// input so far).
    PerBlock,
    /// Every block at epoch 0 (batch: the operators see each key once, with all its rows, and
    /// emit its final result once; rows of the one epoch keep their order by `seq`).
    One,
}

/// Enters the rows `make` hands to its argument into `session` and their errors into
/// `malformed`, at the sessions' current epoch (a block's rows, a generated range's); returns
/// how many (rows and errors).
pub(crate) fn enter_rows<R: ExchangeData>(
    session: &mut InputSession<SysTime, R, isize>,
    malformed: &mut InputSession<SysTime, RowError, isize>,
    make: impl FnOnce(&mut dyn FnMut(Result<R, RowError>)),
) -> u64 {
    let mut rows = 0;
    make(&mut |row| {
        rows += 1;
        match row {
            Ok(record) => session.insert(record),
            Err(error) => malformed.insert(error),
        }
    });
    rows
}
