//! The window aggregation node ([`Node::WindowAgg`]): Flink's window table-valued functions
//! `TUMBLE`, `HOP` and `CUMULATE` followed by `GROUP BY window_start, window_end, keys`, and the
//! legacy group windows `GROUP BY TUMBLE(ts, ..)` / `HOP(ts, ..)`, which mean the same.
//!
//! Semantics (rule E2 of `semantics.md`): over the input's rowtime attribute `t` (milliseconds;
//! a sub-millisecond part does not move a row to another window), a row belongs to every window
//! `[start, end)` with `start <= t < end`, windows aligned to the epoch plus `offset`:
//! * `TUMBLE(size)`: `start = t - (t - offset) mod size`, `end = start + size`: one window a row.
//! * `HOP(size, slide)`: the windows of length `size` whose start is aligned to `slide`:
//!   `ceil(size / slide)` windows a row (Flink's sliding window).
//! * `CUMULATE(size, step)`: within the tumbling window of `size` holding `t`, the windows
//!   `[start, start + k * step)` for `k = 1 .. size / step` that hold `t`.
//! * `SESSION(gap)`: per group key, the runs of rows at most `gap` apart, each the window
//!   `[first, last + gap)` ([`WindowSpec::Session`]); a row that bridges two sessions merges
//!   them (both retracted, the merged one emitted). In final mode a session fires when the
//!   watermark reaches its end (`window_time = end - 1` passed, as Flink's session windows);
//!   a row is accepted while `t + lateness` is not behind the watermark (so it never reaches
//!   a session already freed), and a late row bridging fired sessions retracts them and shows
//!   the merged one once the watermark reaches its end (see
//!   [`session_aggregate_final`](differential_temporal_operators::window::session_aggregate_final)).
//!
//! Over the input's proctime attribute instead (a processing-time window) the time is each
//! row's stamp (see [`ProcessingClock`](crate::plan::ProcessingClock)) and the watermark's delay
//! 0: the stamps grow with system time, so no row is ever late; the output's `window_time`
//! (`end - 1 ms`, the processing time at which Flink's processing-time window fires) is then
//! its proctime attribute (the Table API's `w.proctime()`), and it has no rowtime.
//!
//! The output has one row per group key and window with rows: the group columns, then
//! `window_start`, `window_end` (TIMESTAMP(3)), `window_time` (`end - 1 ms`, the output's rowtime
//! attribute, or its proctime attribute over processing time), then the aggregates. Its upsert key is the group columns and the window bounds.
//!
//! Two modes, as every node has them ([`ExecutionMode`](crate::render::ExecutionMode)):
//! * *incremental*: each window's row is exact at every system time; a row arriving after its
//!   window's row was emitted retracts it and emits the new one. The state (a differential
//!   reduce) is every window's, never freed.
//! * *final* (Flink's default): a window's row is emitted once, when the watermark passes its
//!   last event time (`end - 1`). With an allowed lateness `L` (Flink's
//!   `table.exec.emit.allow-lateness`), a row for a window already emitted whose `end - 1 + L`
//!   the watermark has not passed updates it (`-U` old, `+U` new: Flink's late firing with delay
//!   0); a row for a window past `end - 1 + L` is refused as late, with its `seq`, one report per
//!   window it misses, never silently dropped. A window's state is freed when the watermark
//!   passes `end - 1 + L` (a session's when it passes `end + L`). The watermark is the
//!   input's, per system time (see [`watermark`](differential_temporal_operators::watermark)).

use differential_temporal_operators::window::session_runs;

use crate::expr::AggregateExpr;
use crate::repr::{DataType, Field, Rowtime, Schema, Ts};

use super::{Mode, Node, PlanError, RelExpr};

/// The most windows a row may fall in (HOP's `size / slide`, CUMULATE's `size / step`): each
/// is one record, so a row in millions of windows would stall the dataflow.
pub const MAX_WINDOWS_PER_ROW: i64 = 1000;

