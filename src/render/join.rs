//! Rendering of the temporal join (event time, both modes) and the lookup join (processing time)
//! onto the generic operators, with `P` and `B` = the packed rows and `K` = the key: the key
//! column's `i64` when the key is one integer column on both sides (hashed and compared as a
//! number, the common `ON p.id = b.id`), else the packed key columns.
//!
//! NULL keys never match (SQL's rule; Flink's temporal join differs, see the differences in
//! `docs/semantics.md`): a probe row with a NULL key column bypasses the operator (LEFT pads
//! it, INNER drops it) and a build row with one is never stored. A row whose event time is NULL
//! is refused with its `seq`.

use std::cell::RefCell;

use differential_dataflow::{ExchangeData, Hashable, VecCollection};

use crate::expr::{CompiledExpr, RowArena};
use crate::plan::{Join, JoinKind, Node, PlanError, RelExpr};
use crate::repr::cast::format_datum;
use crate::repr::{prefix_len, ColumnSpans, DataType, Datum, DatumVec, Row, Ts};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::retention::Retention;
use differential_temporal_operators::temporal_join::{
    arrange_probe, late_versions, lookup_join, temporal_join, temporal_join_final_pruned_with,
    FinalJoin, JoinConfig, JoinKey, Joined,
};
use differential_temporal_operators::versioned::version_of_change;
use differential_temporal_operators::watermark::{watermarks, TimeText};
use differential_temporal_operators::{arrange_versions, Change, Seq, SysTime, Version};

use super::nodes::{event_time, null_time, render as render_node, NO_TIME};
use super::{split, split_map_max, Collection, ExecutionMode, RenderContext};

type Keyed<'s, K> = VecCollection<'s, SysTime, (K, Change<Row>)>;
/// Greatest event times of batches of rows (see [`key_rows`]).
type EventTimes<'s> = VecCollection<'s, SysTime, Ts>;
type Versions<'s, K, E> = VecCollection<'s, SysTime, (K, Version<E, Row>)>;

/// A join key read from a row's decoded columns `key` (none of them NULL).
trait JoinKeyOf: ExchangeData + Hashable + JoinKey + std::hash::Hash {
    /// The key of a row whose key columns are not NULL; `None` if a column does not hold the
    /// datum the key type reads (the schema rules it out; a row breaking it is refused).
    fn of(datums: &[Datum], key: &[usize]) -> Option<Self>;

    /// The key as a report writes it: its columns' values (of `types`), comma-separated.
    fn text(&self, types: &[DataType]) -> String;
}

/// Any key: the key columns packed.
impl JoinKeyOf for Row {
    fn of(datums: &[Datum], key: &[usize]) -> Option<Row> {
        Some(Row::pack(key.iter().map(|&c| datums[c])))
    }

    fn text(&self, types: &[DataType]) -> String {
        let mut text = String::new();
        for (i, (datum, ty)) in self.iter().zip(types).enumerate() {
            if i > 0 {
                text.push(',');
            }
            format_datum(datum, ty, &mut text).expect("a String");
        }
        text
    }
}

/// One integer key column (TINYINT .. BIGINT, all `Datum::Int`), on both sides.
impl JoinKeyOf for i64 {
    fn of(datums: &[Datum], key: &[usize]) -> Option<i64> {
        match datums[key[0]] {
            Datum::Int(v) => Some(v),
            _ => None,
        }
    }

    fn text(&self, _: &[DataType]) -> String {
        self.to_string()
    }
}

