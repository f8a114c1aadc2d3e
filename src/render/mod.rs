//! Rendering: a [`RelExpr`] onto differential collections of packed [`Row`]s.
//!
//! A node renders to one of two forms of its dynamic table ([`Collection`]):
//! * a **changelog**: `Change { seq, kind, row }` records, each with diff `+1`, in which `seq`
//!   (the source position) and `kind` (`+I -U +U -D`) survive. Sources produce this form and the
//!   typed operators that need arrival order or row kinds (deduplication, the temporal and
//!   lookup joins) consume and produce it. An append-only node always renders to this form.
//! * a **table**: a multiset of rows with native retractions (diff `-1`), the form of
//!   differential's own `reduce` and `distinct`.
//!
//! Either accumulates to the node's table at every system time (`+I`/`+U` count `+1`, `-U`/`-D`
//! count `-1`), which is what the [reference interpreter](crate::plan::reference) computes and
//! what the tests compare. Keys, event times and sequence numbers are extracted once, here, and
//! each generic operator is instantiated with `K = Row`, `V = Row` and `E = Ts`.
//!
//! **Modes.** [`ExecutionMode::Incremental`] (the default) is exact at every system time: late
//! rows retract and re-emit. [`ExecutionMode::Final`] gives Flink's output where it differs: the
//! temporal join emits each probe row once, when the combined watermark passes it, and reports
//! probe rows behind the watermark as late; a window aggregation emits each window once, when
//! the watermark passes it, revised by late rows within its allowed lateness, and reports rows
//! beyond it; a window assignment (a window TVF's rows) gives a window's rows when the
//! watermark passes it and reports rows for windows it has passed; an OVER aggregation emits
//! each row once, when the watermark passes it, and reports rows behind it; an interval join
//! emits each match when its second row arrives and each padded row when the watermark passes
//! its window, frees its rows then and reports rows behind the watermark. The other nodes
//! behave the same in both modes.
//!
//! Rows a node refuses (an expression that fails on them, a NULL event time, a late row in final
//! mode, a non-insert row into deduplication) are collected with their `seq` and reason in
//! [`RenderContext::refused`], never silently dropped.

mod as_of;
mod asof_join;
mod check;
mod correlate;
mod count_window;
mod dedup;
mod equi_join;
mod interval_join;
mod join;
mod merge;
mod nodes;
mod over;
mod reduce;
mod reuse;
mod set_op;
mod sort;
mod window;

use std::collections::BTreeMap;

use differential_dataflow::VecCollection;
use timely::dataflow::operators::OkErr;
use timely::dataflow::Scope;

pub use crate::plan::ExecutionMode;
use crate::plan::{PlanError, RelExpr};
use crate::repr::{Row, Ts};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{Change, RowKind, SysTime};

