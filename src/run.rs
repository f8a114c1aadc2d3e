//! The shared driver of every command: read CSV inputs into a dataflow, build the command's
//! operators, gather the output and the rejected rows on worker 0, and write them.
//!
//! A command resolves its inputs into [`Schema`]s (reading their headers, so a missing column
//! fails before any worker starts), then calls [`run`] with a `build` function that turns the
//! inputs' collections of [`Record`]s into a [`Built`]: the output lines and the rows the
//! operators refused.
//!
//! Reading: each input is cut into blocks of whole records ([`crate::csv::Splitter`]); block `i`
//! is parsed by worker `i % peers` and entered at system time (epoch) `i`, so the epoch of a row
//! is a function of its position alone and the output does not depend on the worker count. A
//! worker steps the dataflow after every block and runs at most [`LAG`] epochs ahead of the
//! output frontier, so memory holds a bounded number of blocks beyond the operators' state.
//! At the end of its input every worker advances to the same *final epoch* (the largest block
//! count of the inputs) and steps until the output frontier reaches it before closing its
//! inputs: an operator that emits at end of input (a final-mode temporal join) then does so at
//! that epoch, whatever the worker count.
//!
//! Gathering: output lines and rejected rows are exchanged to global worker 0 (also with several
//! processes), then sorted, consolidated and written by the process that hosts it, on as many
//! threads as it ran workers ([`crate::tail`]).

use std::cell::RefCell;
use std::rc::Rc;

use differential_dataflow::consolidation::consolidate_updates;
use differential_dataflow::input::InputSession;
use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::{Exchange, Probe};
use timely::dataflow::ProbeHandle;

use std::io::Read;

use crate::csv::{write_csv, Block, OutputLine, Record, RowError, Schema, Splitter};
use crate::error::Error;
use crate::operators::SysTime;
use crate::progress::Progress;
use crate::tail::Tail;

/// How many epochs a worker may feed ahead of the output frontier.
pub const LAG: u64 = 8;

/// Options shared by every command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Arguments for timely (`-w N`, `-n N`, `-p I`, `-h FILE`), without the program name.
    pub timely_args: Vec<String>,
    /// Target size of an input block (one epoch), in bytes.
    pub block_bytes: usize,
    /// Where the output goes (`None`: standard output).
    pub output: Option<String>,
    /// Where the error report goes (`None`: standard error).
    pub errors: Option<String>,
    /// Whether to draw a progress line (see [`Progress`]: only on a terminal, for large inputs).
    pub progress: bool,
}

/// What a command's `build` function returns.
pub struct Built<'s> {
    /// The output lines (each with a positive count once all input is in).
    pub output: VecCollection<'s, SysTime, OutputLine>,
    /// Rows the operators refused (see [`Schema::error`] to make one from a `seq`), in any
    /// number of collections.
    pub rejected: Vec<VecCollection<'s, SysTime, RowError>>,
    /// Rows the operators skip by definition (e.g. a merge engine's ignored writes): not
    /// errors, counted per reason in [`Outcome::ignored`] and not written to the report.
    pub ignored: Vec<VecCollection<'s, SysTime, RowError>>,
}

/// The result of a run, as seen by the process hosting worker 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Number of lines written (without the header).
    pub lines: usize,
    /// Number of rows rejected (malformed or refused by an operator).
    pub rejected: usize,
    /// Rows skipped by definition ([`Built::ignored`]): `(reason, count)`, by reason.
    pub ignored: Vec<(String, usize)>,
    /// `false` in a process that does not host worker 0 (it writes nothing).
    pub wrote: bool,
}

/// What worker 0 gathered.
type Gathered = (
    Vec<(OutputLine, SysTime, isize)>,
    Vec<(RowError, SysTime, isize)>,
    Vec<(String, SysTime, isize)>,
);

