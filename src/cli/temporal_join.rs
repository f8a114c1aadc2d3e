//! `dtemporal temporal-join` (Flink `FOR SYSTEM_TIME AS OF probe.time`, semantics section B) and
//! `dtemporal lookup-join` (`FOR SYSTEM_TIME AS OF proctime`, rules B17, B18).
//!
//! Output: all probe columns, then all build columns; a build column whose name is taken gets
//! the suffix `0` (then `1`, ...: Flink's rule, e.g. `currency0`); a LEFT join pads with empty
//! cells. Every line leads with the probe row's `op` (rule B8). In `--mode incremental` the
//! lines are the joined changes themselves (no `to_changelog` pass), consolidated over system
//! time by the driver and ordered by the probe row's position: what is written is the join of
//! all input, so it holds the lines of `--mode final` whenever no probe row is late. In
//! `--mode final` each line is emitted once, when the watermark passes it, and the lines are
//! written in emission order ([`LineOrder::Emission`](crate::run::LineOrder::Emission)).
//!
//! Both run the relational plan `Project(TemporalJoin | LookupJoin)` over the two files'
//! stamped scans (see [`stamped`]), rendered as `dtemporal sql` renders its joins: `--on`'s
//! constants are constant key columns of the probe side, `--where` is the join's residual, and
//! `--state-ttl` its retention.

use clap::Args;

use super::join_condition::{Condition, JoinKeys};
use super::{stamped, Cli, CommonArgs, ModeArg, WatermarkArgs};
use crate::csv::{InputSpec, OutputLine, Record, Schema, OP_COLUMN};
use crate::error::Error;
use crate::expr::ScalarExpr;
use crate::operators::{ChangelogMode, RowKind};
use crate::plan::{JoinKind, RelExpr};
use crate::render::ExecutionMode;
use crate::repr::{DataType, Datum};
use crate::run::{self as driver, Built, Outcome};

/// The names of the plan's scans of the two files.
const PROBE: &str = "probe";
const BUILD: &str = "build";

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
    /// Equi-join keys, comma-separated: `PROBE_COL=BUILD_COL` pairs (at least one for
    /// temporal-join) and constant keys `BUILD_COL='TEXT'` (the build column must equal TEXT;
    /// Flink's constant lookup key). The build columns, in order, are the build side's primary
    /// key.
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

