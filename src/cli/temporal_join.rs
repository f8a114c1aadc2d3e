//! `dtemporal temporal-join` (Flink `FOR SYSTEM_TIME AS OF probe.time`, semantics section B) and
//! `dtemporal lookup-join` (`FOR SYSTEM_TIME AS OF proctime`, rules B17, B18).
//!
//! Output: all probe columns, then all build columns; a build column whose name is taken gets
//! the suffix `0` (then `1`, ...: Flink's rule, e.g. `currency0`); a LEFT join pads with empty
//! cells. Every line leads with the probe row's `op` (rule B8) and lines are ordered by the
//! probe row's position. In `--mode incremental` the lines are the joined changes themselves
//! (no `to_changelog` pass), consolidated over system time by the driver: what is written is the
//! join of all input, so it equals `--mode final` whenever no probe row is late.

use clap::Args;
use differential_dataflow::VecCollection;

use super::join_condition::{Condition, JoinKeys};
use super::{lateness_watermarks, Cli, CommonArgs, ModeArg, WatermarkArgs};
use crate::csv::{InputSpec, OutputLine, Record, Schema, OP_COLUMN};
use crate::error::Error;
use crate::operators::retention::Retention;
use crate::operators::temporal_join::{
    arrange_probe, arrange_versions_pruned, late_versions, lookup_join, temporal_join,
    temporal_join_final, JoinConfig, JoinKind, Joined,
};
use crate::operators::versioned::versions_from_changelog;
use crate::operators::{arrange_versions, Change, ChangelogMode, RowKind, SysTime, Version};
use crate::row::{Row, TextCells, TimedRow};
use crate::run::{self as driver, Built, Outcome};

/// The example shown by `dtemporal temporal-join --help`.
pub(super) const EXAMPLE: &str = "\
Example (each order with the rate of its currency as of the order's time):
  dtemporal -w 2 temporal-join --probe orders.csv --build rates.csv --on currency=currency \\
    --probe-time order_time --build-time update_time --left

With a residual condition (rule B5: checked against the chosen version only; a LEFT join pads
the rows it fails):
  dtemporal temporal-join --probe orders.csv --build rates.csv --on currency=currency \\
    --probe-time order_time --build-time update_time --where \"rate >= 100 AND amount < 10\"

With idle-state retention (a currency without a rate or order for 1 hour of event time is
forgotten; final mode only):
  dtemporal temporal-join --probe orders.csv --build rates.csv --on currency=currency \\
    --probe-time order_time --build-time update_time --mode final --lateness 5000 --state-ttl 3600000

Exit codes: 0 ok, 1 more rows rejected than --max-errors, 2 usage or I/O error.";

/// The example shown by `dtemporal lookup-join --help`.
pub(super) const LOOKUP_EXAMPLE: &str = "\
Example (each order with the rate current when it arrives, i.e. at its block of the file):
  dtemporal lookup-join --probe orders.csv --build rates.csv --on currency=currency --left

With idle-state retention in epochs, this tool's processing-time clock (a currency that no
order and no rate touched for 100 epochs, i.e. 100 blocks of --epoch-bytes of each file, is
forgotten):
  dtemporal lookup-join --probe orders.csv --build rates.csv --on currency=currency --left \\
    --state-ttl 100