/// Runs a command: reads `inputs`, builds the dataflow with `build`, and writes the output
/// (with `header`) and the error report (see the module docs).
///
/// Errors: bad timely arguments, a file that cannot be read or written, a worker failure.
/// Rejected rows are not errors: they are written to the report and counted in the outcome.
pub fn run<const N: usize, F>(
    options: &RunOptions,
    inputs: [Schema; N],
    header: Vec<String>,
    build: F,
) -> Result<Outcome, Error>
where
    F: for<'s> Fn([VecCollection<'s, SysTime, Record>; N]) -> Built<'s> + Send + Sync + 'static,
{
    let args = std::iter::once("dtemporal".to_string()).chain(options.timely_args.iter().cloned());
    let config = timely::Config::from_args(args).map_err(Error::Usage)?;
    let threads = crate::tail::threads(&config);
    let block_bytes = options.block_bytes;
    let progress = Progress::for_files(inputs.iter().map(|i| i.path.as_str()), options.progress);
    let line = progress.clone();
    let guards = timely::execute(config, move |worker| {
        let index = worker.index();
        let mut sessions: Vec<InputSession<SysTime, Record, isize>> =
            inputs.iter().map(|_| InputSession::new()).collect();
        let mut malformed = InputSession::<SysTime, RowError, isize>::new();
        let probe = ProbeHandle::new();
        let lines = Rc::new(RefCell::new(Vec::new()));
        let refused = Rc::new(RefCell::new(Vec::new()));
        let skipped = Rc::new(RefCell::new(Vec::new()));
        worker.dataflow::<SysTime, _, _>(|scope| {
            let collections = std::array::from_fn(|i| sessions[i].to_collection(scope));
            let built = build(collections);
            gather(at_time_zero(built.output), &lines, true, &probe);
            let rejected = malformed.to_collection(scope).concatenate(built.rejected);
            gather(at_time_zero(rejected), &refused, true, &probe);
            let reasons = differential_dataflow::collection::concatenate(scope, built.ignored)
                .map(|e: RowError| e.reason);
            gather(at_time_zero(reasons), &skipped, true, &probe);
        });

        let fed = feed(
            worker,
            &inputs,
            &mut sessions,
            &mut malformed,
            block_bytes,
            &probe,
            &line,
        );
        drop(sessions);
        drop(malformed);
        while worker.step() {}
        fed.map(|()| (index == 0).then(|| (lines.take(), refused.take(), skipped.take())))
    })
    .map_err(Error::Runtime)?;

    let mut gathered: Option<Gathered> = None;
    for result in guards.join() {
        if let Some(g) = result.map_err(Error::Runtime)?? {
            gathered = Some(g);
        }
    }
    progress.finish();
    let Some((lines, refused, skipped)) = gathered else {
        return Ok(Outcome::default());
    };
    let tail = Tail::new(threads);
    let lines = expand(&tail, lines, "output line")?;
    let refused = expand(&tail, refused, "rejected row")?;
    let mut ignored: Vec<(String, usize)> = Vec::new();
    for reason in expand(&tail, skipped, "ignored row")? {
        match ignored.last_mut() {
            Some((r, n)) if *r == reason => *n += 1,
            _ => ignored.push((reason, 1)),
        }
    }
    write_csv(options.output.as_deref(), &header, &tail, &lines, |l| {
        &l.cells
    })?;
    write_report(options.errors.as_deref(), &refused)?;
    Ok(Outcome {
        lines: lines.len(),
        rejected: refused.len(),
        ignored,
        wrote: true,
    })
}

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

/// Feeds `inputs` into `sessions` (malformed rows into `malformed`), one block per epoch, as
/// the module documentation says: block `i` of an input is parsed by worker `i % peers` (a
/// generated table's block by every worker, each making its share of the rows) and entered at
/// epoch `i`; the worker steps after every block and stays at most [`LAG`] epochs
/// ahead of `probe`. At the end every worker advances to the same final epoch and steps until
/// `probe` reaches it. The sessions are left open (drop them to close the inputs). Each parsed
/// block is counted on `progress`.
pub fn feed<I: BlockInput>(
    worker: &mut timely::worker::Worker,
    inputs: &[I],
    sessions: &mut [InputSession<SysTime, I::Record, isize>],
    malformed: &mut InputSession<SysTime, RowError, isize>,
    block_bytes: usize,
    probe: &ProbeHandle<SysTime>,
    progress: &Progress,
) -> Result<(), Error> {
    let (index, peers) = (worker.index() as u64, worker.peers() as u64);
    let owns = |block: u64| block % peers == index;
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
    while let Some((which, epoch)) = next
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.as_ref().map(|b| (i, b.index)))
        .min_by_key(|&(i, epoch)| (epoch, i))
    {
        for s in sessions.iter_mut() {
            s.advance_to(epoch);
        }
        malformed.advance_to(epoch);
        if let Some(block) = next[which].take() {
            let rows = enter_rows(&mut sessions[which], malformed, |out| {
                inputs[which].parse_block(&block, (index, peers), out)
            });
            progress.block(block.bytes.len(), rows);
        }
        next[which] = read(&mut splitters[which], &inputs[which])?;
        for s in sessions.iter_mut() {
            s.flush();
        }
        malformed.flush();
        worker.step();
        let bound = epoch.saturating_sub(LAG);
        worker.step_while(|| probe.less_than(&bound));
    }
    let last = splitters.iter().map(|s| s.blocks_seen()).max().unwrap_or(0);
    for s in sessions.iter_mut() {
        s.advance_to(last);
        s.flush();
    }
    malformed.advance_to(last);
    malformed.flush();
    worker.step_while(|| probe.less_than(&last));
    Ok(())
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

