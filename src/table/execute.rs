//! Running a plan through the one driver, [`crate::run::execute`]: its sources read in blocks,
//! the plan rendered on every worker, the output changes and the refused rows gathered at
//! worker 0 into a [`TableResult`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use differential_dataflow::AsCollection;
use timely::dataflow::operators::vec::Map;

use crate::csv::Block;
use crate::csv::RowError;
use crate::error::Error;
use crate::io::postgres::Snapshot;
use crate::io::{Generated, TypedSource};
use crate::plan::{ProcessingClock, RelExpr};
use crate::progress::Progress;
use crate::render::{Collection, ExecutionMode, RenderContext};
use crate::repr::Row;
use crate::run::{self, gather, BlockInput, BlockReader, Epochs, Take};
use differential_temporal_operators::{Change, RowKind, SysTime};

use super::result::{Gathered, TableResult};
use super::{TableEnv, TableError};

/// How a [`TableEnv`] runs its plans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecuteOptions {
    /// Timely's arguments (`-w N`, `-n N`, `-p I`, `-h FILE`), without the program name.
    pub timely_args: Vec<String>,
    /// Incremental or final.
    pub mode: ExecutionMode,
    /// Streaming, batch, or batch where it gives the same result (Flink's
    /// `execution.runtime-mode`, see [`RuntimeMode`]).
    pub runtime_mode: RuntimeMode,
    /// Target size of an input block (one system-time epoch), in bytes.
    pub block_bytes: usize,
    /// What worker 0 keeps of the output.
    pub result: ResultForm,
    /// Whether to draw a progress line on standard error while reading the sources
    /// ([`Progress`]: only on a terminal, for large inputs). Off by default.
    pub progress: bool,
    /// The allowed lateness of window aggregations in final mode, in milliseconds (Flink's
    /// `table.exec.emit.allow-lateness`; 0 by default): taken when a window is planned.
    pub allow_lateness_ms: i64,
    /// The idle-state retention of regular joins, in system times (Flink's
    /// `table.exec.state.ttl`; 0, the default, is off): taken when a join is planned
    /// ([`TableEnv::with_state_ttl`]).
    pub state_ttl: SysTime,
    /// The processing-time clock the `PROCTIME()` columns of append-only tables are stamped
    /// with, taken when a table is declared ([`TableEnv::with_processing_clock`]); `None`, the
    /// default, is [`ProcessingClock::wall_clock`] read at the declaration.
    pub processing_clock: Option<ProcessingClock>,
    /// The idle-source timeout (Flink's `table.exec.source.idle-timeout`; zero, the default, is
    /// off), measured on the processing-time clock's ticks when a plan runs
    /// ([`TableEnv::with_idle_timeout`]).
    pub idle_timeout: std::time::Duration,
}

impl ExecuteOptions {
    /// [`idle_timeout`](Self::idle_timeout) in system times: its milliseconds over the tick of
    /// [`processing_clock`](Self::processing_clock) (1 ms by default), rounded up, so that an
    /// input is never idle before the timeout has passed on that clock; `0`: off.
    pub fn idle_timeout_system_times(&self) -> SysTime {
        let tick = self.processing_clock.map_or(1, |c| c.tick_ms.max(1)) as u128;
        let system_times = self.idle_timeout.as_millis().div_ceil(tick);
        SysTime::try_from(system_times).unwrap_or(SysTime::MAX)
    }
}