/// The shape of a window aggregation's windows; sizes, steps and offsets in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowSpec {
    /// Fixed windows of `size`, one per row.
    Tumble {
        /// The window length.
        size: i64,
        /// Where windows start, relative to the epoch (normalised into `0..size`).
        offset: i64,
    },
    /// Windows of `size` starting every `slide`.
    Hop {
        /// The window length.
        size: i64,
        /// The distance between window starts.
        slide: i64,
        /// Where windows start, relative to the epoch (normalised into `0..slide`).
        offset: i64,
    },
    /// Session windows: per group key, rows whose event times are at most `gap` apart (after
    /// sorting) share a window `[first time, last time + gap)`. Rows exactly `gap` apart are in
    /// one session, as Flink's `TimeWindow.intersects` includes the end; as the sessions are
    /// the connected runs of the key's rows, they are the same whatever the arrival order.
    Session {
        /// The largest distance between two consecutive rows of a session.
        gap: i64,
    },
    /// Windows growing by `step` from the start of each tumbling window of `size`.
    Cumulate {
        /// The largest window's length (a multiple of `step`).
        size: i64,
        /// The growth of each window.
        step: i64,
        /// Where windows start, relative to the epoch (normalised into `0..size`).
        offset: i64,
    },
}

impl WindowSpec {
    /// `TUMBLE` windows of `size` ms.
    pub fn tumble(size: i64) -> WindowSpec {
        WindowSpec::Tumble { size, offset: 0 }
    }

    /// `HOP` windows of `size` ms every `slide` ms.
    pub fn hop(size: i64, slide: i64) -> WindowSpec {
        WindowSpec::Hop {
            size,
            slide,
            offset: 0,
        }
    }

    /// `CUMULATE` windows of at most `size` ms growing by `step` ms.
    pub fn cumulate(size: i64, step: i64) -> WindowSpec {
        WindowSpec::Cumulate {
            size,
            step,
            offset: 0,
        }
    }

    /// `SESSION` windows with `gap` ms of inactivity between them.
    pub fn session(gap: i64) -> WindowSpec {
        WindowSpec::Session { gap }
    }

    /// The same windows shifted by `offset` ms from the epoch (sessions have no offset).
    pub fn with_offset(mut self, offset: i64) -> WindowSpec {
        match &mut self {
            WindowSpec::Tumble { offset: o, .. }
            | WindowSpec::Hop { offset: o, .. }
            | WindowSpec::Cumulate { offset: o, .. } => *o = offset,
            WindowSpec::Session { .. } => {}
        }
        self
    }

