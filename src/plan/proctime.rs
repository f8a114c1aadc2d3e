//! The processing-time stamp ([`Node::ProcTime`]): the value of a `PROCTIME()` column.
//!
//! Processing time here is a function of system time, not a reading of the wall clock: the
//! environment's [`ProcessingClock`] maps system time `s` (input block `s` of each input enters
//! at `s`) to `P(s) = start + s * tick`, and a row of an append-only input that enters at `s`
//! carries `P(s)` in its proctime column. The stamp is applied where the row's system time is
//! visible (the rendered collection's timestamp, the reference interpreter's stream), so results
//! that read it (processing-time windows) are the same for a given input and batching on any
//! number of workers. Flink reads the wall clock per row, so its results are not reproducible.
//!
//! Only append-only inputs are stamped: on an updating input a `-U`/`-D` would be stamped at a
//! later system time than the `+I` it cancels and cancel nothing. An updating table's proctime
//! column keeps one value, `P(0)`, for every row (lookup joins and proctime deduplication order
//! by arrival and never read it), and processing-time windows over it are refused as every
//! window over an updating input is.

use std::time::Duration;

use differential_temporal_operators::SysTime;

use crate::repr::{Datum, Row, Ts};

use super::{Node, PlanError, RelExpr};

/// The processing-time clock: system time `s` is processing time `start + s * tick`.
///
/// A row of an append-only input entering at system time `s` (input block `s`) gets `P(s)` in
/// its `PROCTIME()` column ([`RelExpr::stamp_proctime`], applied where the system time is
/// visible), so processing-time windows depend on the input and its batching only, never on the
/// worker count or the machine's speed (Flink reads the wall clock per row). An updating input
/// is not stamped (a later `-U`/`-D` would not cancel its `+I`): its rows keep `P(0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessingClock {
    /// The processing time of system time 0, whole milliseconds.
    pub start: Ts,
    /// The processing time between two system times, in milliseconds (at least 1).
    pub tick_ms: i64,
    /// Whether `start` was read from the wall clock ([`ProcessingClock::wall_clock`]):
    /// `explain` then prints `start=wall clock`, so that a plan's text is the same on every run.
    pub from_wall_clock: bool,
}

impl ProcessingClock {
    /// The clock starting at `start` (its sub-millisecond part dropped) and advancing by `tick`
    /// a system time. Errors: a tick that is not a positive whole number of milliseconds (a
    /// zero tick would give rows of later system times the processing time of windows already
    /// closed).
    ///
    /// ```
    /// use differential_temporal::plan::ProcessingClock;
    /// use differential_temporal::repr::Ts;
    /// use std::time::Duration;
    ///
    /// let clock = ProcessingClock::new(Ts::from_millis(1_000), Duration::from_secs(1)).unwrap();
    /// assert_eq!(clock.at(3), Ts::from_millis(4_000));
    /// assert!(ProcessingClock::new(Ts::from_millis(0), Duration::from_micros(1500)).is_err());
    /// ```
    pub fn new(start: Ts, tick: Duration) -> Result<ProcessingClock, String> {
        let whole = tick.subsec_nanos().is_multiple_of(1_000_000);
        match i64::try_from(tick.as_millis()) {
            Ok(tick_ms) if tick_ms > 0 && whole => Ok(ProcessingClock {
                start: Ts::from_millis(start.millis),
                tick_ms,
                from_wall_clock: false,
            }),
            _ => Err(format!(
                "the processing-time clock's tick must be a positive whole number of milliseconds, but is {tick:?}"
            )),
        }
    }

    /// The clock starting now, on the wall clock, ticking 1 ms a system time: the default.
    pub fn wall_clock() -> ProcessingClock {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        ProcessingClock {
            start: Ts::from_millis(i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)),
            tick_ms: 1,
            from_wall_clock: true,
        }
    }

    /// The same clock (its start, read from the wall clock or not) ticking `tick` a system time.
    /// Errors: those of [`ProcessingClock::new`].
    ///
    /// ```
    /// use differential_temporal::plan::ProcessingClock;
    /// use std::time::Duration;
    ///
    /// let clock = ProcessingClock::wall_clock().with_tick(Duration::from_secs(1)).unwrap();
    /// assert_eq!(clock.to_string(), "start=wall clock, tick=1000ms");
    /// ```
    pub fn with_tick(self, tick: Duration) -> Result<ProcessingClock, String> {
        Ok(ProcessingClock {
            from_wall_clock: self.from_wall_clock,
            ..ProcessingClock::new(self.start, tick)?
        })
    }

    /// The processing time of system time `s`, `start + s * tick` (saturating).
    pub fn at(&self, s: SysTime) -> Ts {
        let s = i64::try_from(s).unwrap_or(i64::MAX);
        Ts::from_millis(
            self.start
                .millis
                .saturating_add(s.saturating_mul(self.tick_ms)),
        )
    }
}

/// As `explain` prints it: `start=1700000000000ms, tick=1000ms` (milliseconds since the epoch),
/// or `start=wall clock, tick=1ms` when the start was read from the wall clock (it differs per
/// run).
impl std::fmt::Display for ProcessingClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.from_wall_clock {
            true => f.write_str("start=wall clock")?,
            false => write!(f, "start={}ms", self.start.millis)?,
        }
        write!(f, ", tick={}ms", self.tick_ms)
    }
}