/// Renders a `TemporalJoin` or `LookupJoin` node; with `projection`, the columns of the joined
/// row to output (a `Project` over the join, fused so that each output row is packed once).
///
/// Errors: a temporal join's state TTL in incremental mode (it is measured on the watermark).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    plan: &RelExpr,
    projection: Option<&[usize]>,
) -> Result<Collection<'s>, PlanError> {
    let (join, temporal) = match &plan.node {
        Node::TemporalJoin(join) => (join, true),
        Node::LookupJoin(join) => (join, false),
        _ => unreachable!("join::render is called on joins only"),
    };
    if temporal && join.state_ttl.is_some() && ctx.mode == ExecutionMode::Incremental {
        return Err(PlanError::invalid(
            "TemporalJoin",
            "a temporal join's state TTL is measured on the watermark: it needs the final mode",
        ));
    }
    let Join {
        probe,
        build,
        probe_key,
        build_key,
        ..
    } = join;
    let output = Output::new([probe.schema.len(), build.schema.len()], projection);
    let rowtime = |schema: &crate::repr::Schema| schema.rowtime.as_ref().map(|r| r.column);
    let times = Times {
        probe: rowtime(&probe.schema).filter(|_| temporal),
        build: rowtime(&build.schema),
    };
    let timed = times.probe.is_some() && times.build.is_some();
    assert!(!temporal || timed, "the plan checked both rowtimes");
    let probe_changes = render_node(ctx, probe)?.into_changelog();
    let build_changes = render_node(ctx, build)?.into_changelog();
    let inputs = (probe_changes, build_changes);
    let integer = probe.schema.is_integer_key(probe_key) && build.schema.is_integer_key(build_key);
    let out = match integer {
        true => join_keyed::<i64>(ctx, join, inputs, times, output),
        false => join_keyed::<Row>(ctx, join, inputs, times, output),
    };
    Ok(Collection::Changelog(out))
}

type Changes<'s> = VecCollection<'s, SysTime, Change<Row>>;

/// The rowtime columns a join reads: the probe's (an event-time join only) and the build's
/// (orders the versions; a lookup join's build side may have none).
#[derive(Clone, Copy)]
struct Times {
    probe: Option<usize>,
    build: Option<usize>,
}

/// The join of the probe and build `inputs` on keys of type `K`, its output rows `output`.
fn join_keyed<'s, K: JoinKeyOf>(
    ctx: &mut RenderContext<'s>,
    join: &Join,
    (probe_changes, build_changes): (Changes<'s>, Changes<'s>),
    times: Times,
    output: Output,
) -> Changes<'s> {
    let kind = join.kind;
    let (probe_keyed, null_keyed, probe_times): (Keyed<'s, K>, _, _) = key_rows(
        ctx,
        probe_changes,
        join.probe_key.clone(),
        times.probe,
        |k, _, ch| Ok((k, ch)),
    );
    let padded =
        match kind {
            JoinKind::Left => {
                let output = output.clone();
                let mut spans = [ColumnSpans::new(), ColumnSpans::new()];
                Some(null_keyed.map(move |ch| {
                    Change::new(ch.seq, ch.kind, output.row(&ch.row, None, &mut spans))
                }))
            }
            JoinKind::Inner => None,
        };
    // The build rows' versions, each stamped with the time read while keying it (the epoch
    // without a build rowtime, so that a lookup join's versions go by arrival; a `-U` makes
    // none: it goes with the NULL-keyed rows, which never match).
    let (versions, _never_matched, version_times): (Versions<'s, K, Ts>, _, _) = key_rows(
        ctx,
        build_changes,
        join.build_key.clone(),
        times.build,
        |k, t, ch| version_of_change(ch, t.unwrap_or(NO_TIME)).map(|v| (k, v)),
    );
    let residual = join.residual.as_ref().map(|r| r.compile());
    let mut out = match (times.probe, ctx.mode) {
        (Some(p_col), ExecutionMode::Incremental) => {
            let probe = arrange_probe(
                probe_keyed,
                move |row: &Row| time_of(row, p_col),
                "TemporalJoin: probe",
            );
            let build = arrange_versions(versions, "TemporalJoin: versions");
            let config = JoinConfig::new(kind).residual(residual_fn(residual));
            let mut output = output.changes();
            temporal_join(probe, build, config.named("TemporalJoin"))
                .map(move |(k, joined)| output(k, joined))
        }
        (Some(_), ExecutionMode::Final) => {
            let config = JoinConfig::new(kind).residual(residual_fn(residual));
            let times = (probe_times, version_times);
            let output = output.changes();
            temporal_join_final_mode(ctx, join, (probe_keyed, versions), times, config, output)
        }
        (None, _) => {
            let build = arrange_versions(versions, "LookupJoin: versions");
            let config = (JoinConfig::new(kind).residual(residual_fn(residual)))
                .retention(join.state_ttl.map(Retention::epochs))
                .named("LookupJoin");
            let mut output = output.changes();
            lookup_join(probe_keyed, build, config).map(move |(k, joined)| output(k, joined))
        }
    };
    if let Some(padded) = padded {
        out = out.concat(padded);
    }
    out
}