With a constant key (the build side's primary key is (currency, kind)) and a residual condition
(checked against the current version only; a LEFT join pads the rows it fails):
  dtemporal lookup-join --probe orders.csv --build rates.csv --on \"currency=currency,kind='spot'\" \\
    --where \"rate >= 100 AND amount < 10\"

Exit codes: 0 ok, 1 more rows rejected than --max-errors, 2 usage or I/O error.";

/// The probe and build inputs and the join condition, shared by both joins.
#[derive(Args, Debug, Clone)]
pub struct JoinInputs {
    /// Probe-side CSV file (append-only or a changelog).
    #[arg(long, value_name = "FILE")]
    pub probe: String,
    /// Build-side CSV file: a changelog of the versioned table, or append-only (every row a
    /// version).
    #[arg(long, value_name = "FILE")]
    pub build: String,
    /// Equi-join keys, comma-separated: `PROBE_COL=BUILD_COL` pairs (at least one) and
    /// constant keys `BUILD_COL='TEXT'` (the build column must equal TEXT; Flink's constant
    /// lookup key). The build columns, in order, are the build side's primary key.
    #[arg(long, value_name = "P=B,...")]
    pub on: String,
    /// Residual condition on the probe row and the version chosen for it (rule B5; lookup-join:
    /// the current version): `COL OP COL|LITERAL [AND ...]`, OP one of `= != <> < <= > >=`,
    /// columns named as in the output header (`"quoted"` if need be), literals `12.5` or
    /// `'text'`; numbers compare as numbers, else as text; an empty (NULL) cell compares false.
    /// A row that fails it is dropped, or padded by --left (SQL's `ON ... AND EXPR`).
    #[arg(long = "where", value_name = "EXPR")]
    pub condition: Option<String>,
    /// LEFT OUTER join: probe rows without a match are written with empty build cells.
    #[arg(long)]
    pub left: bool,
    /// Read every build row as a new version, even with an `op` column (temporal table
    /// function).
    #[arg(long)]
    pub build_append_only: bool,
}

/// Arguments of `dtemporal temporal-join`.
#[derive(Args, Debug, Clone)]
pub struct TemporalJoinArgs {
    /// Inputs and join condition.
    #[command(flatten)]
    pub inputs: JoinInputs,
    /// Event-time column of the probe side.
    #[arg(long, value_name = "COL")]
    pub probe_time: String,
    /// Event-time column of the build side (a version is valid from it).
    #[arg(long, value_name = "COL")]
    pub build_time: String,
    /// Watermark options: final mode, lateness, state TTL.
    #[command(flatten)]
    pub watermarks: WatermarkArgs,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Arguments of `dtemporal lookup-join`.
#[derive(Args, Debug, Clone)]
pub struct LookupJoinArgs {
    /// Inputs and join condition.
    #[command(flatten)]
    pub inputs: JoinInputs,
    /// Event-time column of the build side: orders versions that arrive together [default:
    /// arrival order].
    #[arg(long, value_name = "COL")]
    pub build_time: Option<String>,
    /// Idle-state retention (Flink's `table.exec.state.ttl`), in epochs: the processing-time
    /// clock of this tool, where block `i` of each input (--epoch-bytes) arrives at epoch `i`.
    /// A key that no probe row and no build version touched for EPOCHS epochs is forgotten: a
    /// probe row of epoch `s` whose key was last touched at epoch `s - EPOCHS` or earlier finds
    /// only the build versions that arrived since (--left pads it). Flink counts wall-clock milliseconds;
    /// epochs make the result depend on --epoch-bytes and input order as processing time
    /// does, never on the worker count or the machine's speed. [default: 0, state is kept
    /// forever]
    #[arg(long, value_name = "EPOCHS")]
    pub state_ttl: Option<u64>,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The resolved inputs of a join: schemas, output header, the build side's width, the join
/// keys and the `--where` condition.
struct Resolved {
    probe: Schema,
    build: Schema,
    header: Vec<String>,
    build_width: usize,
    keys: JoinKeys,
    condition: Option<Condition>,
}

impl JoinInputs {
    /// Opens both files, resolving `--on`, `--where` and the time columns (a missing column is
    /// an error listing the file's columns).
    fn resolve(
        &self,
        probe_time: Option<&str>,
        build_time: Option<&str>,
    ) -> Result<Resolved, Error> {
        let keys = JoinKeys::parse(&self.on)?;
        let (probe_key, build_key) = (keys.probe.clone(), keys.build.clone());
        let spec = |path: &str, key, time: Option<&str>| InputSpec {
            path: path.to_string(),
            key,
            // A NULL join key matches nothing (see `JoinKey`), it is no error.
            nullable_key: true,
            time: time.map(str::to_string),
        };
        let probe = Schema::open(&spec(&self.probe, probe_key, probe_time), 0)?;
        let build = Schema::open(&spec(&self.build, build_key, build_time), 1)?;
        let mut header = vec![OP_COLUMN.to_string()];
        header.extend(probe.columns.iter().cloned());
        for name in &build.columns {
            let mut unique = name.clone();
            let mut n = 0;
            while header.contains(&unique) {
                unique = format!("{name}{n}");
                n += 1;
            }
            header.push(unique);
        }
        let condition = match &self.condition {
            Some(expr) => Some(Condition::parse(expr, &header, probe.columns.len())?),
            None => None,
        };
        let build_width = build.columns.len();
        Ok(Resolved {
            probe,
            build,
            header,
            build_width,
            keys,
            condition,
        })
    }

    fn kind(&self) -> JoinKind {
        if self.left {
            JoinKind::Left
        } else {
            JoinKind::Inner
        }
    }
}

type Keyed<V> = (Row, V);

/// The probe rows as keyed changes, the constant keys of `--on` inserted into each key.
fn probe_changes<'s>(
    input: VecCollection<'s, SysTime, Record>,
    keys: &JoinKeys,
) -> VecCollection<'s, SysTime, Keyed<Change<TimedRow>>> {
    let keys = keys.clone();
    input.map(move |r| {
        let (key, change) = r.into_change();
        (keys.probe_key(key), change)
    })
}

/// The residual predicate of the joins: the `--where` condition, or always `true`.
fn residual(condition: &Option<Condition>) -> impl Fn(&TimedRow, &TimedRow) -> bool + 'static {
    let condition = condition.clone();
    move |p: &TimedRow, b: &TimedRow| condition.as_ref().is_none_or(|c| c.holds(&p.row, &b.row))
}

