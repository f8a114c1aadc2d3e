//! Running a plan: sources read by [`crate::run::feed`], the plan rendered on every worker, the
//! output changes and the refused rows gathered at worker 0 into a [`TableResult`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use differential_dataflow::input::InputSession;
use differential_dataflow::{ExchangeData, VecCollection};
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::dataflow::ProbeHandle;

use crate::csv::RowError;
use crate::error::Error;
use crate::io::TypedSource;
use crate::plan::RelExpr;
use crate::render::{Collection, ExecutionMode, RenderContext};
use crate::repr::Row;
use crate::run::feed;
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
    /// Target size of an input block (one system-time epoch), in bytes.
    pub block_bytes: usize,
    /// The allowed lateness of window aggregations in final mode, in milliseconds (Flink's
    /// `table.exec.emit.allow-lateness`; 0 by default): taken when a window is planned.
    pub allow_lateness_ms: i64,
}

impl Default for ExecuteOptions {
    fn default() -> Self {
        ExecuteOptions {
            timely_args: Vec::new(),
            mode: ExecutionMode::Incremental,
            block_bytes: 64 * 1024,
            allow_lateness_ms: 0,
        }
    }
}

/// Runs `plan` with `env`'s sources and options; the result is whole in the process hosting
/// worker 0 (other processes of a cluster get an empty result with `complete = false`).
pub(super) fn execute(env: &TableEnv, plan: &RelExpr) -> Result<TableResult, TableError> {
    let options = env.options();
    let mut names = Vec::new();
    let mut inputs = Vec::new();
    for name in plan.scans() {
        let source = env.source(name)?;
        let (files, _) =
            TypedSource::open_table(&source.path, Some(source.schema.clone()), &source.format)?;
        for file in files {
            names.push(name.to_string());
            inputs.push(file);
        }
    }
    let args = std::iter::once("dtemporal".to_string()).chain(options.timely_args.iter().cloned());
    let config = timely::Config::from_args(args).map_err(Error::Usage)?;
    let worker_plan = plan.clone();
    let mode = options.mode;
    let block_bytes = options.block_bytes;
    let guards = timely::execute(config, move |worker| {
        let mut sessions: Vec<InputSession<SysTime, Change<Row>, isize>> =
            inputs.iter().map(|_| InputSession::new()).collect();
        let mut malformed = InputSession::<SysTime, RowError, isize>::new();
        let probe = ProbeHandle::new();
        let output = Rc::new(RefCell::new(Vec::new()));
        let refused = Rc::new(RefCell::new(Vec::new()));
        let bad_rows = Rc::new(RefCell::new(Vec::new()));
        let mut failure = None;
        let mut table_form = false;
        worker.dataflow::<SysTime, _, _>(|scope| {
            // A table of several files is the concatenation of their changelogs.
            let mut sources = BTreeMap::new();
            for (name, session) in names.iter().zip(sessions.iter_mut()) {
                let file: VecCollection<'_, SysTime, Change<Row>> = session.to_collection(scope);
                let table = match sources.remove(name) {
                    Some(others) => file.concat(others),
                    None => file,
                };
                sources.insert(name.clone(), table);
            }
            let mut ctx = RenderContext::new(scope, sources, mode);
            match ctx.render(&worker_plan) {
                Ok(Collection::Changelog(changes)) => {
                    gather(changes, &output).probe_with(&probe);
                }
                Ok(Collection::Table(rows)) => {
                    table_form = true;
                    let as_changes = rows.map(|row| Change::new(0, RowKind::Insert, row));
                    gather(as_changes, &output).probe_with(&probe);
                }
                Err(e) => failure = Some(e),
            }
            let refusals = differential_dataflow::collection::concatenate(scope, ctx.refused);
            gather(refusals, &refused).probe_with(&probe);
            gather(malformed.to_collection(scope), &bad_rows).probe_with(&probe);
        });
        if let Some(e) = failure {
            return Err(TableError::Plan {
                operation: "execute",
                source: e,
            });
        }
        let fed = feed(
            worker,
            &inputs,
            &mut sessions,
            &mut malformed,
            block_bytes,
            &probe,
        );
        drop(sessions);
        drop(malformed);
        while worker.step() {}
        fed?;
        Ok((worker.index() == 0).then(|| Gathered {
            output: output.take(),
            table_form,
            refused: refused.take(),
            malformed: bad_rows.take(),
        }))
    })
    .map_err(Error::Runtime)?;
    let mut gathered = None;
    for result in guards.join() {
        if let Some(g) = result.map_err(Error::Runtime)?? {
            gathered = Some(g);
        }
    }
    Ok(TableResult::new(
        plan.schema.clone(),
        plan.mode.clone(),
        gathered,
    ))
}

/// Exchanges a collection's updates to worker 0 and keeps them there with their system times.
fn gather<'s, D: ExchangeData>(
    collection: VecCollection<'s, SysTime, D>,
    into: &Rc<RefCell<Vec<(D, SysTime, isize)>>>,
) -> timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>> {
    let sink = Rc::clone(into);
    collection
        .inner
        .exchange(|_| 0)
        .inspect(move |update| sink.borrow_mut().push(update.clone()))
}