/// A rendered node's dynamic table (see the [module documentation](self)).
#[derive(Clone)]
pub enum Collection<'s> {
    /// Changes with their `seq` and kind, each with diff `+1`.
    Changelog(VecCollection<'s, SysTime, Change<Row>>),
    /// Rows with native retractions.
    Table(VecCollection<'s, SysTime, Row>),
}

impl<'s> Collection<'s> {
    /// This table as a multiset of rows: `+I`/`+U` add the row, `-U`/`-D` retract it.
    pub fn into_table(self) -> VecCollection<'s, SysTime, Row> {
        match self {
            Collection::Table(rows) => rows,
            Collection::Changelog(changes) => {
                use differential_dataflow::AsCollection;
                use timely::dataflow::operators::vec::Map;
                changes
                    .inner
                    .map(|(change, time, diff)| {
                        let diff = diff * change.kind.sign();
                        (change.row, time, diff)
                    })
                    .as_collection()
            }
        }
    }

    /// This table as a multiset of `(key(row), seq)`, each with its signed count (negative for
    /// a retraction): the changes' positions, for an operator that reports a retraction of a
    /// row it does not hold ([`reduce::overdrawn`]). A table's rows have no position: a
    /// retraction is placed at its system time.
    pub(crate) fn into_positions<K: differential_dataflow::Data>(
        self,
        mut key: impl FnMut(&Row) -> K + 'static,
    ) -> VecCollection<'s, SysTime, (K, differential_temporal_operators::Seq)> {
        use differential_dataflow::AsCollection;
        use timely::dataflow::operators::vec::Map;
        match self {
            Collection::Changelog(c) => c.inner.map(move |(ch, time, diff)| {
                let diff = diff * ch.kind.sign();
                ((key(&ch.row), ch.seq), time, diff)
            }),
            Collection::Table(t) => t
                .inner
                .map(move |(row, time, diff)| ((key(&row), time), time, diff)),
        }
        .as_collection()
    }

    /// This table as a changelog. A table's insertion becomes `+I` and its retraction `-D`,
    /// each with `seq` = its system time (rows computed by an aggregation have no source
    /// position; within one system time they are ordered by value).
    pub fn into_changelog(self) -> VecCollection<'s, SysTime, Change<Row>> {
        match self {
            Collection::Changelog(changes) => changes,
            Collection::Table(rows) => {
                use differential_dataflow::AsCollection;
                use timely::dataflow::operators::vec::Map;
                rows.inner
                    .flat_map(|(row, time, diff)| {
                        let kind = if diff > 0 {
                            RowKind::Insert
                        } else {
                            RowKind::Delete
                        };
                        let change = Change::new(time, kind, row);
                        std::iter::repeat_n(change, diff.unsigned_abs()).map(move |c| (c, time, 1))
                    })
                    .as_collection()
            }
        }
    }

    /// Applies `f` to every row, keeping the form (and, for a changelog, `seq` and kind).
    pub fn map_rows(self, f: impl Fn(Row) -> Row + 'static) -> Collection<'s> {
        match self {
            Collection::Changelog(c) => {
                Collection::Changelog(c.map(move |ch| Change::new(ch.seq, ch.kind, f(ch.row))))
            }
            Collection::Table(t) => Collection::Table(t.map(f)),
        }
    }
}

/// What rendering needs and collects: the scope, the sources' changelogs by table name, the
/// mode, and the collections of refused rows.
pub struct RenderContext<'s> {
    /// The dataflow scope the plan is rendered in.
    pub scope: Scope<'s, SysTime>,
    /// Each scanned table's changelog, by name: rows of the scan's schema (rendering reads them
    /// by its types; [`Table::render`](crate::table::Table::render) checks a caller's rows
    /// first and refuses those that do not fit).
    pub sources: BTreeMap<String, VecCollection<'s, SysTime, Change<Row>>>,
    /// The execution mode.
    pub mode: ExecutionMode,
    /// Rows refused by any node, with their `seq` and reason.
    pub refused: Vec<VecCollection<'s, SysTime, Rejected>>,
    /// The idle-source timeout of the final-mode operators that combine watermarks (the
    /// temporal and interval joins), in system times; `0` (set by [`new`](Self::new)): off.
    /// See [`TableEnv::with_idle_timeout`](crate::table::TableEnv::with_idle_timeout).
    pub idle_timeout: SysTime,
    /// How the reasons of late rows write event times (`None`, set by [`new`](Self::new): as
    /// timestamps, `1970-01-01 00:00:00.005`). The commands, whose event times may be written
    /// as epoch milliseconds, write them as milliseconds. Read by final-mode deduplication and
    /// the final-mode temporal join.
    pub late_time_text: Option<fn(&Ts) -> String>,
    /// Whether the reason of a late build version of a final-mode temporal join names the
    /// version's key first (`key EUR: late build version: ...`, the form of `dtemporal
    /// temporal-join`); `false` (set by [`new`](Self::new)): the reason alone, the row named
    /// by its `seq`.
    pub late_build_key: bool,
    /// The subtrees rendered so far, each rendered once however often it occurs.
    rendered: reuse::Rendered<'s>,
    /// The sources whose rows [`check_sources`](Self::check_sources) checked.
    checked: std::collections::BTreeSet<String>,
}