impl TableEnv {
    /// Lets an input of a final-mode temporal or interval join that sends nothing for `timeout`
    /// stop holding the join's watermark back (Flink's `table.exec.source.idle-timeout`; zero,
    /// the default, is off, as in Flink). SQL sets it with `SET
    /// 'table.exec.source.idle-timeout' = '5 s'`.
    ///
    /// The timeout is measured on the processing-time clock
    /// ([`with_processing_clock`](TableEnv::with_processing_clock), one tick of 1 ms a system
    /// time by default), not on the wall clock, so results stay deterministic: `N = timeout /
    /// tick` system times, rounded up. An input with no row in the `N` system times before `s`
    /// is idle at `s`: it is left out of the join's combined watermark, which never goes back;
    /// when both inputs are idle the watermark stays. An input that sends again holds the
    /// watermark back from its next rows on; its rows behind the watermark are late and
    /// reported. The exact rule is the `combined` module's of the operators crate.
    ///
    /// Without a timeout an input that stops sending holds the other's rows until the inputs
    /// end. A window aggregation, an OVER aggregation or a deduplication has one input: the
    /// timeout does not release it (when its only input is idle, every input is); its windows
    /// stay open until that input sends again or ends.
    ///
    /// ```
    /// use differential_temporal::table::TableEnv;
    /// use std::time::Duration;
    ///
    /// let env = TableEnv::new().with_idle_timeout(Duration::from_millis(5));
    /// assert_eq!(env.options().idle_timeout_system_times(), 5);
    /// ```
    pub fn with_idle_timeout(self, timeout: std::time::Duration) -> TableEnv {
        self.update_options(|options| options.idle_timeout = timeout);
        self
    }
}

/// How a run enters its input (Flink's `execution.runtime-mode`; SQL: `SET
/// 'execution.runtime-mode' = 'batch'`). Streaming, block `i` of each input enters at system
/// time `i`, and the output at each system time is exact for the input so far. Batch, every
/// block enters at system time 0 (the workers still parse their shares of every file in
/// parallel): each operator sees each key once, with all its rows, and emits its final result
/// once, without the updates a streaming run makes and later revises. Rows of the one system
/// time keep their order (`seq`) where the result depends on it (keep-last ties, versions with
/// the same event time), so a batch run's final table is the streaming run's, byte for byte.
///
/// Batch applies only in incremental mode and only to plans that do not read processing time
/// ([`RelExpr::reads_processing_time`]): final mode's watermarks and lateness, lookup joins,
/// `PROCTIME()` stamps, row-count windows and `table.exec.state.ttl` depend on when input
/// arrives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuntimeMode {
    /// Batch when the run asks for its final table only ([`ResultForm::FinalTable`]: `dtemporal
    /// sql --emit final`) in incremental mode and the plan does not read processing time;
    /// streaming otherwise. The default.
    #[default]
    Automatic,
    /// Always streaming (Flink's default `'streaming'`).
    Streaming,
    /// Always batch (Flink's `'batch'`): the changelog of a result is its final table, as `+I`
    /// rows. A run in final mode, or of a plan that reads processing time, is refused.
    Batch,
}

/// Why [`RuntimeMode::Batch`] does not run in final mode.
pub(crate) const BATCH_IN_FINAL_MODE: &str = "'execution.runtime-mode' = 'batch' runs in \
    incremental mode only: final mode's watermarks and lateness depend on the order input \
    arrives in";

impl RuntimeMode {
    /// The system times a run of `plan` (already [`in_execution`](RelExpr::in_execution))
    /// enters its input at under `options` (see [`RuntimeMode`]).
    ///
    /// Errors: [`RuntimeMode::Batch`] in final mode, or over a plan that reads processing time.
    fn epochs(options: &ExecuteOptions, plan: &RelExpr) -> Result<Epochs, TableError> {
        let batch = options.mode == ExecutionMode::Incremental && !plan.reads_processing_time();
        match options.runtime_mode {
            RuntimeMode::Streaming => Ok(Epochs::PerBlock),
            RuntimeMode::Automatic if batch && options.result == ResultForm::FinalTable => {
                Ok(Epochs::One)
            }
            RuntimeMode::Automatic => Ok(Epochs::PerBlock),
            RuntimeMode::Batch if batch => Ok(Epochs::One),
            RuntimeMode::Batch => Err(TableError::Invalid(match options.mode {
                ExecutionMode::Final => BATCH_IN_FINAL_MODE.to_string(),
                ExecutionMode::Incremental => "'execution.runtime-mode' = 'batch' cannot run a \
                    query that reads processing time (PROCTIME(), a lookup join, a row-count \
                    window or 'table.exec.state.ttl'): its result depends on when input arrives"
                    .to_string(),
            })),
        }
    }
}