/// The final-mode event-time join (rules B9-B13) of the keyed probe rows and build versions:
/// probe rows fire when the combined watermark passes them (late ones refused), build versions
/// behind it are kept but reported with their key, versions no probe row can choose any more
/// are pruned, and a state TTL forgets idle keys on the watermark. The watermarks are made of
/// `times`, the greatest event times of batches of the probe rows and of the versions; each
/// joined row is output as `output(key, joined row)`.
fn temporal_join_final_mode<'s, K: JoinKeyOf, R: Fn(&Row, &Row) -> bool + 'static>(
    ctx: &mut RenderContext<'s>,
    join: &Join,
    (probe_keyed, versions): (Keyed<'s, K>, Versions<'s, K, Ts>),
    (probe_times, version_times): (EventTimes<'s>, EventTimes<'s>),
    config: JoinConfig<R, Ts>,
    output: impl FnMut(K, Joined<Row, Row>) -> Change<Row> + 'static,
) -> Changes<'s> {
    let rowtime = |schema: &crate::repr::Schema| {
        let rowtime = schema.rowtime.as_ref();
        rowtime
            .map(|r| (r.column, r.delay_ms))
            .expect("the plan checked both rowtimes")
    };
    let ((p_col, p_delay), (_, b_delay)) =
        (rowtime(&join.probe.schema), rowtime(&join.build.schema));
    let probe_marks = watermarks(
        probe_times,
        |t: &Ts| *t,
        move |max: &Ts| plus_millis(*max, -p_delay),
        "TemporalJoin: probe watermark",
    );
    let build_marks = watermarks(
        version_times,
        |t: &Ts| *t,
        move |max: &Ts| plus_millis(*max, -b_delay),
        "TemporalJoin: build watermark",
    );
    let time_text = ctx.late_time_text.map(TimeText::with).unwrap_or_default();
    // A build version behind the combined watermark is stored and used for later probe rows,
    // but the rows already emitted are not revised: it is reported (issue 15), with its key if
    // asked.
    let key_types: Vec<DataType> = (join.build_key.iter())
        .map(|&c| join.build.schema.fields[c].ty.data_type.clone())
        .collect();
    let name_key = ctx.late_build_key;
    let late_builds = late_versions(
        versions.clone(),
        probe_marks.clone(),
        build_marks.clone(),
        ctx.idle_timeout,
        time_text,
        "TemporalJoin: late versions",
    )
    .map(move |(key, mut r)| {
        if name_key {
            r.reason = format!("key {}: {}", key.text(&key_types), r.reason).into();
        }
        r
    });
    let retention = (join.state_ttl)
        .map(|ms| Retention::new(move |t: &Ts| plus_millis(*t, ms.min(i64::MAX as u64) as i64)));
    let mut config = config
        .retention(retention)
        .idle_timeout(ctx.idle_timeout)
        .named("TemporalJoin");
    if let Some(text) = ctx.late_time_text {
        config = config.time_text(text);
    }
    // The join keeps the versions itself and drops those no probe row can choose any more as
    // the watermarks rise (rule B11): a changelog's records all have diff +1, so no version
    // behind the watermark is ever retracted, the pruning's precondition.
    let FinalJoin { joined, late } = temporal_join_final_pruned_with(
        probe_keyed,
        move |row: &Row| time_of(row, p_col),
        versions,
        (probe_marks, build_marks),
        config,
        output,
    );
    ctx.refused.push(late.map(|(_, r)| r));
    ctx.refused.push(late_builds);
    joined
}