    /// The SQL function's name.
    pub fn name(&self) -> &'static str {
        match self {
            WindowSpec::Tumble { .. } => "TUMBLE",
            WindowSpec::Hop { .. } => "HOP",
            WindowSpec::Cumulate { .. } => "CUMULATE",
            WindowSpec::Session { .. } => "SESSION",
        }
    }

    /// Checks the sizes, with Flink's messages (its window assigners').
    pub fn check(&self) -> Result<(), String> {
        match *self {
            WindowSpec::Tumble { size, .. } if size <= 0 => Err(format!(
                "Tumbling Window parameters must satisfy size > 0, but got size {size}ms."
            )),
            WindowSpec::Hop { size, slide, .. } if size <= 0 || slide <= 0 => Err(format!(
                "Hopping Window must satisfy slide > 0 and size > 0, but got slide {slide}ms and size {size}ms."
            )),
            WindowSpec::Cumulate { size, step, .. } if size <= 0 || step <= 0 => Err(format!(
                "Cumulative Window parameters must satisfy maxSize > 0 and step > 0, but got maxSize {size}ms and step {step}ms."
            )),
            WindowSpec::Session { gap } if gap <= 0 => Err(format!(
                "Session Window parameters must satisfy gap > 0, but got gap {gap}ms."
            )),
            WindowSpec::Cumulate { size, step, .. } if size % step != 0 => Err(format!(
                "Cumulative Window requires maxSize must be an integral multiple of step, but got maxSize {size}ms and step {step}ms."
            )),
            WindowSpec::Hop { size, slide, .. } if size / slide > MAX_WINDOWS_PER_ROW => Err(format!(
                "a HOP window of size {size}ms every {slide}ms puts each row in {} windows; at most {MAX_WINDOWS_PER_ROW} are supported (a larger slide, or a smaller size)",
                size / slide
            )),
            WindowSpec::Cumulate { size, step, .. } if size / step > MAX_WINDOWS_PER_ROW => Err(format!(
                "a CUMULATE window of size {size}ms by steps of {step}ms puts a row in up to {} windows; at most {MAX_WINDOWS_PER_ROW} are supported (a larger step)",
                size / step
            )),
            _ => Ok(()),
        }
    }

    /// The same windows with the offset normalised into `0..size` (`0..slide` for HOP), as
    /// plans keep it. The spec must have passed [`check`](Self::check) (sizes are positive).
    pub fn normalized(self) -> WindowSpec {
        match self {
            WindowSpec::Tumble { size, offset } => WindowSpec::Tumble {
                size,
                offset: offset.rem_euclid(size),
            },
            WindowSpec::Hop {
                size,
                slide,
                offset,
            } => WindowSpec::Hop {
                size,
                slide,
                offset: offset.rem_euclid(slide),
            },
            WindowSpec::Cumulate { size, step, offset } => WindowSpec::Cumulate {
                size,
                step,
                offset: offset.rem_euclid(size),
            },
            session @ WindowSpec::Session { .. } => session,
        }
    }

    /// Appends to `out` the windows `(start, end)` in ms that hold the event time `t` (ms),
    /// by ascending start, then end. The spec must have passed [`check`](Self::check). A
    /// session depends on the other rows of its key: see [`sessions`]; here none is appended.
    pub fn windows(&self, t: i64, out: &mut Vec<(i64, i64)>) {
        // The start of the window of `length` aligned to `offset` that holds `t`.
        let start_of = |length: i64, offset: i64| t - (t - offset).rem_euclid(length);
        match *self {
            WindowSpec::Tumble { size, offset } => {
                let start = start_of(size, offset);
                out.push((start, start.saturating_add(size)));
            }
            WindowSpec::Hop {
                size,
                slide,
                offset,
            } => {
                let last = start_of(slide, offset);
                let first = out.len();
                let mut start = last;
                while start > t.saturating_sub(size) {
                    out.push((start, start.saturating_add(size)));
                    start = start.saturating_sub(slide);
                }
                out[first..].reverse();
            }
            WindowSpec::Session { .. } => {}
            WindowSpec::Cumulate { size, step, offset } => {
                let start = start_of(size, offset);
                // The first end after `t`, then every step up to the full window.
                let first_end = start + ((t - start) / step + 1) * step;
                let mut end = first_end;
                while end <= start.saturating_add(size) {
                    out.push((start, end));
                    end = end.saturating_add(step);
                }
            }
        }
    }
}

/// As `explain` prints it: `TUMBLE(size=5ms)`, `HOP(size=10ms, slide=5ms, offset=1ms)`.
impl std::fmt::Display for WindowSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (size, (step_name, step), offset) = match *self {
            WindowSpec::Tumble { size, offset } => (size, ("", 0), offset),
            WindowSpec::Hop {
                size,
                slide,
                offset,
            } => (size, ("slide", slide), offset),
            WindowSpec::Cumulate { size, step, offset } => (size, ("step", step), offset),
            WindowSpec::Session { gap } => return write!(f, "SESSION(gap={gap}ms)"),
        };
        write!(f, "{}(size={size}ms", self.name())?;
        if !step_name.is_empty() {
            write!(f, ", {step_name}={step}ms")?;
        }
        if offset != 0 {
            write!(f, ", offset={offset}ms")?;
        }
        f.write_str(")")
    }
}

/// The parts of a window aggregation; see the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct WindowAgg {
    /// The input (append-only, with a rowtime or proctime attribute).
    pub input: Box<RelExpr>,
    /// The input's rowtime (or proctime) column the windows are over.
    pub time: usize,
    /// The windows.
    pub window: WindowSpec,
    /// The group columns besides the window.
    pub group: Vec<usize>,
    /// The aggregates, over the input's columns.
    pub aggregates: Vec<AggregateExpr>,
    /// The allowed lateness in final mode, ms (0: none; unused in incremental mode).
    pub lateness_ms: i64,
}

impl WindowAgg {
    /// The columns of the input a window's rows are grouped by in the windowed input (the input's
    /// columns followed by `window_start`, `window_end`, `window_time`): the group columns, then
    /// the three window columns.
    pub fn windowed_group(&self) -> Vec<usize> {
        let width = self.input.schema.len();
        let mut group = self.group.clone();
        group.extend([width, width + 1, width + 2]);
        group
    }