/// Exchanges a collection's updates to worker 0 and keeps them there with their system times,
/// moved out of the messages (not copied), and attaches `probe` to the flow.
///
/// With `consolidate` (the caller wants the collection's final contents, not its history),
/// each worker first folds its own updates into their net `(data, time, diff)` (see
/// [`fold_until_complete`]), dropping what cancels, and sends only the net updates when its
/// input is complete: a dedup's or a merge engine's churn (`-U`/`+U` pairs, one per replaced
/// row) then never reaches worker 0, which receives each worker's share of the final table
/// once. Memory on a worker is at most twice its share of that table. The probe then watches the flow *before* the fold, which
/// holds its capability until the end of input (so the driver's lag bound still advances).
/// Worker 0 only collects: what several workers sent of the same row is consolidated by the
/// caller's tail, after a parallel sort.
pub(crate) fn gather<'s, D: ExchangeData + Ord>(
    collection: VecCollection<'s, SysTime, D>,
    into: &Rc<RefCell<Vec<(D, SysTime, isize)>>>,
    consolidate: bool,
    probe: &ProbeHandle<SysTime>,
) {
    let sink = Rc::clone(into);
    let updates = if consolidate {
        fold_until_complete(collection.inner.probe_with(probe))
    } else {
        collection.inner
    };
    let gathered = updates
        .exchange(|_| 0)
        .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Gather", move |_, _| {
            move |input, _| {
                let mut held = sink.borrow_mut();
                input.for_each(|_, updates| held.append(updates));
            }
        });
    if !consolidate {
        gathered.probe_with(probe);
    }
}

/// The net updates of a worker's share of a stream, emitted once its input is complete (see
/// [`gather`]), sorted by `(data, time)`.
///
/// Updates are appended to a buffer that is sorted and consolidated whenever it has doubled
/// since it was last consolidated, so it holds at most twice the live `(data, time)` entries
/// (plus one batch), and a row is compared, never hashed: output rows are long, and their
/// order is decided by a short prefix (an output line's `seq` and kind).
fn fold_until_complete<'s, D: ExchangeData + Ord>(
    updates: timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>>,
) -> timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>> {
    let mut net: Vec<(D, SysTime, isize)> = Vec::new();
    let mut consolidated = 0;
    let mut capability = None;
    updates.unary_frontier::<CapacityContainerBuilder<Vec<_>>, _, _, _>(
        Pipeline,
        "FoldUntilComplete",
        move |_, _| {
            move |(input, frontier), output| {
                let port = output.output_index();
                input.for_each(|cap, updates| {
                    if let Some(cap) = cap.retain_least(port) {
                        if capability
                            .as_ref()
                            .is_none_or(|held: &Capability<SysTime>| cap.time() < held.time())
                        {
                            capability = Some(cap);
                        }
                    }
                    net.append(updates);
                    if net.len() >= 2 * consolidated.max(FOLD_BATCH) {
                        consolidate_updates(&mut net);
                        consolidated = net.len();
                    }
                });
                if frontier.is_empty() {
                    if let Some(cap) = capability.take() {
                        consolidate_updates(&mut net);
                        output
                            .session(&cap)
                            .give_iterator(std::mem::take(&mut net).into_iter());
                    }
                }
            }
        },
    )
}

/// The fold's smallest consolidation: a buffer of fewer updates is left as it is.
const FOLD_BATCH: usize = 1 << 12;

/// The updates of `collection` at time 0: what is gathered of a command's output, whose
/// lines are placed by their source position, not by the system time they were emitted at.
fn at_time_zero<'s, D: ExchangeData>(
    collection: VecCollection<'s, SysTime, D>,
) -> VecCollection<'s, SysTime, D> {
    collection.inner.map(|(d, _, r)| (d, 0, r)).as_collection()
}

