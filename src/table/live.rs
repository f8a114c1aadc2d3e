//! A live run of a plan over sources that keep growing: the engine of CONTINUOUS materialized
//! tables. A bounded run ([`Table::execute`](super::Table::execute)) reads its sources once
//! and ends; a live run keeps its dataflow (its arrangements and its operators' state) and
//! takes new input in **rounds**, so that a round costs what its rows change.
//!
//! Rounds: the caller (the driver) pushes a round, a list of [`RoundInput`]s, with
//! [`LiveRun::push_round`]; round `r` is entered at system time `r`. Of a round's files, block
//! `i` (counted over the round's files in order) is read by worker `i % peers`; a file's record
//! on line `l` has `seq = l * files + position`, its file's position among the round's files
//! of its table (as a bounded run numbers a directory's files). Of a round's generated rows
//! `from..to`, row `i` is made by worker `i % peers` with `seq = i`.
//!
//! Result: worker 0 keeps the plan's result as a table (each row with its multiplicity), and
//! applies a round's changes to it once the round is complete (every worker has processed
//! every system time up to it), so that [`LiveRun::snapshot`] after
//! [`LiveRun::wait_for`] is the result of every round so far: a consistent snapshot, never
//! part of a round. Malformed and refused rows of a round are kept as
//! [`LiveRun::problems`], never dropped silently.
//!
//! Threads only: the driver and the workers share memory, so a live run refuses timely's
//! process options (`-n`, `-p`, `-h`).

use std::cell::RefCell;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use differential_dataflow::input::InputSession;
use differential_dataflow::AsCollection;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::ProbeHandle;

use crate::csv::RowError;
use crate::error::Error;
use crate::io::{DatagenSource, TypedSource};
use crate::plan::RelExpr;
use crate::render::{ExecutionMode, RenderContext};
use crate::repr::Row;
use crate::run::gather;
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{Change, RowKind, SysTime};

use super::{ExecuteOptions, TableError};

/// New input of one scanned table, for one round.
pub(crate) enum RoundInput {
    /// Files of table `.0` (opened together, see the [module docs](self)).
    Files(String, Vec<TypedSource>),
    /// Rows `.2` of the generated table `.0`.
    Rows(String, Arc<DatagenSource>, Range<u64>),
}

/// What the driver and the workers share.
#[derive(Default)]
struct State {
    rounds: Vec<Arc<Vec<RoundInput>>>,
    closed: bool,
    /// Rounds whose changes are in `table`.
    complete: u64,
    table: BTreeMap<Row, isize>,
    problems: Vec<String>,
    failed: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked holding the lock leaves it poisoned; its state is still whole
        // (every update is applied under the lock in one step), and the panic is reported by
        // `close`.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running live dataflow (see the [module docs](self)).
pub(crate) struct LiveRun {
    shared: Arc<Shared>,
    guards: Option<timely::communication::initialize::WorkerGuards<()>>,
}

/// How long an idle worker parks before it looks for a new round again.
const PARK: Duration = Duration::from_millis(2);

impl LiveRun {
    /// Starts `plan` on `workers` threads with `options` (mode, block size, idle timeout),
    /// its scans fed from rounds (every table the plan scans is one of `tables`).
    ///
    /// Errors: the plan cannot be rendered (reported by the first worker), no thread can be
    /// started.
    pub(crate) fn start(
        plan: &RelExpr,
        tables: Vec<String>,
        workers: usize,
        options: &ExecuteOptions,
    ) -> Result<LiveRun, TableError> {
        let (mode, block_bytes) = (options.mode, options.block_bytes);
        let idle_timeout = options.idle_timeout_system_times();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let config = timely::Config::process(workers.max(1));
        let plan = plan.clone();
        let run = Arc::clone(&shared);
        let guards = timely::execute(config, move |worker| {
            let render = (mode, idle_timeout);
            if let Err(e) = work(worker, &plan, &tables, render, block_bytes, &run) {
                let mut state = run.lock();
                state.failed.get_or_insert(e);
                run.changed.notify_all();
            }
        })
        .map_err(Error::Runtime)?;
        let run = LiveRun {
            shared,
            guards: Some(guards),
        };
        Ok(run)
    }

    /// Adds a round; returns its number (its system time).
    pub(crate) fn push_round(&self, inputs: Vec<RoundInput>) -> u64 {
        let mut state = self.shared.lock();
        state.rounds.push(Arc::new(inputs));
        (state.rounds.len() - 1) as u64
    }

    /// Errors: a worker failed (its message), e.g. the plan could not be rendered.
    pub(crate) fn check(&self) -> Result<(), TableError> {
        match &self.shared.lock().failed {
            Some(e) => Err(TableError::Invalid(e.clone())),
            None => Ok(()),
        }
    }

