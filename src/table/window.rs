//! Group windows in the Table API (Flink's `Tumble`, `Slide` and `Session` group windows over
//! event time):
//! `window(Tumble::over(hours(1)).on(col("rowtime")).alias("w"))`, then `group_by([col("w"),
//! ..])` and `select` with `col("w").start()`, `col("w").end()`, `col("w").rowtime()`, lowered
//! onto the plan's [`WindowAgg`](crate::plan::WindowAgg) (its semantics and both modes are
//! documented there). The SQL forms lower through [`window_aggregate`] too. Without
//! `group_by`, `window(..).select(..)` reads the window's rows (SQL's window TVF read as a
//! table, the plan's [`WindowAssign`](crate::plan::WindowAssign)).

use std::time::Duration;

use crate::expr::{col, Expr};
use crate::plan::lower::{aggregate_with, project, time_column, transform, window_aggregate};
use crate::plan::{PlanError, WindowSpec};

use super::Table;

/// `n` hours, for window sizes.
pub fn hours(n: u64) -> Duration {
    Duration::from_secs(n * 3600)
}

/// `n` minutes, for window sizes.
pub fn minutes(n: u64) -> Duration {
    Duration::from_secs(n * 60)
}

/// `n` seconds, for window sizes.
pub fn seconds(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// `n` milliseconds, for window sizes.
pub fn millis(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `d` in whole milliseconds.
pub(crate) fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// `n` rows, for the size and slide of a row-count window (Flink's `rowInterval(n)`).
///
/// ```
/// use differential_temporal::table::{rows, seconds, WindowSize};
/// assert_eq!(rows(3), WindowSize::Rows(3));
/// assert_eq!(WindowSize::from(seconds(2)), WindowSize::Time(seconds(2)));
/// ```
pub fn rows(n: u64) -> WindowSize {
    WindowSize::Rows(n)
}

/// The size or slide of a group window: a time interval (a [`Duration`], whole milliseconds)
/// or a number of rows ([`rows`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSize {
    /// A time interval, for windows over a rowtime attribute.
    Time(Duration),
    /// A row count, for windows over a processing-time attribute (see
    /// [`CountWindowAgg`](crate::plan::CountWindowAgg)).
    Rows(u64),
}

impl From<Duration> for WindowSize {
    fn from(d: Duration) -> WindowSize {
        WindowSize::Time(d)
    }
}

/// A row count as the plan takes it.
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Tumbling windows (Flink's `Tumble`): `Tumble::over(size).on(time).alias(name)`.
pub struct Tumble;

impl Tumble {
    /// Windows of `size`: a duration (whole milliseconds, aligned to the epoch) over a rowtime
    /// attribute, or [`rows`]`(n)`, every `n` rows of a group key in arrival order over a
    /// processing-time attribute (see [`CountWindowAgg`](crate::plan::CountWindowAgg)).
    pub fn over(size: impl Into<WindowSize>) -> GroupWindow {
        GroupWindow::new(match size.into() {
            WindowSize::Time(size) => Shape::Time(WindowSpec::tumble(ms(size))),
            WindowSize::Rows(n) => Shape::Rows {
                size: count(n),
                slide: count(n),
            },
        })
    }
}

/// Sliding windows (Flink's `Slide`, SQL's `HOP`): `Slide::over(size).every(slide).on(time)
/// .alias(name)`; with [`rows`], row-count sliding windows.
pub struct Slide;

impl Slide {
    /// Windows of `size`; their distance comes with [`SlideWithSize::every`].
    pub fn over(size: impl Into<WindowSize>) -> SlideWithSize {
        SlideWithSize { size: size.into() }
    }
}

/// A sliding window with its size, waiting for its slide.
pub struct SlideWithSize {
    size: WindowSize,
}

impl SlideWithSize {
    /// A window starting every `slide`, of the same kind as the size (both durations or both
    /// row counts; else the plan is refused, as Flink refuses it).
    pub fn every(self, slide: impl Into<WindowSize>) -> GroupWindow {
        GroupWindow::new(match (self.size, slide.into()) {
            (WindowSize::Time(size), WindowSize::Time(slide)) => {
                Shape::Time(WindowSpec::hop(ms(size), ms(slide)))
            }
            (WindowSize::Rows(size), WindowSize::Rows(slide)) => Shape::Rows {
                size: count(size),
                slide: count(slide),
            },
            _ => Shape::Mixed,
        })
    }
}

/// Session windows (Flink's `Session`): `Session::with_gap(gap).on(time).alias(name)`, per
/// group key the runs of rows at most `gap` apart (see
/// [`WindowSpec::Session`]), in both modes (final mode's rules: [`crate::plan::window`]).
pub struct Session;

impl Session {
    /// Sessions closed by `gap` (whole milliseconds) without rows.
    pub fn with_gap(gap: Duration) -> GroupWindow {
        GroupWindow::new(Shape::Time(WindowSpec::session(ms(gap))))
    }
}

/// A group window: its shape, the time attribute it is over and its alias.
#[derive(Clone, Debug)]
pub struct GroupWindow {
    shape: Shape,
    time: Option<Expr>,
    alias: Option<String>,
}

/// The windows of a [`GroupWindow`].
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Time windows over a rowtime attribute.
    Time(WindowSpec),
    /// Row-count windows of `size` rows every `slide` rows.
    Rows { size: i64, slide: i64 },
    /// A sliding window whose size and slide are not of the same kind.
    Mixed,
}

impl GroupWindow {
    fn new(shape: Shape) -> GroupWindow {
        GroupWindow {
            shape,
            time: None,
            alias: None,
        }
    }

    /// Over the rowtime attribute `time` (a column).
    pub fn on(mut self, time: Expr) -> GroupWindow {
        self.time = Some(time);
        self
    }

    /// Named `alias`, the name `group_by` and `select` refer to it by.
    pub fn alias(mut self, alias: impl Into<String>) -> GroupWindow {
        self.alias = Some(alias.into());
        self
    }
}

/// The window properties of a window alias in `select`: `col("w").start()` and so on.
impl Expr {
    /// The start of window `self` (an alias), inclusive: `window_start`, TIMESTAMP(3).
    pub fn start(self) -> Expr {
        property("window_start", self)
    }

    /// The end of window `self` (an alias), exclusive: `window_end`, TIMESTAMP(3).
    pub fn end(self) -> Expr {
        property("window_end", self)
    }

    /// The last event time of window `self` (`end - 1 ms`), a rowtime attribute: `window_time`.
    /// On a processing-time window it is refused with Flink's message (use
    /// [`proctime`](Expr::proctime)).
    pub fn rowtime(self) -> Expr {
        property("window_rowtime", self)
    }

    /// The processing-time attribute of processing-time window `self` (an alias): its
    /// `window_time`, the processing time `end - 1 ms` at which the window closes (Flink's
    /// processing-time window fires on its timer at `end - 1`), TIMESTAMP(3), the result's
    /// proctime attribute, so a later processing-time window or OVER can be over it where the
    /// result is append-only (the window TVF's rows, [`GroupWindowedTable::select`]; a window
    /// aggregation's result is updating, and refused there as for `rowtime()`).
    ///
    /// Why `end - 1` and not the processing time of the system time the row is emitted at: that
    /// would differ between the modes (incremental mode emits a window's row at each change)
    /// and with the batching, while `end - 1` depends on the window only; in final mode the
    /// windows fire in order of their end, so these times grow with system time and nothing
    /// over them is late. On an event-time window it is refused naming the alias: Flink gives
    /// the wall clock there, which has no deterministic value here.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::table::{hours, Tumble};
    /// let (env, _dir) = doc_env();
    /// let on_event_time = env
    ///     .from("Rates")
    ///     .window(Tumble::over(hours(1)).on(col("update_time")).alias("w"))
    ///     .group_by([col("w"), col("currency")])
    ///     .select([col("currency"), col("w").proctime()]);
    /// assert!(on_event_time.execute().unwrap_err().to_string()
    ///     .contains("w.proctime() is only defined on a processing-time window"));
    /// ```
    pub fn proctime(self) -> Expr {
        property("window_proctime", self)
    }
}

/// The call `col("w").start()` stands for, until the window's `select` resolves it.
fn property(name: &str, alias: Expr) -> Expr {
    Expr::Call {
        func: format!("${name}"),
        args: vec![alias],
    }
}

/// A window a table can be given with [`Table::window`]: a [`GroupWindow`] or an
/// [`OverWindow`](super::OverWindow).
pub trait WindowKind {
    /// The windowed table.
    type Windowed;

    /// `table` with this window.
    fn windowed(self, table: Table) -> Self::Windowed;
}

impl WindowKind for GroupWindow {
    type Windowed = GroupWindowedTable;

    fn windowed(self, table: Table) -> GroupWindowedTable {
        GroupWindowedTable {
            table,
            window: self,
        }
    }
}

impl Table {
    /// Groups rows into the event-time windows `window` (Flink's `window(GroupWindow)`); the
    /// keys and aggregates come with [`group_by`](GroupWindowedTable::group_by) and
    /// [`select`](WindowGroupedTable::select). One row per key and window, emitted as
    /// [`WindowAgg`](crate::plan::WindowAgg) documents for the environment's mode (in final
    /// mode with the environment's allowed lateness). With an
    /// [`OverWindow`](super::OverWindow) (Flink's `window(OverWindow)`), aggregates over each
    /// row's frame come with [`select`](super::OverWindowedTable::select).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::table::{hours, Tumble};
    /// let (env, _dir) = doc_env();
    /// let hourly = env
    ///     .from("Rates")
    ///     .window(Tumble::over(hours(1)).on(col("update_time")).alias("w"))
    ///     .group_by([col("w"), col("currency")])
    ///     .select([col("currency"), col("w").end().alias("hour"), col("rate").max().alias("top")]);
    /// assert_eq!(
    ///     hourly.execute().unwrap().rows_as_text(),
    ///     vec!["Euro,2024-01-01 10:00:00.000,114", "Euro,2024-01-01 11:00:00.000,116"]
    /// );
    /// ```
    pub fn window<W: WindowKind>(&self, window: W) -> W::Windowed {
        window.windowed(self.clone())
    }
}

/// A table with a group window, waiting for its keys (Flink's `GroupWindowedTable`).
#[derive(Clone)]
pub struct GroupWindowedTable {
    table: Table,
    window: GroupWindow,
}

impl GroupWindowedTable {
    /// Groups by `keys`, which must name the window's alias once (Flink's rule), and columns or
    /// expressions as [`Table::group_by`] takes them.
    pub fn group_by(&self, keys: impl IntoIterator<Item = Expr>) -> WindowGroupedTable {
        WindowGroupedTable {
            windowed: self.clone(),
            keys: keys.into_iter().collect(),
        }
    }

    /// The window's rows without grouping them (SQL's window table-valued function read as a
    /// table, `SELECT .. FROM TABLE(TUMBLE(..))`; Flink's Table API has no such form): each
    /// row once per window holding its time, `items` over its columns and the window's
    /// `start()`, `end()` and `rowtime()`. Lowered onto the plan's
    /// [`WindowAssign`](crate::plan::WindowAssign), whose rules and modes hold (SESSION
    /// windows are refused). Errors (when the plan is built): the window has no `on` or no
    /// `alias`, an item uses the alias other than through its properties, and those of
    /// [`RelExpr::window_assign`](crate::plan::RelExpr::window_assign).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::table::{hours, Tumble};
    /// let (env, _dir) = doc_env();
    /// let rows = env
    ///     .from("Rates")
    ///     .window(Tumble::over(hours(1)).on(col("update_time")).alias("w"))
    ///     .select([col("currency"), col("rate"), col("w").end().alias("hour")]);
    /// assert_eq!(
    ///     rows.execute().unwrap().rows_as_text(),
    ///     vec!["Euro,114,2024-01-01 10:00:00.000", "Euro,116,2024-01-01 11:00:00.000"]
    /// );
    /// ```
    pub fn select(&self, items: impl IntoIterator<Item = Expr>) -> Table {
        const NODE: &str = "WindowTableFunction";
        let items: Vec<Expr> = items.into_iter().collect();
        let (table, window) = (&self.table, self.window.clone());
        let registry = table.env.functions();
        table.then("window(..).select", move |plan| {
            let (time, alias) = window.parts(NODE)?;
            let spec = match window.shape {
                Shape::Time(spec) => spec,
                Shape::Rows { .. } => return Err(PlanError::invalid(
                    NODE,
                    "a row-count window's rows cannot be read without group_by (it is a group window only)",
                )),
                Shape::Mixed => return Err(mixed(NODE)),
            };
            let time = time_column(&plan, time)?;
            let on_proctime = plan.schema.proctime == Some(time);
            let items = properties(&items, alias, on_proctime, NODE)?;
            let rows = plan.window_assign(time, spec)?;
            project(rows, &items, &registry)
        })
    }
}

impl GroupWindow {
    /// The time attribute and the alias, both required; `node` names the plan node in the
    /// error.
    fn parts(&self, node: &'static str) -> Result<(&Expr, &str), PlanError> {
        match (&self.time, &self.alias) {
            (Some(time), Some(alias)) => Ok((time, alias)),
            _ => Err(PlanError::invalid(
                node,
                "a group window needs its time attribute and alias: .on(col(\"rowtime\")).alias(\"w\")",
            )),
        }
    }
}

/// `node`'s error for a sliding window whose size and slide are of different kinds (Flink's
/// message).
fn mixed(node: &'static str) -> PlanError {
    PlanError::invalid(node, "Sliding window expects same type of size and slide.")
}

/// `items` with the window alias's `start()`, `end()` and `rowtime()` (or `proctime()` when
/// the window is `on_proctime`) replaced by the columns `window_start`, `window_end` and
/// `window_time`. Errors: a property of something else than the alias, the alias used bare,
/// `rowtime()` of a processing-time window (Flink's message), `proctime()` of an event-time
/// window; `node` names the plan node.
fn properties(
    items: &[Expr],
    alias: &str,
    on_proctime: bool,
    node: &'static str,
) -> Result<Vec<Expr>, PlanError> {
    let is_alias = |e: &Expr| matches!(e.unaliased(), Expr::Column(c) if c == alias);
    let mut misused = None;
    let column = |property: &str| {
        match (property, on_proctime) {
        ("$window_start", _) => Ok(col("window_start")),
        ("$window_end", _) => Ok(col("window_end")),
        ("$window_rowtime", false) | ("$window_proctime", true) => Ok(col("window_time")),
        ("$window_rowtime", true) => Err(format!("A proctime window cannot provide a rowtime attribute: '{alias}' is over a processing-time attribute (use {alias}.proctime())")),
        _ => Err(format!("{alias}.proctime() is only defined on a processing-time window, but '{alias}' is over a rowtime attribute (use {alias}.rowtime(); Flink's wall-clock value has no deterministic counterpart here)")),
    }
    };
    let items = (items.iter())
        .map(|item| {
            transform(item, &mut |e| match e {
                Expr::Call { func, args } if func.starts_with("$window_") => match args.as_slice() {
                    // The first misuse is reported (the bare alias inside comes next).
                    [a] if is_alias(a) => column(func).map_err(|e| misused = Some(e)).ok(),
                    _ => {
                        misused = Some(format!("'{}' is not a window alias", args[0]));
                        None
                    }
                },
                e if is_alias(e) => {
                    misused.get_or_insert(format!("the window alias '{alias}' can only be used through {alias}.start(), {alias}.end(), {alias}.rowtime() and {alias}.proctime()"));
                    None
                }
                _ => None,
            })
        })
        .collect();
    match misused {
        Some(reason) => Err(PlanError::invalid(node, reason)),
        None => Ok(items),
    }
}

/// Whether `item` reads a window property (`w.start()`, `w.end()`, `w.rowtime()`,
/// `w.proctime()`).
fn has_property(item: &Expr) -> bool {
    let mut found = false;
    transform(item, &mut |e| {
        found |= matches!(e, Expr::Call { func, .. } if func.starts_with("$window_"));
        None
    });
    found
}

/// A table with a group window, grouped by keys, waiting for its `select` (Flink's
/// `WindowGroupedTable`).
#[derive(Clone)]
pub struct WindowGroupedTable {
    windowed: GroupWindowedTable,
    keys: Vec<Expr>,
}

impl WindowGroupedTable {
    /// `SELECT items`: keys, aggregates, the window's `start()`, `end()` and `rowtime()` (or
    /// `proctime()` over processing time), or
    /// expressions over them. Errors (when the plan is built): the window has no `on` or no
    /// `alias`, the keys do not name the alias exactly once, an item uses the alias other than
    /// through its properties, and those of [`RelExpr::window_agg`](crate::plan::RelExpr::window_agg).
    pub fn select(&self, items: impl IntoIterator<Item = Expr>) -> Table {
        const NODE: &str = "WindowAggregate";
        let items: Vec<Expr> = items.into_iter().collect();
        let GroupWindowedTable { table, window } = &self.windowed;
        let (window, keys) = (window.clone(), self.keys.clone());
        let registry = table.env.functions();
        let lateness = table.env.options().allow_lateness_ms;
        table.then("window(..).group_by(..).select", move |plan| {
            let (time, alias) = window.parts(NODE)?;
            let is_alias = |e: &Expr| matches!(e.unaliased(), Expr::Column(c) if c == alias);
            if keys.iter().filter(|k| is_alias(k)).count() != 1 {
                return Err(invalid(format!(
                    "group_by must contain the window alias '{alias}' exactly once"
                )));
            }
            let keys: Vec<Expr> = keys.into_iter().filter(|k| !is_alias(k)).collect();
            let shape = window.shape;
            let uses_properties = items.iter().any(has_property);
            let time_index = time_column(&plan, time)?;
            let on_proctime = plan.schema.proctime == Some(time_index);
            let items = properties(&items, alias, on_proctime, NODE)?;
            match shape {
                Shape::Rows { size, slide } if uses_properties => Err(invalid(format!(
                    "a row-count window has no start, end or rowtime, so '{alias}' can only be grouped by (size {size} rows, slide {slide} rows)"
                ))),
                Shape::Rows { size, slide } => {
                    aggregate_with(plan, &keys, &items, &registry, move |plan, group, aggs| {
                        plan.count_window_agg(time_index, size, slide, group, aggs)
                    })
                }
                Shape::Time(spec) => {
                    window_aggregate(plan, time, spec, &keys, &items, lateness, &registry)
                }
                Shape::Mixed => Err(mixed(NODE)),
            }
        })
    }
}

fn invalid(reason: impl Into<String>) -> PlanError {
    PlanError::invalid("WindowAggregate", reason)
}