impl TableEnv {
    /// Runs from now on in `mode` ([`RuntimeMode::Automatic`] by default). SQL sets it with
    /// `SET 'execution.runtime-mode' = 'batch'` (or `'streaming'`, `'automatic'`).
    ///
    /// ```
    /// use differential_temporal::table::{RuntimeMode, TableEnv};
    ///
    /// let env = TableEnv::new();
    /// env.set_runtime_mode(RuntimeMode::Batch);
    /// assert_eq!(env.options().runtime_mode, RuntimeMode::Batch);
    /// ```
    pub fn set_runtime_mode(&self, mode: RuntimeMode) {
        self.update_options(|options| options.runtime_mode = mode);
    }
}

/// What a run keeps of its output at worker 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResultForm {
    /// Every change with the system time it was emitted at: [`TableResult::changelog`] is
    /// the changelog, as Flink's `TableResult` prints it.
    #[default]
    Changelog,
    /// The final table only: each worker folds its changes into their net effect and sends
    /// that to worker 0 at the end of input, so worker 0 holds about the final table (each
    /// worker's share of it) instead of every change; [`TableResult::changelog`] is then the
    /// final table as `+I` rows at system time 0. The CLI's `sql --emit final` runs queries so.
    FinalTable,
}

impl Default for ExecuteOptions {
    fn default() -> Self {
        ExecuteOptions {
            timely_args: Vec::new(),
            mode: ExecutionMode::Incremental,
            runtime_mode: RuntimeMode::Automatic,
            block_bytes: 64 * 1024,
            result: ResultForm::Changelog,
            progress: false,
            allow_lateness_ms: 0,
            state_ttl: 0,
            processing_clock: None,
            idle_timeout: std::time::Duration::ZERO,
        }
    }
}