    /// The delay of the watermark over the time column, ms (see [`watermark_delay_ms`]).
    pub fn watermark_delay_ms(&self) -> i64 {
        watermark_delay_ms(&self.input.schema, self.time)
    }
}

/// The delay of the watermark over the time column `time` of `schema`, ms: the rowtime's
/// declared delay, 0 over the proctime attribute (its stamps grow with system time, so no row
/// is late). Shared by the window aggregation and the OVER aggregation.
pub fn watermark_delay_ms(schema: &Schema, time: usize) -> i64 {
    match &schema.rowtime {
        Some(r) if r.column == time => r.delay_ms,
        _ => 0,
    }
}

/// The sessions of one key's rows: `times` (ms, sorted ascending) cut where two consecutive
/// times are more than `gap` apart (the operators' rule, [`within_gap`]); each session as
/// `(start, end, rows)` with `end = last time + gap` and `rows` the range of `times` it holds.
///
/// [`within_gap`]: differential_temporal_operators::window::within_gap
pub fn sessions(times: &[i64], gap: i64) -> Vec<(i64, i64, std::ops::Range<usize>)> {
    let end = |t: &i64| t.saturating_add(gap);
    (session_runs(times, end).into_iter())
        .map(|run| (times[run.start], end(&times[run.end - 1]), run))
        .collect()
}

/// The event time of a window's bounds and its `window_time`, as TIMESTAMP(3) values.
pub fn window_datums(start: i64, end: i64) -> [Ts; 3] {
    let ts = |millis| Ts {
        millis,
        nanos_of_milli: 0,
    };
    [ts(start), ts(end), ts(end.saturating_sub(1))]
}

impl RelExpr {
    /// `GROUP BY window, group` computing `aggregates` (aggregate, output name) over the
    /// windows `window` of the rowtime (or stamped proctime) column `time` (see the [module
    /// docs](self)); in final mode rows up to `lateness_ms` behind a window's end still update
    /// it.
    ///
    /// Errors, each naming the column: `time` is neither the input's rowtime nor its proctime
    /// attribute (Flink: a window is defined over a time attribute), the input is updating
    /// (Flink's window aggregation consumes inserts only), a window size that is not positive
    /// (Flink's message), a negative lateness, a group column out of range, a duplicate output
    /// name.
    pub fn window_agg(
        self,
        time: usize,
        window: WindowSpec,
        group: Vec<usize>,
        aggregates: Vec<(AggregateExpr, String)>,
        lateness_ms: i64,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "WindowAggregate";
        self.check_window_input(NODE, time, &window, |field| {
            format!(
                "Window aggregate can only be defined over a time attribute column, but '{}' ({}) is not one (declare a WATERMARK for it, or AS PROCTIME())",
                field.name, field.ty
            )
        })?;
        let proctime = self.schema.proctime == Some(time);
        if lateness_ms < 0 {
            return Err(PlanError::invalid(
                NODE,
                format!("the allowed lateness must not be negative, but is {lateness_ms} ms"),
            ));
        }
        // A window's group holds a row (it exists because one fell into it).
        let aggregates: Vec<_> = (aggregates.into_iter())
            .map(|(a, name)| (a.in_keyed_group(), name))
            .collect();
        let mut fields = Vec::with_capacity(group.len() + 3 + aggregates.len());
        for &c in &group {
            let field = self.schema.fields.get(c).cloned().ok_or_else(|| {
                PlanError::invalid(NODE, format!("group column {c} out of range"))
            })?;
            fields.push(field);
        }
        for name in ["window_start", "window_end", "window_time"] {
            fields.push(Field::new(name, DataType::Timestamp(3).not_null()));
        }
        for (agg, name) in &aggregates {
            fields.push(Field::new(name.clone(), agg.ty.clone()));
        }
        let mut schema = Schema::new(fields)?;
        let key: Vec<usize> = (0..group.len() + 2).collect();
        schema.primary_key = Some(key.clone());
        // Over processing time `window_time` is the proctime attribute (Flink's), no rowtime.
        match proctime {
            true => schema.proctime = Some(group.len() + 2),
            false => {
                schema.rowtime = Some(Rowtime {
                    column: group.len() + 2,
                    delay_ms: self.schema.rowtime.as_ref().map_or(0, |r| r.delay_ms),
                })
            }
        }
        Ok(RelExpr {
            node: Node::WindowAgg(WindowAgg {
                input: Box::new(self),
                time,
                window: window.normalized(),
                group,
                aggregates: aggregates.into_iter().map(|(a, _)| a).collect(),
                lateness_ms,
            }),
            schema,
            mode: Mode::Updating {
                upsert_key: Some(key),
            },
        })
    }
}