impl<'s> RenderContext<'s> {
    /// A context over `sources` in `scope`, in `mode`.
    pub fn new(
        scope: Scope<'s, SysTime>,
        sources: BTreeMap<String, VecCollection<'s, SysTime, Change<Row>>>,
        mode: ExecutionMode,
    ) -> Self {
        RenderContext {
            scope,
            sources,
            mode,
            refused: Vec::new(),
            idle_timeout: 0,
            late_time_text: None,
            late_build_key: false,
            rendered: reuse::Rendered::default(),
            checked: Default::default(),
        }
    }

    /// Checks the rows of the sources `plan` scans (each source once per context) against
    /// the scans' schemas: a row that does not fit its schema ([`Schema::misfit`]), or a
    /// retraction in a source the scan declares append-only, is refused (kind `Invalid`, with
    /// its `seq`) instead of reaching operators that read rows by their schema's types. The
    /// entry for rows packed by a user's own code ([`Table::render`](crate::table::Table::render));
    /// [`render`](Self::render) alone trusts its sources, as the sources of files and
    /// generators, packed by their schemas, can be.
    ///
    /// [`Schema::misfit`]: crate::repr::Schema::misfit
    pub(crate) fn check_sources(&mut self, plan: &RelExpr) {
        let mut scans = Vec::new();
        plan.visit(&mut |node| {
            if let crate::plan::Node::Scan { name } = &node.node {
                scans.push((
                    name.clone(),
                    node.schema.clone(),
                    node.mode.is_append_only(),
                ));
            }
        });
        for (name, schema, append_only) in scans {
            if self.checked.contains(&name) {
                continue;
            }
            let Some(changes) = self.sources.remove(&name) else {
                continue;
            };
            let table = name.clone();
            let (fitting, misfits) = split_map(changes, move |change: Change<Row>| {
                let reason = match schema.misfit(&change.row) {
                    Some(reason) => reason,
                    None if append_only && change.kind != RowKind::Insert => {
                        format!("a {} row in a table declared append-only", change.kind)
                    }
                    None => return Ok(change),
                };
                let reason = format!("a row of '{table}' does not fit its schema: {reason}");
                Err(Rejected::invalid(change.seq, reason))
            });
            self.refused.push(misfits);
            self.sources.insert(name.clone(), fitting);
            self.checked.insert(name);
        }
    }

    /// Renders `plan` (and its inputs) in this context. A subtree that occurs more than once in
    /// this context's dataflow (in `plan`, or in a plan rendered before in this context) is
    /// rendered once and read by every occurrence, as Flink's
    /// `table.optimizer.reuse-sub-plan-enabled` does; its refused rows are listed once per
    /// occurrence, as the [reference interpreter](crate::plan::reference) reports them.
    ///
    /// The plan is first read with its changelog modes exact in this context's mode
    /// ([`RelExpr::in_execution`], whose errors it returns).
    pub fn render(&mut self, plan: &RelExpr) -> Result<Collection<'s>, PlanError> {
        nodes::render(self, &plan.in_execution(self.mode)?)
    }
}

/// Applies `f` to every record and routes `Ok(value)` and `Err(other)` to two collections: one
/// operator with two outputs, each result moved to its output, none cloned, so that a node that
/// maps and splits its input costs one pass over it.
pub(crate) fn split_map<'s, D, T, E>(
    input: VecCollection<'s, SysTime, D>,
    mut f: impl FnMut(D) -> Result<T, E> + 'static,
) -> (VecCollection<'s, SysTime, T>, VecCollection<'s, SysTime, E>)
where
    D: differential_dataflow::Data,
    T: differential_dataflow::ExchangeData,
    E: differential_dataflow::ExchangeData,
{
    use differential_dataflow::AsCollection;
    let (ok, err) = input
        .inner
        .ok_err::<Vec<_>, _, Vec<_>, _, _>(move |(d, t, r)| match f(d) {
            Ok(v) => Ok((v, t, r)),
            Err(e) => Err((e, t, r)),
        });
    (ok.as_collection(), err.as_collection())
}