/// A packed key is a NULL join key iff one of its columns is NULL (the operators' rule; keys
/// with a NULL column are also routed around them when keyed here).
impl JoinKey for Row {
    fn is_null(&self) -> bool {
        self.iter().any(|d| d.is_null())
    }
}

/// Keys each change by its key columns and makes it a record with `make(key, event time,
/// change)` (the time `None` without an event-time `column`, or if the column holds no
/// timestamp). Changes with a NULL key column go to the second collection (they never match),
/// as do those `make` gives back; with an event-time `column`, changes whose time is NULL are
/// refused with their `seq`. The third collection holds the greatest event time of the records
/// made, per batch (what the watermark of the records is folded from; `NO_TIME` without a
/// `column`). One pass over the changes, one decode of each row's leading columns.
fn key_rows<'s, K: JoinKeyOf, T: ExchangeData>(
    ctx: &mut RenderContext<'s>,
    changes: Changes<'s>,
    key: Vec<usize>,
    time: Option<usize>,
    make: impl Fn(K, Option<Ts>, Change<Row>) -> Result<T, Change<Row>> + 'static,
) -> (VecCollection<'s, SysTime, T>, Changes<'s>, EventTimes<'s>) {
    let mut datums = DatumVec::new();
    let read = prefix_len(key.iter().chain(&time).copied());
    let (keyed, other, times) = split_map_max(changes, move |ch| {
        // One decode of the row (as far as its last key or time column) answers the key and
        // the time: `Ok((key, time))`, `Err(None)` for a NULL key column (padded or dropped by
        // the join kind), `Err(Some(reason))` for a NULL time or a key the key type cannot read.
        let verdict = {
            let datums = datums.borrow_prefix(&ch.row, read);
            let ts = time.map(|c| datums[c]);
            if key.iter().any(|&c| datums[c].is_null()) {
                Err(None)
            } else if ts.is_some_and(|d| d.is_null()) {
                Err(Some(null_time(ch.seq)))
            } else {
                let ts = ts.and_then(|d| match d {
                    Datum::Timestamp(ts) => Some(ts),
                    _ => None,
                });
                K::of(&datums, &key)
                    .map(|k| (k, ts))
                    .ok_or_else(|| Some(unreadable_key(ch.seq)))
            }
        };
        match verdict {
            Ok((k, ts)) => match make(k, ts, ch) {
                Ok(made) => Ok((made, ts.unwrap_or(NO_TIME))),
                Err(ch) => Err(Ok(ch)),
            },
            Err(None) => Err(Ok(ch)),
            Err(Some(rejected)) => Err(Err(rejected)),
        }
    });
    let (null_keyed, refused) = split(other);
    ctx.refused.push(refused);
    (keyed, null_keyed, times)
}

/// The refusal of a row whose key column does not hold an integer although its type is one.
fn unreadable_key(seq: Seq) -> Rejected {
    Rejected::invalid(seq, "the join key column does not hold an integer value")
}

/// The event time of a row whose time was checked not to be NULL.
fn time_of(row: &Row, column: usize) -> Ts {
    event_time(row, column).unwrap_or(NO_TIME)
}

/// `ts + millis`, saturating at the smallest and greatest timestamps.
fn plus_millis(ts: Ts, millis: i64) -> Ts {
    Ts {
        millis: ts.millis.saturating_add(millis),
        nanos_of_milli: ts.nanos_of_milli,
    }
}

/// How a joined row is output: the probe row, then the build row or NULLs for its columns,
/// or only the `projection` of that. The output columns are precompiled into runs of
/// consecutive columns of one input row, so each output row is packed once, by copying the
/// runs' encoded bytes (a run reaching an input row's last column copies the rest of the row
/// from its first column on, locating only the columns before it; no datum is decoded and
/// encoded again).
#[derive(Clone)]
struct Output {
    /// The runs, in output order.
    runs: Vec<OutputRun>,
    /// Per input row (probe, build): how many leading columns must be located to find the
    /// runs' bytes (`0`: the row is copied whole or not at all, and never located).
    located: [usize; 2],
}