impl RelExpr {
    /// `Ok` when this input can be windowed by `window` over column `time`: the column is
    /// its rowtime or its proctime attribute (else `node`'s error, worded by `not_rowtime` from
    /// the column), the input is append-only (Flink's window operators consume inserts only) or
    /// its only updates are an earlier window aggregation's ([`updates_only_windows`]: a
    /// cascading window aggregation), and the window's sizes are valid.
    ///
    /// [`updates_only_windows`]: RelExpr::updates_only_windows
    pub(super) fn check_window_input(
        &self,
        node: &'static str,
        time: usize,
        window: &WindowSpec,
        not_rowtime: impl FnOnce(&Field) -> String,
    ) -> Result<(), PlanError> {
        let field =
            self.schema.fields.get(time).ok_or_else(|| {
                PlanError::invalid(node, format!("time column {time} out of range"))
            })?;
        let proctime = self.schema.proctime == Some(time);
        if self.schema.rowtime.as_ref().map(|r| r.column) != Some(time) && !proctime {
            return Err(PlanError::invalid(node, not_rowtime(field)));
        }
        if !self.updates_only_windows() {
            self.require_append_only(node)?;
        }
        window.check().map_err(|e| PlanError::invalid(node, e))
    }

    /// Whether this updating input's updates are only a window aggregation's revisions of its
    /// windows' rows, through projections and filters: the input of a cascading window
    /// aggregation (Flink's window-aggregation docs, "Cascading Window Aggregation": the outer
    /// window runs on the inner one's `window_time`). Flink's window aggregation emits each
    /// window once, insert-only; here a window's row is revised by a late row (incremental mode,
    /// or final mode within the allowed lateness), and the outer window folds the revision in as
    /// a retraction and an insertion, so its windows hold what they would over the inner
    /// windows' last rows.
    fn updates_only_windows(&self) -> bool {
        match &self.node {
            Node::WindowAgg(_) => true,
            Node::Project { input, .. } | Node::Filter { input, .. } | Node::Map { input, .. } => {
                input.mode.is_append_only() || input.updates_only_windows()
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WindowSpec;
    use crate::expr::{bind_aggregate, col, FunctionRegistry};
    use crate::plan::RelExpr;
    use crate::repr::{DataType, Schema};

    fn orders(changelog: bool) -> RelExpr {
        let schema = Schema::builder()
            .column("a", DataType::STRING.nullable())
            .column("b", DataType::BigInt.nullable())
            .column("rowtime", DataType::Timestamp(3).nullable())
            .column("other", DataType::Timestamp(3).nullable())
            .rowtime("rowtime", 1000)
            .build()
            .unwrap();
        RelExpr::scan("Orders", schema, changelog)
    }

    fn avg_b(plan: &RelExpr) -> Vec<(crate::expr::AggregateExpr, String)> {
        let agg = bind_aggregate(&col("b").avg(), &plan.schema, &FunctionRegistry::new());
        vec![(agg.unwrap(), "avg_b".to_string())]
    }

    #[test]
    fn the_output_is_keys_window_and_aggregates() {
        let input = orders(false);
        let aggs = avg_b(&input);
        let plan = input
            .window_agg(2, WindowSpec::tumble(3_600_000), vec![0], aggs, 0)
            .unwrap();
        assert_eq!(
            plan.explain(),
            "WindowAggregate(window=[TUMBLE(size=3600000ms) ON rowtime], group=[a], aggs=[AVG(b) AS avg_b], lateness=0ms) -> [a STRING, window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL, window_time TIMESTAMP(3) NOT NULL, avg_b BIGINT] updating(key=[a, window_start, window_end]) rowtime=window_time\n  Scan(table=[Orders]) -> [a STRING, b BIGINT, rowtime TIMESTAMP(3), other TIMESTAMP(3)] append-only rowtime=rowtime\n"
        );
        assert_eq!(plan.schema.rowtime.as_ref().map(|r| r.delay_ms), Some(1000));
    }

    #[test]
    fn misuse_is_refused_naming_the_column() {
        let input = orders(false);
        let aggs = avg_b(&input);
        let err = (input.clone())
            .window_agg(3, WindowSpec::tumble(10), vec![], aggs.clone(), 0)
            .unwrap_err();
        assert_eq!(err.to_string(), "WindowAggregate: Window aggregate can only be defined over a time attribute column, but 'other' (TIMESTAMP(3)) is not one (declare a WATERMARK for it, or AS PROCTIME())");
        let err = (orders(true))
            .window_agg(2, WindowSpec::tumble(10), vec![], aggs.clone(), 0)
            .unwrap_err();
        assert_eq!(err.to_string(), "WindowAggregate: WindowAggregate doesn't support consuming update and delete changes which is produced by node Scan");
        let err = (input.clone())
            .window_agg(2, WindowSpec::hop(10, 0), vec![], aggs.clone(), 0)
            .unwrap_err();
        assert_eq!(err.to_string(), "WindowAggregate: Hopping Window must satisfy slide > 0 and size > 0, but got slide 0ms and size 10ms.");
        let err = (input.clone())
            .window_agg(2, WindowSpec::tumble(10), vec![], aggs, -1)
            .unwrap_err();
        assert!(err.to_string().contains("must not be negative"), "{err}");
    }

    fn windows(spec: WindowSpec, t: i64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        spec.windows(t, &mut out);
        out
    }

    #[test]
    fn windows_hold_their_rows() {
        assert_eq!(windows(WindowSpec::tumble(5), 4), vec![(0, 5)]);
        assert_eq!(windows(WindowSpec::tumble(5), 5), vec![(5, 10)]);
        assert_eq!(windows(WindowSpec::tumble(5), -1), vec![(-5, 0)]);
        assert_eq!(
            windows(WindowSpec::tumble(10).with_offset(3), 2),
            vec![(-7, 3)]
        );
        assert_eq!(windows(WindowSpec::hop(10, 5), 7), vec![(0, 10), (5, 15)]);
        assert_eq!(
            windows(WindowSpec::hop(10, 3), 7),
            vec![(0, 10), (3, 13), (6, 16)]
        );
        assert_eq!(windows(WindowSpec::hop(2, 5), 8), vec![]);
        assert_eq!(
            windows(WindowSpec::cumulate(10, 2), 13),
            vec![(10, 14), (10, 16), (10, 18), (10, 20)]
        );
        assert_eq!(windows(WindowSpec::cumulate(10, 2), 19), vec![(10, 20)]);
    }

    #[test]
    fn sessions_are_runs_at_most_gap_apart() {
        // Case E02's Hello rows: {1, 2, 4, 8} and {16}.
        assert_eq!(
            super::sessions(&[1, 2, 4, 8, 16], 5),
            vec![(1, 13, 0..4), (16, 21, 4..5)]
        );
        // Rows exactly the gap apart share a session (Flink's inclusive intersection).
        assert_eq!(
            super::sessions(&[0, 5, 11], 5),
            vec![(0, 10, 0..2), (11, 16, 2..3)]
        );
        assert_eq!(super::sessions(&[], 5), vec![]);
        assert_eq!(
            WindowSpec::session(0).check().unwrap_err(),
            "Session Window parameters must satisfy gap > 0, but got gap 0ms."
        );
    }

    #[test]
    fn bad_sizes_are_refused_in_flinks_words() {
        assert_eq!(
            WindowSpec::tumble(0).check().unwrap_err(),
            "Tumbling Window parameters must satisfy size > 0, but got size 0ms."
        );
        assert!(WindowSpec::hop(10, -1).check().is_err());
        assert_eq!(
            WindowSpec::hop(86_400_000, 1).check().unwrap_err(),
            "a HOP window of size 86400000ms every 1ms puts each row in 86400000 windows; at most 1000 are supported (a larger slide, or a smaller size)"
        );
        assert!(WindowSpec::cumulate(86_400_000, 1).check().is_err());
        assert_eq!(
            WindowSpec::cumulate(10, 3).check().unwrap_err(),
            "Cumulative Window requires maxSize must be an integral multiple of step, but got maxSize 10ms and step 3ms."
        );
    }
}