/// As [`split_map`] with `f` giving each value it keeps a `mark` (`Ok((value, mark))`), and a
/// third collection of marks: per batch of input records and system time, the greatest mark
/// of the values kept. An epoch's greatest mark (the event time a watermark is made of) is
/// then read from a few records instead of from a second pass over, and a copy of, every value.
pub(crate) fn split_map_max<'s, D, T, E, M>(
    input: VecCollection<'s, SysTime, D>,
    mut f: impl FnMut(D) -> Result<(T, M), E> + 'static,
) -> (
    VecCollection<'s, SysTime, T>,
    VecCollection<'s, SysTime, E>,
    VecCollection<'s, SysTime, M>,
)
where
    D: differential_dataflow::Data,
    T: differential_dataflow::ExchangeData,
    E: differential_dataflow::ExchangeData,
    M: differential_dataflow::ExchangeData,
{
    use differential_dataflow::AsCollection;
    use timely::container::CapacityContainerBuilder;
    use timely::dataflow::channels::pact::Pipeline;
    use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
    use timely::dataflow::operators::generic::OutputBuilder;
    use timely::progress::operate::FrontierInterest;

    let mut builder = OperatorBuilder::new("SplitMapMax".to_owned(), input.scope());
    let mut input = builder.new_input(input.inner, Pipeline);
    builder.set_notify_for(0, FrontierInterest::Never);
    let (kept, kept_stream) = builder.new_output();
    let (other, other_stream) = builder.new_output();
    let (marks, marks_stream) = builder.new_output();
    let mut kept: OutputBuilder<_, CapacityContainerBuilder<Vec<(T, SysTime, isize)>>> =
        OutputBuilder::from(kept);
    let mut other: OutputBuilder<_, CapacityContainerBuilder<Vec<(E, SysTime, isize)>>> =
        OutputBuilder::from(other);
    let mut marks: OutputBuilder<_, CapacityContainerBuilder<Vec<(M, SysTime, isize)>>> =
        OutputBuilder::from(marks);
    builder.build(move |_| {
        // The greatest mark per system time of the batch at hand (mostly one time).
        let mut greatest: Vec<(SysTime, M)> = Vec::new();
        move |_frontiers| {
            let (mut kept, mut other, mut marks) =
                (kept.activate(), other.activate(), marks.activate());
            input.for_each(|cap, data: &mut Vec<(D, SysTime, isize)>| {
                let (mut kept, mut other) = (kept.session(&cap), other.session(&cap));
                for (d, t, r) in data.drain(..) {
                    match f(d) {
                        Ok((value, mark)) => {
                            match greatest.iter_mut().find(|(time, _)| *time == t) {
                                Some((_, max)) if *max < mark => *max = mark,
                                Some(_) => {}
                                None => greatest.push((t, mark)),
                            }
                            kept.give((value, t, r));
                        }
                        Err(e) => other.give((e, t, r)),
                    }
                }
                let mut marks = marks.session(&cap);
                for (t, mark) in greatest.drain(..) {
                    marks.give((mark, t, 1));
                }
            });
        }
    });
    (
        kept_stream.as_collection(),
        other_stream.as_collection(),
        marks_stream.as_collection(),
    )
}

/// Splits `(Ok(value) | Err(other))` records into the two collections.
pub(crate) fn split<'s, T, E>(
    results: VecCollection<'s, SysTime, Result<T, E>>,
) -> (VecCollection<'s, SysTime, T>, VecCollection<'s, SysTime, E>)
where
    T: differential_dataflow::ExchangeData,
    E: differential_dataflow::ExchangeData,
{
    split_map(results, |r| r)
}