    /// Waits until round `round` is complete; `Ok(false)` if `stop` was set first (looked at
    /// every 20 ms).
    ///
    /// Errors: a worker failed (its message).
    pub(crate) fn wait_for(&self, round: u64, stop: &AtomicBool) -> Result<bool, TableError> {
        let mut state = self.shared.lock();
        loop {
            if let Some(e) = &state.failed {
                return Err(TableError::Invalid(e.clone()));
            }
            if state.complete > round {
                return Ok(true);
            }
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, Duration::from_millis(20))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The result of every complete round, row by row (a row of multiplicity `n` `n` times),
    /// in row order.
    pub(crate) fn snapshot(&self) -> Vec<Row> {
        let state = self.shared.lock();
        let mut rows = Vec::new();
        for (row, &count) in &state.table {
            rows.extend(std::iter::repeat_n(row, count.max(0) as usize).cloned());
        }
        rows
    }

    /// The malformed and refused rows of the complete rounds not taken yet, as text.
    pub(crate) fn problems(&self) -> Vec<String> {
        std::mem::take(&mut self.shared.lock().problems)
    }

    /// Ends the run: the workers finish the rounds pushed so far and stop.
    ///
    /// Errors: a worker failed or panicked.
    pub(crate) fn close(mut self) -> Result<(), TableError> {
        self.shut()
    }

    fn shut(&mut self) -> Result<(), TableError> {
        {
            let mut state = self.shared.lock();
            state.closed = true;
        }
        if let Some(guards) = self.guards.take() {
            for result in guards.join() {
                result.map_err(|e| TableError::Invalid(format!("a worker failed: {e}")))?;
            }
        }
        match self.shared.lock().failed.take() {
            Some(e) => Err(TableError::Invalid(e)),
            None => Ok(()),
        }
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        // Joins the workers; their failure was reported by `wait_for` or is moot now.
        let _ = self.shut();
    }
}

/// The number of worker threads timely's `args` ask for (`-w N`; 1 without it).
///
/// Errors: arguments timely refuses, or a cluster of processes (`-n`, `-p`, `-h`), which a
/// live run cannot share its rounds with.
pub(crate) fn workers(args: &[String]) -> Result<usize, TableError> {
    let args = std::iter::once("dtemporal".to_string()).chain(args.iter().cloned());
    let config = timely::Config::from_args(args).map_err(Error::Usage)?;
    match config.communication {
        timely::CommunicationConfig::Thread => Ok(1),
        timely::CommunicationConfig::Process(n) => Ok(n),
        _ => Err(TableError::Invalid(
            "a CONTINUOUS refresh runs its workers as threads of one process: use -w N, not -n, -p or -h".into(),
        )),
    }
}

/// One worker's part of the run: renders the plan, then feeds the rounds as they come and, on
/// worker 0, applies each complete round's changes to the shared table.
fn work(
    worker: &mut timely::worker::Worker,
    plan: &RelExpr,
    tables: &[String],
    (mode, idle_timeout): (ExecutionMode, SysTime),
    block_bytes: usize,
    shared: &Shared,
) -> Result<(), String> {
    let (index, peers) = (worker.index() as u64, worker.peers() as u64);
    let mut sessions: BTreeMap<String, InputSession<SysTime, Change<Row>, isize>> = tables
        .iter()
        .map(|t| (t.clone(), InputSession::new()))
        .collect();
    let mut malformed = InputSession::<SysTime, RowError, isize>::new();
    let probe = ProbeHandle::new();
    let output = Rc::new(RefCell::new(Vec::new()));
    let refused = Rc::new(RefCell::new(Vec::new()));
    let bad_rows = Rc::new(RefCell::new(Vec::new()));
    let rendered = worker.dataflow::<SysTime, _, _>(|scope| {
        let sources = sessions
            .iter_mut()
            .map(|(name, session)| (name.clone(), session.to_collection(scope)))
            .collect();
        let mut ctx = RenderContext::new(scope, sources, mode);
        ctx.idle_timeout = idle_timeout;
        let changes = ctx.render(plan)?.into_changelog();
        let rows = changes
            .inner
            .map(|(change, time, diff)| (change.row, time, diff * change.kind.sign()));
        gather(rows.as_collection(), &output, false, &probe);
        let refusals = differential_dataflow::collection::concatenate(scope, ctx.refused);
        gather(refusals, &refused, false, &probe);
        gather(malformed.to_collection(scope), &bad_rows, false, &probe);
        Ok::<_, crate::plan::PlanError>(())
    });
    rendered.map_err(|e| e.to_string())?;
    let mut fed = 0u64;
    loop {
        let (todo, closed) = {
            let state = shared.lock();
            (state.rounds[fed as usize..].to_vec(), state.closed)
        };
        for round in &todo {
            feed_round(
                round,
                (index, peers),
                block_bytes,
                &mut sessions,
                &mut malformed,
            )?;
            fed += 1;
            for session in sessions.values_mut() {
                session.advance_to(fed);
                session.flush();
            }
            malformed.advance_to(fed);
            malformed.flush();
            worker.step();
        }
        if index == 0 {
            apply_complete(shared, &probe, fed, &output, &refused, &bad_rows);
        }
        if closed && todo.is_empty() {
            break;
        }
        worker.step_or_park(Some(PARK));
    }
    drop(sessions);
    drop(malformed);
    while worker.step() {}
    if index == 0 {
        apply_complete(shared, &probe, fed, &output, &refused, &bad_rows);
    }
    Ok(())
}

/// Enters `round`'s rows of this worker (see the [module docs](self)).
fn feed_round(
    round: &[RoundInput],
    (index, peers): (u64, u64),
    block_bytes: usize,
    sessions: &mut BTreeMap<String, InputSession<SysTime, Change<Row>, isize>>,
    malformed: &mut InputSession<SysTime, RowError, isize>,
) -> Result<(), String> {
    // Blocks are dealt to the workers over the round's files in order.
    let mut dealt = 0u64;
    for input in round {
        match input {
            RoundInput::Files(table, files) => {
                let session = sessions
                    .get_mut(table)
                    .expect("a round feeds scanned tables");
                for file in files {
                    let mut blocks = file.blocks(block_bytes).map_err(|e| e.to_string())?;
                    let owns = |b: u64| (dealt + b) % peers == index;
                    while let Some(block) = blocks
                        .next_owned(owns)
                        .map_err(|e| Error::io(file.path(), e).to_string())?
                    {
                        file.parse_block(&block, |row| match row {
                            Ok(change) => session.insert(change),
                            Err(error) => malformed.insert(error),
                        });
                    }
                    dealt += blocks.blocks_seen();
                }
            }
            RoundInput::Rows(table, source, rows) => {
                let session = sessions
                    .get_mut(table)
                    .expect("a round feeds scanned tables");
                let (mut scratch, mut text) = (Row::new(), String::new());
                for i in crate::io::datagen::worker_share(rows.start, rows.end, index, peers) {
                    let row = source.row(i, &mut scratch, &mut text);
                    session.insert(Change::new(i, RowKind::Insert, row));
                }
            }
        }
    }
    Ok(())
}

/// On worker 0: once every round before `fed` is complete, applies the gathered changes of
/// the complete rounds to the shared table and records their malformed and refused rows.
fn apply_complete(
    shared: &Shared,
    probe: &ProbeHandle<SysTime>,
    fed: u64,
    output: &Rc<RefCell<Vec<(Row, SysTime, isize)>>>,
    refused: &Rc<RefCell<Vec<(Rejected, SysTime, isize)>>>,
    bad_rows: &Rc<RefCell<Vec<(RowError, SysTime, isize)>>>,
) {
    let mut state = shared.lock();
    let complete = (state.complete..=fed)
        .rev()
        .find(|&c| !probe.less_than(&c))
        .unwrap_or(state.complete);
    if complete == state.complete {
        return;
    }
    let mut changes = output.borrow_mut();
    let (done, later): (Vec<_>, Vec<_>) = changes.drain(..).partition(|(_, t, _)| *t < complete);
    *changes = later;
    for (row, _, diff) in done {
        match state.table.entry(row) {
            Entry::Occupied(mut count) => {
                *count.get_mut() += diff;
                if *count.get() == 0 {
                    count.remove();
                }
            }
            Entry::Vacant(count) => {
                count.insert(diff);
            }
        }
    }
    let mut problems = Vec::new();
    take_complete(refused, complete, |r| {
        problems.push(format!("refused row (seq {}): {}", r.seq, r.reason))
    });
    take_complete(bad_rows, complete, |e| {
        problems.push(format!("malformed row: {e}"))
    });
    state.problems.extend(problems);
    state.complete = complete;
    shared.changed.notify_all();
}

/// Takes the records of `held` before system time `complete`, passing each to `f`.
fn take_complete<D>(
    held: &Rc<RefCell<Vec<(D, SysTime, isize)>>>,
    complete: SysTime,
    mut f: impl FnMut(D),
) {
    let mut held = held.borrow_mut();
    let (done, later): (Vec<_>, Vec<_>) = held.drain(..).partition(|(_, t, _)| *t < complete);
    *held = later;
    done.into_iter()
        .filter(|(_, _, d)| *d > 0)
        .for_each(|(d, _, _)| f(d));
}
