//! A live run of a plan over sources that keep growing: the engine of CONTINUOUS materialized
//! tables. A bounded run ([`Table::execute`](super::Table::execute)) reads its sources once
//! and ends; a live run keeps its dataflow (its arrangements and its operators' state) and
//! takes new input in **rounds**, so that a round costs what its rows change.
//!
//! Rounds: the caller (the driver) pushes a round, a list of [`RoundInput`]s, with
//! [`LiveRun::push_round`]; round `r` is entered at system time `r`. Of a round's files, block
//! `i` (counted over the round's files in order) is read by worker `i % peers`; a file's record
//! on line `l` has `seq = r * 2^32 + l * files + position`, its file's position among the
//! round's files of its table (as a bounded run numbers a directory's files, after the round's
//! number: `seq` grows with the rounds, so that arrival order decides between rows of equal
//! event time across rounds as within one, rule A4). Of a round's generated rows
//! `from..to`, row `i` is made by worker `i % peers` with `seq = i`. Of a round's changes
//! (a change stream's, read by the driver), change `i` is entered by worker `i % peers` with
//! `seq = r * 2^32 + i`.
//!
//! Result ([`Keep`]): worker 0 applies a round's changes once the round is complete (every
//! worker has processed every system time up to it), either to a table (each row with its
//! multiplicity) grouped by the values of the partition columns given to [`LiveRun::start`], so
//! that [`LiveRun::rows_of`] after [`LiveRun::wait_for`] is the result of every round so far:
//! a consistent snapshot, never part of a round (the partitions a round changed are noted,
//! [`LiveRun::take_changed`], so that a snapshot rewrites only those); or to a list of the
//! changes themselves ([`LiveRun::take_changes`]), for a caller that writes a changelog.
//! Malformed and refused rows of a round are kept as [`LiveRun::problems`], never dropped
//! silently.
//!
//! Threads only: the driver and the workers share memory, so a live run refuses timely's
//! process options (`-n`, `-p`, `-h`).

use std::cell::RefCell;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
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
use crate::io::{Generated, TypedSource};
use crate::plan::RelExpr;
use crate::render::{ExecutionMode, RenderContext};
use crate::repr::{DatumVec, Row, Schema};
use crate::run::{enter_rows, gather, BlockInput};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{Change, Seq, SysTime};

use super::{ExecuteOptions, TableError};

/// New input of one scanned table, for one round.
pub(crate) enum RoundInput {
    /// Files of table `.0` (opened together, see the [module docs](self)).
    Files(String, Vec<TypedSource>),
    /// Rows `.2` of the generated table `.0`.
    Rows(String, Generated, Range<u64>),
    /// Changes of table `.0`, in order (their `seq` is given by the round, see the
    /// [module docs](self)).
    Changes(String, Arc<Vec<Change<Row>>>),
}

/// What worker 0 does with the changes of a complete round.
pub(crate) enum Keep {
    /// Applies them to the result table, grouped by the values of these columns (none: one
    /// group).
    Table(Vec<usize>),
    /// Keeps them for [`LiveRun::take_changes`].
    Changes,
}

