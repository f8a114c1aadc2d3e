//! The window assignment node: the rows of a window table-valued function read directly
//! (see [`WindowAssign`]).

use crate::expr::{bind_aggregate, count_star, FunctionRegistry};
use crate::repr::{DataType, Field, Rowtime, Schema};

use super::{Mode, Node, PlanError, RelExpr, WindowAgg, WindowSpec};

/// A window assignment ([`Node::WindowAssign`]): the rows of Flink's window
/// table-valued functions `TUMBLE`, `HOP` and `CUMULATE` read directly
/// (`docs/dev/table/sql/queries/window-tvf.md`), as in
///
/// ```sql
/// SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
/// ```
///
/// Each input row once per window holding its rowtime (the windows of
/// [`WindowSpec::windows`]: one for TUMBLE, `size / slide` for HOP, every cumulating window
/// holding it for CUMULATE), with the window appended: the output is the input's columns, then
/// `window_start`, `window_end` (TIMESTAMP(3) NOT NULL) and `window_time` (`window_end - 1 ms`,
/// the output's rowtime attribute, with the input's watermark delay). The input's time column
/// stays, as a plain column. A row whose rowtime is NULL is refused with its `seq`.
///
/// Over the input's proctime attribute instead (a processing-time TVF, whose time is each row's
/// stamp: see [`ProcessingClock`](crate::plan::ProcessingClock)) the windows are the same over
/// the stamps, with a watermark of delay 0 (no row is ever late), and `window_time`, still
/// `window_end - 1 ms`, is the output's **proctime** attribute (Flink's rule: a proctime TVF's
/// `window_time` is a proctime attribute), the output having no rowtime. Its value is the
/// processing time at which the window closes (Flink's processing-time timer fires at
/// `end - 1`), the same in both modes; in final mode the windows fire in order of their end,
/// so the `window_time`s grow with system time and a processing-time window over them sees
/// no late row.
///
/// Flink's rules: the windows are over a time attribute of the input; the input is append-only
/// (Flink's window table function consumes inserts only); SESSION windows cannot be read
/// without `GROUP BY window_start, window_end`, since a row's session depends on the rows that
/// come after it (Flink's planner refuses them too).
///
/// Two modes, as every node has them ([`ExecutionMode`](crate::render::ExecutionMode)); the
/// rows are the same in both, only when they appear and which are late differ:
/// * *incremental*: each row's windowed rows at once, with its `seq` (stateless).
/// * *final*: the rows of a window when the watermark passes its last event time (`end - 1`),
///   together, so that a Top-N per window ranks each window once, when it closes (Flink's
///   window Top-N following a window TVF); a row for a window the watermark has already passed
///   is refused as late, one report per window it misses, never silently dropped. This is the
///   window aggregation's final mode with no allowed lateness, counting the copies of each row
///   of a window ([`WindowAssign::counted`]); a window's rows are freed when it fires.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowAssign {
    /// The input (append-only, with a rowtime or proctime attribute).
    pub input: Box<RelExpr>,
    /// The input's rowtime (or stamped proctime) column the windows are over.
    pub time: usize,
    /// The windows (TUMBLE, HOP or CUMULATE; the offset normalised).
    pub window: WindowSpec,
}

impl WindowAssign {
    /// The final mode's model: the window aggregation grouped by every input column and the
    /// window, counting the rows (`COUNT(*)`, the last column), with no allowed lateness. Its
    /// output row without the count, repeated count times, is the assignment's output.
    ///
    /// Errors: none for a node built by [`RelExpr::window_assign`] (the count binds over any
    /// schema).
    pub fn counted(&self) -> Result<WindowAgg, PlanError> {
        let count = bind_aggregate(&count_star(), &self.input.schema, &FunctionRegistry::new())?;
        Ok(WindowAgg {
            input: self.input.clone(),
            time: self.time,
            window: self.window,
            group: (0..self.input.schema.len()).collect(),
            aggregates: vec![count],
            lateness_ms: 0,
        })
    }
}