/// Consecutive output columns taken from one input row: `columns` of the probe row (side 0)
/// or of the build row (side 1, NULLs when the probe row is padded).
#[derive(Clone, Debug, PartialEq)]
struct OutputRun {
    side: usize,
    columns: std::ops::Range<usize>,
    /// `columns` run to that row's last column.
    to_end: bool,
}

impl Output {
    /// The output of a join of rows `widths = [probe, build]` wide, projected to `projection`
    /// (columns of the joined row, probe columns first), or all columns without one.
    fn new(widths: [usize; 2], projection: Option<&[usize]>) -> Output {
        let all: Vec<usize> = (0..widths[0] + widths[1]).collect();
        let mut runs: Vec<OutputRun> = Vec::new();
        for &c in projection.unwrap_or(&all) {
            let (side, column) = match c < widths[0] {
                true => (0, c),
                false => (1, c - widths[0]),
            };
            match runs.last_mut() {
                Some(run) if run.side == side && run.columns.end == column => run.columns.end += 1,
                _ => runs.push(OutputRun {
                    side,
                    columns: column..column + 1,
                    to_end: false,
                }),
            }
        }
        let mut located = [0; 2];
        for run in &mut runs {
            run.to_end = run.columns.end == widths[run.side];
            let needed = match run.to_end {
                true => run.columns.start,
                false => run.columns.end,
            };
            located[run.side] = located[run.side].max(needed);
        }
        Output { runs, located }
    }

    /// The output change of each joined row: its `seq` and kind, the output row of its probe
    /// and build rows.
    fn changes<K>(self) -> impl FnMut(K, Joined<Row, Row>) -> Change<Row> + 'static {
        let mut spans = [ColumnSpans::new(), ColumnSpans::new()];
        move |_, joined| {
            let (probe, build) = joined.row;
            let row = self.row(&probe, build.as_ref(), &mut spans);
            Change::new(joined.seq, joined.kind, row)
        }
    }

    /// The output row of `probe` joined with `build` (`None`: padded with NULLs); `spans` are
    /// reused buffers for locating the rows' columns.
    fn row(&self, probe: &Row, build: Option<&Row>, spans: &mut [ColumnSpans; 2]) -> Row {
        let [probe_spans, build_spans] = spans;
        let located = [
            probe_spans.locate(probe, self.located[0]),
            build_spans.locate(build.unwrap_or(probe), build.map_or(0, |_| self.located[1])),
        ];
        // The bytes of `run`, or `None` for a padded build run.
        let bytes = |run: &OutputRun| {
            if run.side == 1 && build.is_none() {
                return None;
            }
            Some(match run.to_end {
                true => located[run.side].suffix(run.columns.start),
                false => located[run.side].columns(run.columns.clone()),
            })
        };
        let size = (self.runs.iter())
            .map(|run| bytes(run).map_or(run.columns.len(), |b| b.as_bytes().len()))
            .sum();
        let mut row = Row::with_capacity(size);
        let mut packer = row.packer();
        for run in &self.runs {
            match bytes(run) {
                Some(b) => packer.extend_by_row(b),
                None => packer.extend(std::iter::repeat_n(Datum::Null, run.columns.len())),
            }
        }
        row
    }
}