impl RelExpr {
    /// Each row with its proctime attribute `column` set to the processing time of the system
    /// time it enters at, on `clock` (see [`ProcessingClock`] for the rule).
    ///
    /// Errors: `column` is not the input's proctime attribute, or the input is updating (a
    /// retraction would not equal its insertion).
    pub fn stamp_proctime(
        self,
        column: usize,
        clock: ProcessingClock,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "ProcessingTime";
        if self.schema.proctime != Some(column) {
            let name = self.schema.fields.get(column).map_or("?", |f| &f.name);
            return Err(PlanError::invalid(
                NODE,
                format!("column '{name}' is not the proctime attribute"),
            ));
        }
        self.require_append_only(NODE)?;
        Ok(RelExpr {
            schema: self.schema.clone(),
            mode: self.mode.clone(),
            node: Node::ProcTime {
                input: Box::new(self),
                column,
                clock,
            },
        })
    }
}

impl RelExpr {
    /// Whether this plan's result depends on the system times its input enters at, not only
    /// on the input and its order (`seq`): it stamps processing time ([`Node::ProcTime`], which
    /// processing-time windows read), joins by processing time ([`Node::LookupJoin`]: a probe
    /// row sees the build rows that entered before it), counts rows into processing-time
    /// windows ([`Node::CountWindowAgg`]), or expires a regular join's idle state after some
    /// system times (`table.exec.state.ttl`). Batch execution, which enters all input at one
    /// system time, never runs such a plan: it would change its answer.
    ///
    /// ```
    /// use differential_temporal::plan::{ProcessingClock, RelExpr};
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let schema = Schema::builder()
    ///     .column("user", DataType::STRING.nullable())
    ///     .column("pt", DataType::TimestampLtz(3).not_null())
    ///     .proctime("pt")
    ///     .build()
    ///     .unwrap();
    /// let clicks = RelExpr::scan("Clicks", schema, false);
    /// assert!(!clicks.reads_processing_time());
    /// let stamped = clicks.stamp_proctime(1, ProcessingClock::wall_clock()).unwrap();
    /// assert!(stamped.reads_processing_time());
    /// ```
    pub fn reads_processing_time(&self) -> bool {
        let mut reads = false;
        self.visit(&mut |e| {
            reads |= match &e.node {
                Node::ProcTime { .. } | Node::LookupJoin(_) | Node::CountWindowAgg(_) => true,
                Node::Join(join) => join.state_ttl.is_some(),
                _ => false,
            }
        });
        reads
    }
}

/// `row` with its column `column` set to the processing time `at`.
pub(crate) fn stamp(row: &Row, column: usize, at: Ts) -> Row {
    let at = Datum::Timestamp(at);
    Row::pack(
        row.iter()
            .enumerate()
            .map(|(i, d)| if i == column { at } else { d }),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::ProcessingClock;
    use crate::expr::{bind_aggregate, count_star, FunctionRegistry};
    use crate::plan::{RelExpr, WindowSpec};
    use crate::repr::{DataType, Schema, Ts};

    fn clicks(changelog: bool) -> RelExpr {
        let schema = Schema::builder()
            .column("user", DataType::STRING.nullable())
            .column("pt", DataType::TimestampLtz(3).not_null())
            .proctime("pt")
            .build()
            .unwrap();
        RelExpr::scan("Clicks", schema, changelog)
    }

    fn clock() -> ProcessingClock {
        ProcessingClock::new(Ts::from_millis(1_000), Duration::from_secs(2)).unwrap()
    }

    #[test]
    fn a_proctime_window_groups_the_stamps() {
        let input = clicks(false).stamp_proctime(1, clock()).unwrap();
        let count = bind_aggregate(&count_star(), &input.schema, &FunctionRegistry::new());
        let aggs = vec![(count.unwrap(), "n".to_string())];
        let plan = input
            .window_agg(1, WindowSpec::tumble(10_000), vec![0], aggs, 0)
            .unwrap();
        assert_eq!(
            plan.explain(),
            "WindowAggregate(window=[TUMBLE(size=10000ms) ON pt], group=[user], aggs=[COUNT(*) AS n], lateness=0ms) -> [user STRING, window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL, window_time TIMESTAMP(3) NOT NULL, n BIGINT NOT NULL] updating(key=[user, window_start, window_end]) proctime=window_time\n  ProcessingTime(column=[pt], start=1000ms, tick=2000ms) -> [user STRING, pt TIMESTAMP_LTZ(3) NOT NULL] append-only proctime=pt\n    Scan(table=[Clicks]) -> [user STRING, pt TIMESTAMP_LTZ(3) NOT NULL] append-only proctime=pt\n"
        );
        assert_eq!(clock().at(3), Ts::from_millis(7_000));
    }

    #[test]
    fn misuse_is_refused() {
        let err = clicks(true).stamp_proctime(1, clock()).unwrap_err();
        assert_eq!(err.to_string(), "ProcessingTime: ProcessingTime doesn't support consuming update and delete changes which is produced by node Scan");
        let err = clicks(false).stamp_proctime(0, clock()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ProcessingTime: column 'user' is not the proctime attribute"
        );
        let err = ProcessingClock::new(Ts::from_millis(0), Duration::ZERO).unwrap_err();
        assert_eq!(err, "the processing-time clock's tick must be a positive whole number of milliseconds, but is 0ns");
    }
}