impl RelExpr {
    /// Each row once per window of `window` over the rowtime (or proctime) column `time`
    /// holding it, with `window_start`, `window_end`, `window_time` appended (see
    /// [`WindowAssign`]). Append-only; its rowtime attribute (over a proctime column: its
    /// proctime attribute) is `window_time`.
    ///
    /// Errors, each naming the column or window: `time` is neither the input's rowtime nor its
    /// proctime attribute,
    /// the input is updating, a SESSION window, a window size that is not positive or puts a
    /// row in more than [`MAX_WINDOWS_PER_ROW`](super::window::MAX_WINDOWS_PER_ROW) windows
    /// (Flink's messages), an input column named like a window column.
    ///
    /// ```
    /// use differential_temporal::plan::{RelExpr, WindowSpec};
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let schema = Schema::builder()
    ///     .column("price", DataType::BigInt.nullable())
    ///     .column("bidtime", DataType::Timestamp(3).nullable())
    ///     .rowtime("bidtime", 1000)
    ///     .build()
    ///     .unwrap();
    /// // TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)
    /// let rows = RelExpr::scan("Bid", schema, false)
    ///     .window_assign(1, WindowSpec::tumble(600_000))
    ///     .unwrap();
    /// assert_eq!(
    ///     rows.schema.names().collect::<Vec<_>>(),
    ///     ["price", "bidtime", "window_start", "window_end", "window_time"]
    /// );
    /// assert_eq!(rows.schema.rowtime.map(|r| r.column), Some(4));
    /// ```
    pub fn window_assign(self, time: usize, window: WindowSpec) -> Result<RelExpr, PlanError> {
        const NODE: &str = "WindowTableFunction";
        self.check_window_input(NODE, time, &window, |field| {
            format!(
                "The window function {} requires the timecol to be a time attribute, but '{}' ({}) is not one (declare a WATERMARK for it, or AS PROCTIME())",
                window.name(),
                field.name,
                field.ty
            )
        })?;
        if let WindowSpec::Session { .. } = window {
            return Err(PlanError::invalid(
                NODE,
                "the rows of a SESSION window table-valued function cannot be read directly (Flink does not support it either: a row's session depends on the rows after it); use SESSION followed by GROUP BY window_start, window_end, or TUMBLE, HOP or CUMULATE",
            ));
        }
        let width = self.schema.len();
        let mut fields = self.schema.fields.clone();
        for name in ["window_start", "window_end", "window_time"] {
            fields.push(Field::new(name, DataType::Timestamp(3).not_null()));
        }
        let mut schema = Schema::new(fields)?;
        match self.schema.proctime == Some(time) {
            true => schema.proctime = Some(width + 2),
            false => {
                schema.rowtime = Some(Rowtime {
                    column: width + 2,
                    delay_ms: self.schema.rowtime.as_ref().map_or(0, |r| r.delay_ms),
                })
            }
        }
        Ok(RelExpr {
            node: Node::WindowAssign(WindowAssign {
                input: Box::new(self),
                time,
                window: window.normalized(),
            }),
            schema,
            mode: Mode::AppendOnly,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::{RelExpr, WindowSpec};
    use crate::repr::{DataType, Schema};

    fn bids(changelog: bool) -> RelExpr {
        let schema = Schema::builder()
            .column("item", DataType::STRING.nullable())
            .column("bidtime", DataType::Timestamp(3).nullable())
            .column("other", DataType::Timestamp(3).nullable())
            .rowtime("bidtime", 1000)
            .build()
            .unwrap();
        RelExpr::scan("Bid", schema, changelog)
    }

    #[test]
    fn the_output_is_the_row_then_the_window() {
        let plan = bids(false)
            .window_assign(1, WindowSpec::hop(10, 5).with_offset(-3))
            .unwrap();
        assert_eq!(
            plan.explain(),
            "WindowTableFunction(window=[HOP(size=10ms, slide=5ms, offset=2ms) ON bidtime]) -> [item STRING, bidtime TIMESTAMP(3), other TIMESTAMP(3), window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL, window_time TIMESTAMP(3) NOT NULL] append-only rowtime=window_time\n  Scan(table=[Bid]) -> [item STRING, bidtime TIMESTAMP(3), other TIMESTAMP(3)] append-only rowtime=bidtime\n"
        );
        assert_eq!(plan.schema.rowtime.as_ref().map(|r| r.delay_ms), Some(1000));
    }

    /// Negative event times, a negative offset (normalised) and a NULL rowtime, through the
    /// reference in both modes: the row at -1 ms falls in the HOP windows `[-8, 2)` and
    /// `[-3, 7)` (slide 5 aligned to 2); the NULL row is refused, as the window aggregation
    /// refuses it; final mode gives the same rows once the input ends.
    #[test]
    fn negative_times_offsets_and_null_rowtime() {
        use crate::plan::reference::{evaluate, evaluate_final, snapshot, Inputs};
        use crate::repr::{Datum, Row, Ts};
        use differential_temporal_operators::{Change, RowKind};
        let ts = |millis| {
            Datum::Timestamp(Ts {
                millis,
                nanos_of_milli: 0,
            })
        };
        let plan = bids(false)
            .window_assign(1, WindowSpec::hop(10, 5).with_offset(-3))
            .unwrap();
        let row = |t: Datum<'static>| Row::pack([Datum::Str("a"), t, Datum::Null]);
        let input = vec![
            (0, Change::new(1, RowKind::Insert, row(ts(-1)))),
            (1, Change::new(2, RowKind::Insert, row(Datum::Null))),
        ];
        let inputs = Inputs::from([("Bid".to_string(), input)]);
        let expected: Vec<(Row, isize)> = [(-8, 2), (-3, 7)]
            .into_iter()
            .map(|(start, end)| {
                let window = [ts(start), ts(end), ts(end - 1)];
                let row = Row::pack(
                    [Datum::Str("a"), ts(-1), Datum::Null]
                        .into_iter()
                        .chain(window),
                );
                (row, 1)
            })
            .collect();
        for evaluated in [evaluate(&plan, &inputs), evaluate_final(&plan, &inputs)] {
            let evaluated = evaluated.unwrap();
            assert_eq!(snapshot(&evaluated.stream, u64::MAX), expected);
            let refused: Vec<_> = (evaluated.refused.iter())
                .map(|r| (r.seq, r.reason.as_str()))
                .collect();
            assert_eq!(refused, [(2, "the event time is NULL")]);
        }
    }

    #[test]
    fn misuse_is_refused_naming_the_column_or_window() {
        let err = |plan: RelExpr, time, window| plan.window_assign(time, window).unwrap_err();
        assert_eq!(
            err(bids(false), 2, WindowSpec::tumble(10)).to_string(),
            "WindowTableFunction: The window function TUMBLE requires the timecol to be a time attribute, but 'other' (TIMESTAMP(3)) is not one (declare a WATERMARK for it, or AS PROCTIME())"
        );
        assert_eq!(
            err(bids(true), 1, WindowSpec::tumble(10)).to_string(),
            "WindowTableFunction: WindowTableFunction doesn't support consuming update and delete changes which is produced by node Scan"
        );
        assert!(err(bids(false), 1, WindowSpec::session(10))
            .to_string()
            .contains("SESSION window table-valued function cannot be read directly"));
        assert_eq!(
            err(bids(false), 1, WindowSpec::cumulate(10, 3)).to_string(),
            "WindowTableFunction: Cumulative Window requires maxSize must be an integral multiple of step, but got maxSize 10ms and step 3ms."
        );
        let windowed = bids(false)
            .window_assign(1, WindowSpec::tumble(10))
            .unwrap();
        assert_eq!(
            err(windowed, 5, WindowSpec::tumble(10)).to_string(),
            "column 'window_start' is declared more than once"
        );
    }
}