/// The residual condition as the operators take it: TRUE passes; FALSE, NULL and an evaluation
/// error do not (an error in a join condition counts as no match, as a failed comparison would).
pub(super) fn residual_fn(residual: Option<CompiledExpr>) -> impl Fn(&Row, &Row) -> bool + 'static {
    let buffers = RefCell::new((DatumVec::new(), RowArena::new()));
    move |probe: &Row, build: &Row| {
        let Some(residual) = &residual else {
            return true;
        };
        let mut buffers = buffers.borrow_mut();
        let (datums, arena) = &mut *buffers;
        arena.clear();
        let datums = datums.borrow_with_all([probe.as_row_ref(), build.as_row_ref()]);
        matches!(residual.eval(&datums, arena), Ok(Datum::Bool(true)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integer_key_reads_only_integers() {
        let datums = [Datum::Str("EUR"), Datum::Int(7)];
        assert_eq!(<i64 as JoinKeyOf>::of(&datums, &[1]), Some(7));
        assert_eq!(<i64 as JoinKeyOf>::of(&datums, &[0]), None);
        assert_eq!(
            <Row as JoinKeyOf>::of(&datums, &[0]),
            Some(Row::pack([Datum::Str("EUR")]))
        );
    }

    /// Output rows are copied run by run from the probe and build rows; a padded build row's
    /// columns are NULL.
    #[test]
    fn output_rows_are_runs_of_the_input_rows() {
        let probe = Row::pack([Datum::Int(7), Datum::Str("EUR"), Datum::Int(-3)]);
        let build = Row::pack([Datum::Str("EUR"), Datum::Null, Datum::Int(1 << 40)]);
        let mut spans = [ColumnSpans::new(), ColumnSpans::new()];
        let run = |side, columns, to_end| OutputRun {
            side,
            columns,
            to_end,
        };

        let all = Output::new([3, 3], None);
        assert_eq!(all.runs, vec![run(0, 0..3, true), run(1, 0..3, true)]);
        assert_eq!(all.located, [0, 0]);
        let joined = Row::pack(probe.iter().chain(build.iter()));
        assert_eq!(all.row(&probe, Some(&build), &mut spans), joined);
        let padded = Row::pack(probe.iter().chain([Datum::Null; 3]));
        assert_eq!(all.row(&probe, None, &mut spans), padded);

        // `select(k, ts, payload, rate)` of the throughput report: the whole probe row, then
        // the build row's last column.
        let select = Output::new([3, 3], Some(&[0, 1, 2, 5]));
        assert_eq!(select.runs, vec![run(0, 0..3, true), run(1, 2..3, true)]);
        assert_eq!(select.located, [0, 2]);
        let expected = Row::pack(probe.iter().chain([Datum::Int(1 << 40)]));
        assert_eq!(select.row(&probe, Some(&build), &mut spans), expected);

        // Reordered and repeated columns, a run spanning both rows' boundary kept apart.
        let mixed = Output::new([3, 3], Some(&[4, 5, 1, 2, 3, 1]));
        let runs = vec![
            run(1, 1..3, true),
            run(0, 1..3, true),
            run(1, 0..1, false),
            run(0, 1..2, false),
        ];
        assert_eq!(mixed.runs, runs);
        assert_eq!(mixed.located, [2, 1]);
        let datums = [
            Datum::Null,
            Datum::Int(1 << 40),
            Datum::Str("EUR"),
            Datum::Int(-3),
            Datum::Str("EUR"),
            Datum::Str("EUR"),
        ];
        assert_eq!(
            mixed.row(&probe, Some(&build), &mut spans),
            Row::pack(datums)
        );
        let padded = [Datum::Null, Datum::Null, Datum::Str("EUR"), Datum::Int(-3)];
        let padded = Row::pack(padded.into_iter().chain([Datum::Null, Datum::Str("EUR")]));
        assert_eq!(mixed.row(&probe, None, &mut spans), padded);

        // The commands' output: each row's cells without its two leading stamps, the rest of
        // each row copied from its third column on.
        let cells = Output::new([3, 3], Some(&[1, 2, 4, 5]));
        assert_eq!(cells.runs, vec![run(0, 1..3, true), run(1, 1..3, true)]);
        assert_eq!(cells.located, [1, 1]);
        let expected = Row::pack(probe.iter().skip(1).chain(build.iter().skip(1)));
        assert_eq!(cells.row(&probe, Some(&build), &mut spans), expected);
        let padded = Row::pack(probe.iter().skip(1).chain([Datum::Null; 2]));
        assert_eq!(cells.row(&probe, None, &mut spans), padded);
    }
}
