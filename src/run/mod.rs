//! The one driver of every run over files or generated tables: the commands' ([`run`]) and the
//! plans' of the Table API and `dtemporal sql` ([`crate::table`]), both through `execute`:
//! read the inputs into a dataflow built on every worker, gather what the caller asks for at
//! worker 0, and hand it back to the process that hosts it.
//!
//! A command resolves its inputs into [`Schema`]s (reading their headers, so a missing column
//! fails before any worker starts), then calls [`run`] with a `build` function that turns the
//! inputs' collections of [`Record`]s into a [`Built`]: the output lines and the rows the
//! operators refused.
//!
//! Reading ([`feed`]): each input is cut into blocks of whole records
//! ([`crate::csv::Splitter`]); block `i` is parsed by worker `i % peers` and entered at system
//! time (epoch) `i`, so the epoch of a row is a function of its position alone and the output
//! does not depend on the worker count. A worker steps the dataflow after every block and runs
//! at most [`LAG`] epochs ahead of the output frontier, so memory holds a bounded number of
//! blocks beyond the operators' state. At the end of its input every worker advances to the
//! same *final epoch* (the largest block count of the inputs) and steps until the output
//! frontier reaches it before closing its inputs: an operator that emits at end of input (a
//! final-mode temporal join) then does so at that epoch, whatever the worker count. A worker
//! that waits (for the output frontier, or for the end of the dataflow) parks until a message or
//! an activation wakes it (timely's `step_or_park`) instead of spinning, so a worker ahead of its
//! peer leaves the core to it.
//!
//! Gathering (`gather`): output lines and rejected rows are exchanged to global worker 0 (also
//! with several processes), then sorted, consolidated and written by the process that hosts it,
//! on as many threads as it ran workers ([`crate::tail`]).

mod feed;
mod gather;

use std::cell::RefCell;
use std::rc::Rc;

use differential_dataflow::input::InputSession;
use differential_dataflow::VecCollection;
use timely::dataflow::{ProbeHandle, Scope};

use crate::csv::{write_csv, OutputLine, Record, RowError, Schema};
use crate::error::Error;
use crate::operators::SysTime;
use crate::progress::Progress;
use crate::tail::Tail;

pub(crate) use self::feed::enter_rows;
pub use self::feed::{feed, BlockInput, BlockReader, Epochs};
pub(crate) use self::gather::{at_time_zero, expand, gather};

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
    /// The order the output lines are written in.
    pub order: LineOrder,
}

/// The order a command's output lines are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineOrder {
    /// By line (`seq`, kind, cells), each line counted over all system times: a table's rows,
    /// or the changelog of an incremental run, whose lines later input revises (a joined line
    /// is retracted when a late build version arrives, a line and its retraction are emitted
    /// at different system times), so that what stands is the changelog of all input, the
    /// same for every block size and worker count.
    Line,
    /// In emission order, as `dtemporal sql` writes its changelogs: by the system time a line
    /// was emitted at, then by line. The changelog of a final-mode run, whose every line is
    /// emitted once, when the watermark passes it (a line retracted at a later system time is
    /// an internal error).
    Emission,
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

/// What worker 0 gathered: the output lines (in `order`), the refused rows and the skipped
/// rows' reasons.
type Gathered = (
    LineOrder,
    Vec<(OutputLine, SysTime, isize)>,
    Vec<(RowError, SysTime, isize)>,
    Vec<(String, SysTime, isize)>,
);

/// Runs a command: reads `inputs`, builds the dataflow with `build`, and writes the output
/// (with `header`) and the error report (see the module docs).
///
/// Errors: bad timely arguments, `build`'s error, a file that cannot be read or written, a worker failure.
/// Rejected rows are not errors: they are written to the report and counted in the outcome.
pub fn run<const N: usize, F>(
    options: &RunOptions,
    inputs: [Schema; N],
    header: Vec<String>,
    build: F,
) -> Result<Outcome, Error>
where
    F: for<'s> Fn([VecCollection<'s, SysTime, Record>; N]) -> Result<Built<'s>, Error>
        + Send
        + Sync
        + 'static,
{
    let progress = Progress::for_files(inputs.iter().map(|i| i.path.as_str()), options.progress);
    let inputs = Vec::from(inputs);
    let finished = execute(
        &options.timely_args,
        inputs,
        (options.block_bytes, Epochs::PerBlock),
        &progress,
        move |scope, collections, malformed, probe| {
            let Ok(collections) = <[_; N]>::try_from(collections) else {
                unreachable!("the driver makes one collection an input");
            };
            let built = build(collections)?;
            let lines = Rc::new(RefCell::new(Vec::new()));
            let refused = Rc::new(RefCell::new(Vec::new()));
            let skipped = Rc::new(RefCell::new(Vec::new()));
            let order = built.order;
            let output = match order {
                LineOrder::Line => at_time_zero(built.output),
                LineOrder::Emission => built.output,
            };
            gather(output, &lines, true, probe);
            let rejected = malformed.concatenate(built.rejected);
            gather(at_time_zero(rejected), &refused, true, probe);
            let reasons = differential_dataflow::collection::concatenate(scope, built.ignored)
                .map(|e: RowError| e.reason);
            gather(at_time_zero(reasons), &skipped, true, probe);
            let take: Take<Gathered> =
                Box::new(move || (order, lines.take(), refused.take(), skipped.take()));
            Ok::<_, Error>(take)
        },
    )?;
    let Some(Finished {
        taken: (order, lines, refused, skipped),
        threads,
    }) = finished
    else {
        return Ok(Outcome::default());
    };
    let tail = Tail::new(threads);
    let lines = match order {
        LineOrder::Line => expand(&tail, lines, "output line")?,
        LineOrder::Emission => in_emission_order(&tail, lines)?,
    };
    let refused = expand(&tail, refused, "rejected row")?;
    let mut ignored: Vec<(String, usize)> = Vec::new();
    for reason in expand(&tail, skipped, "ignored row")? {
        match ignored.last_mut() {
            Some((r, n)) if *r == reason => *n += 1,
            _ => ignored.push((reason, 1)),
        }
    }
    write_csv(
        options.output.as_deref(),
        &header,
        &tail,
        &lines,
        OutputLine::record,
    )?;
    write_report(options.errors.as_deref(), &refused)?;
    Ok(Outcome {
        lines: lines.len(),
        rejected: refused.len(),
        ignored,
        wrote: true,
    })
}