/// Consolidates gathered updates into a sorted list, one entry per unit of count (sorted on
/// the threads of `tail` first, so consolidation only merges neighbours).
fn expand<D: Ord + Clone + Send>(
    tail: &Tail,
    mut updates: Vec<(D, SysTime, isize)>,
    what: &str,
) -> Result<Vec<D>, Error> {
    tail.sort_unstable_by(&mut updates, |a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    consolidate_updates(&mut updates);
    if updates.iter().any(|(_, _, r)| *r < 0) {
        return Err(Error::Runtime(format!(
            "internal error: a {what} was retracted more often than emitted"
        )));
    }
    if updates.iter().all(|(_, _, r)| *r == 1) {
        // The usual case, collected in place (no second buffer of the output).
        return Ok(updates.into_iter().map(|(d, _, _)| d).collect());
    }
    Ok(updates
        .into_iter()
        .flat_map(|(d, _, r)| std::iter::repeat_n(d, r as usize))
        .collect())
}

/// Writes the rejected rows, one `FILE:LINE:COLUMN: reason` line each, to `path` or stderr.
fn write_report(path: Option<&str>, refused: &[RowError]) -> Result<(), Error> {
    use std::io::Write;
    let text: String = refused.iter().map(|e| format!("{e}\n")).collect();
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| Error::io(p, e)),
        None => std::io::stderr()
            .write_all(text.as_bytes())
            .map_err(|e| Error::io("<stderr>", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timely::dataflow::operators::vec::Input;
    use timely::dataflow::operators::Inspect;

    /// The fold sends each worker's net updates per `(data, time)` (cancelled ones dropped,
    /// negative ones kept) and nothing until its input is complete, whatever the batches the
    /// updates came in.
    #[test]
    fn fold_sends_net_updates_once_the_input_is_complete() {
        timely::execute_directly(|worker| {
            let seen = Rc::new(RefCell::new(Vec::new()));
            let sink = Rc::clone(&seen);
            let mut input = worker.dataflow::<SysTime, _, _>(|scope| {
                let (input, updates) = scope.new_input::<(u8, SysTime, isize)>();
                fold_until_complete(updates).inspect(move |u| sink.borrow_mut().push(*u));
                input
            });
            // Epoch 0: `1` inserted; `2` twice; `3` retracted (a net -1 stays).
            for update in [(1, 0, 1), (2, 0, 1), (2, 0, 1), (3, 0, -1)] {
                input.send(update);
            }
            input.advance_to(1);
            // Epoch 1: `1` retracted (cancels across batches), `4` at a later time, and `2`
            // at time 1, which nets apart from `2` at time 0.
            for update in [(1, 0, -1), (4, 1, 1), (2, 1, -1)] {
                input.send(update);
            }
            input.advance_to(2);
            for _ in 0..50 {
                worker.step();
            }
            assert!(
                seen.borrow().is_empty(),
                "sent before the input was complete"
            );
            drop(input);
            while worker.step() {}
            let mut net = seen.take();
            net.sort();
            assert_eq!(net, vec![(2, 0, 2), (2, 1, -1), (3, 0, -1), (4, 1, 1)]);
        });
    }

    /// Past [`FOLD_BATCH`] updates the fold consolidates as it goes: an insert and its later
    /// retraction, many batches apart, still cancel, and what is left is summed once.
    #[test]
    fn fold_consolidates_as_it_goes_over_many_batches() {
        let n = 5 * FOLD_BATCH as u32;
        timely::execute_directly(move |worker| {
            let seen = Rc::new(RefCell::new(Vec::new()));
            let sink = Rc::clone(&seen);
            let mut input = worker.dataflow::<SysTime, _, _>(|scope| {
                let (input, updates) = scope.new_input::<(u32, SysTime, isize)>();
                fold_until_complete(updates).inspect(move |u| sink.borrow_mut().push(*u));
                input
            });
            // Every value inserted, then (an epoch later) every odd one retracted and every
            // value divisible by 4 inserted again.
            for v in 0..n {
                input.send((v, 0, 1));
            }
            input.advance_to(1);
            worker.step();
            for v in 0..n {
                if v % 2 == 1 {
                    input.send((v, 0, -1));
                }
                if v % 4 == 0 {
                    input.send((v, 0, 1));
                }
            }
            drop(input);
            while worker.step() {}
            let net = seen.take();
            let expected: Vec<_> = (0..n)
                .step_by(2)
                .map(|v| (v, 0, if v % 4 == 0 { 2 } else { 1 }))
                .collect();
            assert_eq!(net, expected, "sorted, net, one entry per value");
        });
    }

    /// `expand` sorts the output (gathered at time 0, see `at_time_zero`), repeats a row by its
    /// net count (a row emitted twice is written twice), drops what cancelled, and refuses a
    /// net retraction as an internal error.
    #[test]
    fn expand_repeats_rows_by_their_count_and_refuses_a_net_retraction() {
        let tail = Tail::new(1);
        let updates = vec![
            ("b", 0, 1),
            ("a", 0, 1),
            ("c", 0, 1),
            ("b", 0, 1),
            ("c", 0, -1),
        ];
        assert_eq!(expand(&tail, updates, "row").unwrap(), ["a", "b", "b"]);
        let retracted = vec![("a", 0, 1), ("a", 0, -2)];
        let error = expand(&tail, retracted, "row").unwrap_err().to_string();
        assert!(
            error.contains("a row was retracted more often than emitted"),
            "{error}"
        );
    }
}