/// The build side's versions, keyed and ordered by the build event time (every row a version
/// with `--build-append-only`).
fn build_versions<'s>(
    input: VecCollection<'s, SysTime, Record>,
    append_only: bool,
) -> VecCollection<'s, SysTime, Keyed<Version<i64, TimedRow>>> {
    let changes = input.map(move |r| {
        let (key, mut change) = r.into_change();
        if append_only {
            change.kind = RowKind::Insert;
        }
        (key, change)
    });
    versions_from_changelog(changes, |r: &TimedRow| r.time)
}

/// The output lines of joined changes: `op`, probe cells, build cells (or empty cells).
fn joined_lines<'s>(
    joined: VecCollection<'s, SysTime, Keyed<Joined<TimedRow, TimedRow>>>,
    build_width: usize,
) -> VecCollection<'s, SysTime, OutputLine> {
    joined.flat_map(move |(_, c)| {
        let (probe, build) = &c.row;
        let mode = ChangelogMode::Retract;
        match build {
            Some(b) => OutputLine::change_of(c.seq, c.kind, mode, &[&probe.row, &b.row], 0),
            None => OutputLine::change_of(c.seq, c.kind, mode, &[&probe.row], build_width),
        }
    })
}

/// Runs `dtemporal temporal-join`.
pub(super) fn run(cli: &Cli, args: &TemporalJoinArgs) -> Result<Outcome, Error> {
    let inputs = &args.inputs;
    let r = inputs.resolve(Some(&args.probe_time), Some(&args.build_time))?;
    let (keys, condition) = (r.keys.clone(), r.condition.clone());
    let (mode, lateness) = (args.watermarks.mode, args.watermarks.lateness);
    let (kind, retention) = (inputs.kind(), args.watermarks.retention()?);
    let append_only = inputs.build_append_only;
    let (probe_schema, build_schema, width) = (r.probe.clone(), r.build.clone(), r.build_width);
    driver::run(
        &args.common.run_options(cli)?,
        [r.probe, r.build],
        r.header,
        move |[probe, build]| {
            let probe = probe_changes(probe, &keys);
            let versions = build_versions(build, append_only);
            let residual = residual(&condition);
            let (joined, rejected) = match mode {
                ModeArg::Incremental => {
                    let probe = arrange_probe(probe, |r: &TimedRow| r.time, "Probe");
                    let arranged = arrange_versions(versions, "Build");
                    let joined = temporal_join(
                        probe,
                        arranged,
                        JoinConfig::new(kind)
                            .residual(residual)
                            .named("TemporalJoin"),
                    );
                    (joined, Vec::new())
                }
                ModeArg::Final => {
                    let probe_time = |(_, c): &Keyed<Change<TimedRow>>| c.row.time;
                    let probe_marks =
                        lateness_watermarks(probe.clone(), probe_time, lateness, "ProbeWatermarks");
                    let build_time = |(_, v): &Keyed<Version<i64, TimedRow>>| v.time;
                    let build_marks = lateness_watermarks(
                        versions.clone(),
                        build_time,
                        lateness,
                        "BuildWatermarks",
                    );
                    // Kept for later probe rows but reported (rule B10).
                    let schema = build_schema.clone();
                    let late_builds = late_versions(
                        versions.clone(),
                        probe_marks.clone(),
                        build_marks.clone(),
                        0,
                        "LateBuildVersions",
                    )
                    .map(move |(key, r)| {
                        let key: Vec<&str> = key.cells().map(Option::unwrap_or_default).collect();
                        let reason = format!("key {}: {}", key.join(","), r.reason);
                        schema.error(r.seq, None, reason)
                    });
                    // Bounded by the watermarks (rule B11).
                    let arranged = arrange_versions_pruned(
                        versions,
                        probe_marks.clone(),
                        build_marks.clone(),
                        0,
                        "Build",
                    );
                    let time = |r: &TimedRow| r.time;
                    let config = JoinConfig::new(kind)
                        .residual(residual)
                        .retention(retention.map(Retention::millis))
                        .named("TemporalJoinFinal");
                    let marks = (probe_marks, build_marks);
                    let out = temporal_join_final(probe, time, arranged, marks, config);
                    let schema = probe_schema.clone();
                    let late = out
                        .late
                        .map(move |(_, r)| schema.error(r.seq, None, r.reason));
                    (out.joined, vec![late, late_builds])
                }
            };
            Ok(Built {
                output: joined_lines(joined, width),
                rejected,
                ignored: Vec::new(),
            })
        },
    )
}

/// Runs `dtemporal lookup-join`.
pub(super) fn run_lookup(cli: &Cli, args: &LookupJoinArgs) -> Result<Outcome, Error> {
    let inputs = &args.inputs;
    let r = inputs.resolve(None, args.build_time.as_deref())?;
    let (kind, append_only, width) = (inputs.kind(), inputs.build_append_only, r.build_width);
    let (keys, condition) = (r.keys.clone(), r.condition.clone());
    let state_ttl = args.state_ttl.filter(|epochs| *epochs > 0);
    driver::run(
        &args.common.run_options(cli)?,
        [r.probe, r.build],
        r.header,
        move |[probe, build]| {
            let probe = probe_changes(probe, &keys);
            let versions = build_versions(build, append_only);
            let arranged = arrange_versions(versions, "Build");
            let residual = residual(&condition);
            let config = JoinConfig::new(kind)
                .residual(residual)
                .retention(state_ttl.map(Retention::epochs))
                .named("LookupJoin");
            let joined = lookup_join(probe, arranged, config);
            Ok(Built {
                output: joined_lines(joined, width),
                rejected: Vec::new(),
                ignored: Vec::new(),
            })
        },
    )
}