/// Runs `plan` with `env`'s sources and options; the result is whole in the process hosting
/// worker 0 (other processes of a cluster get an empty result with `complete = false`).
pub(super) fn execute(env: &TableEnv, plan: &RelExpr) -> Result<TableResult, TableError> {
    let options = env.options();
    // The output's changelog mode is the one of the mode it runs in (an incremental temporal
    // join retracts), which decides whether the final table folds.
    let plan = &plan
        .in_execution(options.mode)
        .map_err(|e| TableError::Plan {
            operation: "execute",
            source: e,
        })?;
    let mut names = Vec::new();
    let mut inputs = Vec::new();
    for name in plan.scans() {
        let source = env.source(name)?;
        if let Some(generated) = source.generated {
            generated.check_bounded().map_err(TableError::Invalid)?;
            // A block of about `block_bytes`, counting 64 bytes a generated row: 1024 rows by
            // default, one row a system time at `with_block_bytes(1)` as for files.
            let block_rows = (options.block_bytes / GENERATED_ROW_BYTES).max(1) as u64;
            names.push(name.to_string());
            inputs.push(Input::Generated(generated.with_block_rows(block_rows)));
            continue;
        }
        if let Some(postgres) = source.postgres {
            postgres.check_bounded().map_err(TableError::Invalid)?;
            names.push(name.to_string());
            inputs.push(Input::Postgres(postgres.snapshot()?));
            continue;
        }
        let (files, _) =
            TypedSource::open_table(&source.path, Some(source.schema.clone()), &source.format)?;
        for file in files {
            names.push(name.to_string());
            inputs.push(Input::File(file));
        }
    }
    let files = inputs.iter().filter_map(|i| match i {
        Input::File(f) => Some(f.path()),
        Input::Generated(_) | Input::Postgres(_) => None,
    });
    let progress = Progress::for_files(files, options.progress);
    let worker_plan = plan.clone();
    let mode = options.mode;
    let idle_timeout = options.idle_timeout_system_times();
    // A result with an upsert key is folded by that key in emission order (Flink's sink
    // materializer, `TableResult::final_rows`): it needs the changelog, not the multiset.
    let keyed_final = options.result == ResultForm::FinalTable && plan.mode.upsert_key().is_some();
    let final_table = options.result == ResultForm::FinalTable && !keyed_final;
    // An append-only output never retracts: its final table is every change, nothing to fold.
    let consolidate = final_table && !plan.mode.is_append_only();
    let epochs = RuntimeMode::epochs(&options, plan)?;
    let finished = run::execute(
        &options.timely_args,
        inputs,
        (options.block_bytes, epochs),
        &progress,
        move |scope, files, malformed, probe| {
            // A table of several files is the concatenation of their changelogs.
            let mut sources = BTreeMap::new();
            for (name, file) in names.iter().zip(files) {
                let table = match sources.remove(name) {
                    Some(others) => file.concat(others),
                    None => file,
                };
                sources.insert(name.clone(), table);
            }
            let mut ctx = RenderContext::new(scope, sources, mode);
            ctx.idle_timeout = idle_timeout;
            let rendered = ctx.render(&worker_plan).map_err(|e| TableError::Plan {
                operation: "execute",
                source: e,
            })?;
            let (changes, mut table_form) = match rendered {
                Collection::Changelog(changes) => (changes, false),
                Collection::Table(rows) => {
                    (rows.map(|row| Change::new(0, RowKind::Insert, row)), true)
                }
            };
            let output = Rc::new(RefCell::new(Vec::new()));
            if final_table {
                // The final table is a multiset of rows: a change's time and kind only matter as
                // its sign, its seq (its line) names a retraction of a row not held
                // (`TableResult::new`).
                table_form = false;
                let rows = changes.inner.map(|(change, _, diff)| {
                    let diff = if change.kind.is_accumulate() {
                        diff
                    } else {
                        -diff
                    };
                    (
                        Change::new(change.seq, RowKind::Insert, change.row),
                        0,
                        diff,
                    )
                });
                gather(rows.as_collection(), &output, consolidate, probe);
            } else {
                gather(changes, &output, false, probe);
            }
            let refused = Rc::new(RefCell::new(Vec::new()));
            let refusals = differential_dataflow::collection::concatenate(scope, ctx.refused);
            gather(refusals, &refused, false, probe);
            let bad_rows = Rc::new(RefCell::new(Vec::new()));
            gather(malformed, &bad_rows, false, probe);
            let take: Take<Gathered> = Box::new(move || Gathered {
                output: output.take(),
                table_form,
                keyed_final,
                refused: refused.take(),
                malformed: bad_rows.take(),
            });
            Ok::<_, TableError>(take)
        },
    )?;
    Ok(TableResult::new(
        plan.schema.clone(),
        plan.mode.clone(),
        finished,
    ))
}

/// The size a generated row counts for when a run's `block_bytes` is cut into rows.
const GENERATED_ROW_BYTES: usize = 64;

/// One input of a run: a file of a table, a generated table, or a PostgreSQL table's snapshot.
enum Input {
    File(TypedSource),
    Generated(Generated),
    Postgres(Snapshot),
}

impl BlockInput for Input {
    type Record = Change<Row>;
    fn path(&self) -> &str {
        match self {
            Input::File(f) => f.path(),
            Input::Generated(g) => g.path(),
            Input::Postgres(p) => p.path(),
        }
    }
    fn blocks(&self, block_bytes: usize) -> Result<Box<dyn BlockReader>, Error> {
        match self {
            Input::File(f) => BlockInput::blocks(f, block_bytes),
            Input::Generated(g) => g.blocks(block_bytes),
            Input::Postgres(p) => Ok(Box::new(p.blocks())),
        }
    }
    fn parse_block(
        &self,
        block: &Block,
        worker: (u64, u64),
        out: &mut dyn FnMut(Result<Change<Row>, RowError>),
    ) {
        match self {
            Input::File(f) => BlockInput::parse_block(f, block, worker, out),
            Input::Generated(g) => g.parse_block(block, worker, out),
            Input::Postgres(p) => p.block_rows(block, worker, out),
        }
    }
}