/// What the driver and the workers share.
#[derive(Default)]
struct State {
    rounds: Vec<Arc<Vec<RoundInput>>>,
    closed: bool,
    /// Rounds whose changes are in `table`.
    complete: u64,
    /// The result: per partition key (the partition columns' values), its rows.
    table: BTreeMap<Row, BTreeMap<Row, isize>>,
    /// The partition keys whose rows changed since [`LiveRun::take_changed`].
    changed_partitions: BTreeSet<Row>,
    /// With [`Keep::Changes`]: the changes of complete rounds not taken yet, each row with its
    /// system time (its round) and diff.
    changes: Vec<(Row, SysTime, isize)>,
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
    /// its scans fed from rounds (every table the plan scans is one of `tables`), its result
    /// kept as `keep` says.
    ///
    /// Errors: the plan cannot be rendered (reported by the first worker), no thread can be
    /// started.
    pub(crate) fn start(
        plan: &RelExpr,
        tables: Vec<String>,
        keep: Keep,
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
            let result = (&keep, &*run);
            let worked = crate::run::on_worker_stack(|| {
                work(worker, &plan, &tables, render, block_bytes, result)
            });
            if let Err(e) = worked {
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

    /// The partition keys of the result (of every complete round), in key order.
    pub(crate) fn partitions(&self) -> Vec<Row> {
        self.shared.lock().table.keys().cloned().collect()
    }

    /// The partition keys whose rows changed since the last call (every key a row ever had,
    /// on the first), in key order; notes them as seen.
    pub(crate) fn take_changed(&self) -> Vec<Row> {
        std::mem::take(&mut self.shared.lock().changed_partitions)
            .into_iter()
            .collect()
    }

    /// The rows of the partitions `keys` (`None`: all) of every complete round, row by row
    /// (a row of multiplicity `n` `n` times), in key, then row order.
    pub(crate) fn rows_of(&self, keys: Option<&[Row]>) -> Vec<Row> {
        let state = self.shared.lock();
        let mut rows = Vec::new();
        let mut take = |partition: &BTreeMap<Row, isize>| {
            for (row, &count) in partition {
                // A row retracted more often than inserted (reported, see `apply_to_table`)
                // is held zero times.
                rows.extend(std::iter::repeat_n(row, count.max(0) as usize).cloned());
            }
        };
        match keys {
            None => state.table.values().for_each(&mut take),
            Some(keys) => keys
                .iter()
                .filter_map(|k| state.table.get(k))
                .for_each(&mut take),
        }
        rows
    }

    /// With [`Keep::Changes`]: the changes of the complete rounds not taken yet, in round
    /// order, each row with its round and diff (not consolidated).
    pub(crate) fn take_changes(&self) -> Vec<(Row, SysTime, isize)> {
        std::mem::take(&mut self.shared.lock().changes)
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
    (keep, shared): (&Keep, &Shared),
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
        // A row keeps its position (`seq`): a retraction of a row not held is reported at it.
        let rows = changes.inner.map(|(change, time, diff)| {
            ((change.row, change.seq), time, diff * change.kind.sign())
        });
        gather(rows.as_collection(), &output, false, &probe);
        let refusals = differential_dataflow::collection::concatenate(scope, ctx.refused);
        gather(refusals, &refused, false, &probe);
        gather(malformed.to_collection(scope), &bad_rows, false, &probe);
        Ok::<_, crate::plan::PlanError>(())
    });
    rendered.map_err(|e| e.to_string())?;
    // Worker 0 applies the complete rounds' changes to the shared table.
    let apply = |fed: u64| {
        if index == 0 {
            let gathered = (&output, &refused, &bad_rows);
            apply_complete((shared, keep, &plan.schema), &probe, fed, gathered);
        }
    };
    let mut fed = 0u64;
    loop {
        let (todo, closed) = {
            let state = shared.lock();
            (state.rounds[fed as usize..].to_vec(), state.closed)
        };
        for round in &todo {
            feed_round(
                (fed, round),
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
        apply(fed);
        if closed && todo.is_empty() {
            break;
        }
        worker.step_or_park(Some(PARK));
    }
    drop(sessions);
    drop(malformed);
    while worker.step_or_park(None) {}
    apply(fed);
    Ok(())
}

/// What worker 0 gathers: the output's rows with their positions, the refused and the
/// malformed rows, each with its system time and diff.
type Gathered<'a> = (
    &'a Rc<RefCell<Vec<((Row, Seq), SysTime, isize)>>>,
    &'a Rc<RefCell<Vec<(Rejected, SysTime, isize)>>>,
    &'a Rc<RefCell<Vec<(RowError, SysTime, isize)>>>,
);

/// The bits of a file record's `seq` below its round number (see the [module docs](self)).
const ROUND_SEQ_SHIFT: u32 = 32;

/// Enters round `number`'s rows of this worker (see the [module docs](self)).
fn feed_round(
    (number, round): (u64, &[RoundInput]),
    worker: (u64, u64),
    block_bytes: usize,
    sessions: &mut BTreeMap<String, InputSession<SysTime, Change<Row>, isize>>,
    malformed: &mut InputSession<SysTime, RowError, isize>,
) -> Result<(), String> {
    let (index, peers) = worker;
    // Blocks are dealt to the workers over the round's files in order.
    let mut dealt = 0u64;
    for input in round {
        let (RoundInput::Files(table, _)
        | RoundInput::Rows(table, ..)
        | RoundInput::Changes(table, _)) = input;
        let session = sessions
            .get_mut(table)
            .expect("a round feeds scanned tables");
        match input {
            RoundInput::Files(_, files) => {
                for file in files {
                    let mut blocks =
                        BlockInput::blocks(file, block_bytes).map_err(|e| e.to_string())?;
                    let owns = |b: u64| (dealt + b) % peers == index;
                    while let Some(block) = blocks
                        .next_owned(&owns)
                        .map_err(|e| Error::io(file.path(), e).to_string())?
                    {
                        let first = number << ROUND_SEQ_SHIFT;
                        enter_rows(session, malformed, |out| {
                            BlockInput::parse_block(file, &block, worker, &mut |record| {
                                out(record.map(|mut c| {
                                    c.seq += first;
                                    c
                                }))
                            })
                        });
                    }
                    dealt += blocks.blocks_seen();
                }
            }
            RoundInput::Rows(_, source, rows) => {
                enter_rows(session, malformed, |out| {
                    source.generate_rows(rows.clone(), worker, out)
                });
            }
            RoundInput::Changes(table, changes) => {
                if changes.len() as u64 >= 1 << ROUND_SEQ_SHIFT {
                    return Err(format!(
                        "round {number} read {} changes of table '{table}', more than a round numbers ({})",
                        changes.len(),
                        1u64 << ROUND_SEQ_SHIFT
                    ));
                }
                let first = number << ROUND_SEQ_SHIFT;
                let mine = changes.iter().enumerate().skip(index as usize);
                for (i, change) in mine.step_by(peers as usize) {
                    let row = change.row.clone();
                    session.insert(Change::new(first + i as u64, change.kind, row));
                }
            }
        }
    }
    Ok(())
}

/// On worker 0: once every round before `fed` is complete, applies the gathered changes of
/// the complete rounds as `keep` says (to the shared table, noting the partitions they change,
/// or to the list of changes) and records their malformed and refused rows.
fn apply_complete(
    (shared, keep, schema): (&Shared, &Keep, &Schema),
    probe: &ProbeHandle<SysTime>,
    fed: u64,
    (output, refused, bad_rows): Gathered<'_>,
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
    let state = &mut *state;
    let mut problems = Vec::new();
    match keep {
        Keep::Table(columns) => apply_to_table(state, (columns, schema), done, &mut problems),
        Keep::Changes => (state.changes).extend(done.into_iter().map(|((r, _), t, d)| (r, t, d))),
    }
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

/// Applies `done` (rows with their positions and diffs) to the result table, grouped by the
/// values of `partition_columns`, noting the partitions they change. Per row, its changes
/// are applied in `seq` order (an insertion first); a retraction that leaves the row's count
/// below zero (a retraction of a row the table does not hold: a changelog file's `-D`
/// without an earlier `+I`) is reported in `problems` at its `seq`, as a bounded run's
/// result reports it (`TableResult::refused`). Its count stays negative: the row's later
/// insertions pay it first, and [`LiveRun::rows_of`] holds it zero times meanwhile.
fn apply_to_table(
    state: &mut State,
    (partition_columns, schema): (&[usize], &Schema),
    mut done: Vec<((Row, Seq), SysTime, isize)>,
    problems: &mut Vec<String>,
) {
    done.sort_by(|((a, s), _, d), ((b, t), _, e)| (a, s, *d < 0).cmp(&(b, t, *e < 0)));
    let mut datums = DatumVec::new();
    for ((row, seq), _, diff) in done {
        // An unpartitioned table's key is the empty row, which holds no allocation.
        let key = match partition_columns {
            [] => Row::new(),
            columns => {
                let datums = datums.borrow_with(&row);
                Row::pack(columns.iter().map(|&c| datums[c]))
            }
        };
        if !state.table.contains_key(&key) {
            state.table.insert(key.clone(), BTreeMap::new());
        }
        let partition = state.table.get_mut(&key).expect("inserted above");
        let before = partition.get(&row).copied().unwrap_or(0);
        if diff < 0 && before + diff < 0 {
            let datums = datums.borrow_with(&row);
            let all: Vec<usize> = (0..schema.len()).collect();
            problems.push(format!(
                "refused row (seq {seq}): {}",
                super::result::unheld_retraction(&datums, &all, schema)
            ));
        }
        match partition.entry(row) {
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
        if partition.is_empty() {
            state.table.remove(&key);
        }
        if !state.changed_partitions.contains(&key) {
            state.changed_partitions.insert(key);
        }
    }
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