/// The resolved inputs of a join: schemas, output header, the join keys and the `--where`
/// condition.
struct Resolved {
    probe: Schema,
    build: Schema,
    header: Vec<String>,
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
        // A lookup join (no probe time) takes constant keys alone.
        let keys = JoinKeys::parse(&self.on, probe_time.is_none())?;
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
        Ok(Resolved {
            probe,
            build,
            header,
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

impl Resolved {
    /// The join plan over the stamped rows of both files (see [`stamped`]): the probe scan
    /// (a changelog if the file has an `op` column) joined with the build scan (a versioned
    /// table keyed by the build columns of `--on`, a changelog unless `append_only`), their
    /// rowtimes the stamped times with the watermark `delay_ms` behind; the constants of `--on`
    /// appended to each probe row as key columns, the `--where` condition the residual, the
    /// `--state-ttl` (milliseconds of event time for the temporal join, epochs for the lookup
    /// join) its retention, and the output the probe's cells, then the build's.
    fn plan(
        &self,
        temporal: bool,
        kind: JoinKind,
        append_only: bool,
        (delay_ms, state_ttl): (i64, Option<u64>),
    ) -> Result<RelExpr, Error> {
        let probe_changelog = self.probe.op.is_some();
        let build_changelog = self.build.op.is_some() && !append_only;
        let mut probe = stamped::scan(PROBE, &self.probe, probe_changelog, delay_ms, None)?;
        let build_key = stamped::columns(&self.build.key);
        let build = stamped::scan(
            BUILD,
            &self.build,
            build_changelog,
            delay_ms,
            Some(&self.build.key),
        )?;
        // The probe key in the build key's order, a constant an appended column.
        let (probe_width, build_width) = (probe.schema.len(), build.schema.len());
        let mut probe_columns = stamped::columns(&self.probe.key).into_iter();
        let mut probe_key = Vec::new();
        let mut constants = Vec::new();
        for at in 0..build_key.len() {
            match self.keys.constants.iter().find(|(c, _)| *c == at) {
                Some((_, text)) => {
                    probe_key.push(probe_width + constants.len());
                    let value = ScalarExpr::literal(Datum::Str(text), DataType::STRING.not_null());
                    constants.push((value, unused_name(&probe.schema, at)));
                }
                None => probe_key.push(probe_columns.next().expect("a probe column per pair")),
            }
        }
        if !constants.is_empty() {
            probe = probe.map(constants)?;
        }
        let build_at = probe.schema.len();
        let residual = (self.condition.as_ref())
            .map(|c| c.expr(stamped::column, |i| build_at + stamped::column(i)));
        let join = match temporal {
            true => probe
                .temporal_join(build, probe_key, build_key, kind, residual)?
                .with_event_time_ttl(state_ttl.unwrap_or(0) as i64)?,
            false => probe
                .lookup_join(build, probe_key, build_key, kind, residual)?
                .with_state_ttl(state_ttl.unwrap_or(0))?,
        };
        let cells = stamped::column(0);
        let output = (cells..probe_width).chain(build_at + cells..build_at + build_width);
        Ok(join.project(output.collect(), None)?)
    }
}

/// A name for the constant key column `at` that no column of `schema` has.
fn unused_name(schema: &crate::repr::Schema, at: usize) -> String {
    let mut name = format!("$key{at}");
    while schema.fields.iter().any(|f| f.name == name) {
        name.insert(0, '$');
    }
    name
}

/// Runs the join `plan` of `r`'s files in `mode`, writing each joined change as a line: `op`,
/// the probe cells, the build cells (empty when padded), at its probe row's place.
fn run_plan(
    cli: &Cli,
    common: &CommonArgs,
    mut r: Resolved,
    plan: RelExpr,
    mode: ExecutionMode,
    append_only: bool,
) -> Result<Outcome, Error> {
    // The plan keys the rows: the reader need not pack their keys too.
    r.probe.key.clear();
    r.build.key.clear();
    let schemas = [r.probe.clone(), r.build.clone()];
    driver::run(
        &common.run_options(cli)?,
        [r.probe.with_stamps(), r.build.with_stamps()],
        r.header,
        move |[probe, build]| {
            let build = match append_only {
                true => build.map(|r| Record {
                    kind: RowKind::Insert,
                    ..r
                }),
                false => build,
            };
            let inputs = [probe, build];
            let (joined, rejected) =
                stamped::render(inputs, [PROBE, BUILD], schemas.clone(), &plan, mode)?;
            let form = ChangelogMode::Retract;
            let output = (joined.into_changelog()).flat_map(move |c| OutputLine::change(c, form));
            Ok(Built {
                output,
                rejected: vec![rejected],
                ignored: Vec::new(),
                order: stamped::line_order(mode),
            })
        },
    )
}

/// Runs `dtemporal temporal-join`.
pub(super) fn run(cli: &Cli, args: &TemporalJoinArgs) -> Result<Outcome, Error> {
    let inputs = &args.inputs;
    let r = inputs.resolve(Some(&args.probe_time), Some(&args.build_time))?;
    let watermarks = &args.watermarks;
    let retention = watermarks.retention()?;
    // No `--lateness`: a delay no difference of event times reaches (no watermark before the
    // end of input).
    let delay = watermarks.lateness.unwrap_or(i64::MAX);
    let append_only = inputs.build_append_only;
    let ttl = retention.map(|ms| ms as u64);
    let plan = r.plan(true, inputs.kind(), append_only, (delay, ttl))?;
    let mode = match watermarks.mode {
        ModeArg::Incremental => ExecutionMode::Incremental,
        ModeArg::Final => ExecutionMode::Final,
    };
    run_plan(cli, &args.common, r, plan, mode, append_only)
}

/// Runs `dtemporal lookup-join`.
pub(super) fn run_lookup(cli: &Cli, args: &LookupJoinArgs) -> Result<Outcome, Error> {
    let inputs = &args.inputs;
    let r = inputs.resolve(None, args.build_time.as_deref())?;
    let append_only = inputs.build_append_only;
    let plan = r.plan(false, inputs.kind(), append_only, (0, args.state_ttl))?;
    let mode = ExecutionMode::Incremental;
    run_plan(cli, &args.common, r, plan, mode, append_only)
}