/// The output lines gathered with the system times they were emitted at, in emission order:
/// by system time, then by line (`seq`, kind, cells).
fn in_emission_order(
    tail: &Tail,
    lines: Vec<(OutputLine, SysTime, isize)>,
) -> Result<Vec<OutputLine>, Error> {
    let timed = lines.into_iter().map(|(l, t, r)| ((t, l), 0, r)).collect();
    Ok(expand(tail, timed, "output line")?
        .into_iter()
        .map(|(_, line)| line)
        .collect())
}

/// The stack a worker builds, runs and drops its dataflows on, in bytes (reserved, committed
/// only as used). Compiling and evaluating an expression recurse once per level of its tree,
/// up to [`crate::sql::MAX_DEPTH`] levels, which at a few kilobytes a level in an unoptimised
/// build is more than the 2 MiB of the thread timely starts a worker on.
pub const WORKER_STACK: usize = 64 << 20;

/// Runs `f`, a worker's whole life, on a stack of [`WORKER_STACK`] bytes.
pub(crate) fn on_worker_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::grow(WORKER_STACK, f)
}

/// What a run's dataflow leaves for [`execute`] to take on worker 0 once the run is over (it
/// holds the worker's gathered vectors, see [`gather`]).
pub(crate) type Take<T> = Box<dyn FnOnce() -> T>;

/// What [`execute`] hands back to the process that hosts worker 0.
pub(crate) struct Finished<T> {
    /// What worker 0's [`Take`] returned.
    pub(crate) taken: T,
    /// The threads this process may use to sort and write it ([`crate::tail::threads`]).
    pub(crate) threads: usize,
}

/// The driver (see the module docs): starts timely with `timely_args` (`-w`, `-n`, `-p`, `-h`),
/// builds the dataflow on every worker with `build` (given the scope, one collection an input
/// in `inputs`' order, the collection of rows that did not parse, and the probe the driver
/// paces its reading by, to which `build` attaches its outputs), feeds the inputs in blocks of
/// about `block_bytes` at the system times `epochs` says, counting them on `progress`, steps
/// the workers to the end, and returns
/// what worker 0's [`Take`] returned: `None` in a process that does not host worker 0.
///
/// Errors: timely's arguments are refused, `build` fails (its error, on every worker it
/// failed on), an input cannot be read, a worker panics.
pub(crate) fn execute<I, T, E, B>(
    timely_args: &[String],
    inputs: Vec<I>,
    (block_bytes, epochs): (usize, Epochs),
    progress: &Progress,
    build: B,
) -> Result<Option<Finished<T>>, E>
where
    I: BlockInput + Send + Sync + 'static,
    T: Send + 'static,
    E: From<Error> + Send + 'static,
    B: for<'s> Fn(
            Scope<'s, SysTime>,
            Vec<VecCollection<'s, SysTime, I::Record>>,
            VecCollection<'s, SysTime, RowError>,
            &ProbeHandle<SysTime>,
        ) -> Result<Take<T>, E>
        + Send
        + Sync
        + 'static,
{
    let args = std::iter::once("dtemporal".to_string()).chain(timely_args.iter().cloned());
    let config = timely::Config::from_args(args).map_err(Error::Usage)?;
    let threads = crate::tail::threads(&config);
    let line = progress.clone();
    let guards = timely::execute(config, move |worker| {
        on_worker_stack(|| {
            let mut sessions: Vec<InputSession<SysTime, I::Record, isize>> =
                inputs.iter().map(|_| InputSession::new()).collect();
            let mut malformed = InputSession::<SysTime, RowError, isize>::new();
            let probe = ProbeHandle::new();
            let take = worker.dataflow::<SysTime, _, _>(|scope| {
                let collections = sessions
                    .iter_mut()
                    .map(|s| s.to_collection(scope))
                    .collect();
                build(scope, collections, malformed.to_collection(scope), &probe)
            })?;
            let fed = feed(
                worker,
                &inputs,
                &mut sessions,
                &mut malformed,
                block_bytes,
                epochs,
                &probe,
                &line,
            );
            drop(sessions);
            drop(malformed);
            while worker.step_or_park(None) {}
            fed?;
            Ok::<_, E>((worker.index() == 0).then(take))
        })
    })
    .map_err(Error::Runtime)?;
    let mut taken = None;
    for result in guards.join() {
        if let Some(t) = result.map_err(Error::Runtime)?? {
            taken = Some(t);
        }
    }
    progress.finish();
    Ok(taken.map(|taken| Finished { taken, threads }))
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
