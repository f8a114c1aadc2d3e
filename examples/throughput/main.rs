//! Throughput report: the library's operators on timely workers against plain sequential
//! Rust baselines, on the same deterministic data, with the peak resident set of each run.
//!
//! ```text
//! cargo run --release --example throughput                      # 10M rows, 1 and 2 workers, every op
//! cargo run --release --example throughput -- --rows 1000000 -w 2 --op dedup_keep_last
//! ```
//!
//! Each (op, workers) runs in a child process of this binary, so `peak_rss_mb` (the child's
//! `VmHWM`, read after the dataflow and before the baseline) is per measurement. The child runs
//! the dataflow, then the baseline, checks that both produced the same output records (count
//! and order-independent checksum, [`report::Digest`], over every record the dataflow emitted
//! on any worker, retractions included, plus any refused row), and only then prints:
//!
//! ```text
//! op=<name> workers=<W> rows=<N> seconds=<s> rows_per_s=<r> baseline_rows_per_s=<b> ratio=<r/b> peak_rss_mb=<m>
//! # op=<name> workers=<W> cpu_seconds=<c> rows_per_cpu_s=<N/c> baseline_rows_per_cpu_s=<..> cpu_ratio=<..> live_state_mb=<l> rss_over_live=<m/l> output_records=<..> (live state: <formula>)
//! ```
//!
//! On a mismatch it prints an error and exits 1 (and so does the parent).
//!
//! The comment line gives what the report line cannot: on-CPU time ([`clock`]; the rates per
//! CPU-second hardly depend on how loaded the machine is, but with several workers they
//! include workers spinning while they wait for each other) and the raw bytes of the live
//! state ([`rss::live_state`]) beside the peak RSS.
//!
//! # Workloads (fixed seed, [`workload`])
//!
//! `N = --rows` input rows, row `i` a pure function of `i` (ChaCha8 draws; row `i` happens at
//! event time `BASE + i` ms minus a jitter in `0..5000` ms, so rows are out of order and tie),
//! `seq = i`, all `+I`. Keyed workloads spread over `N / 10` keys (uniform). Rows are entered in
//! epochs of `--epoch-rows` rows (default 100k, over all workers; row `i` fed by worker
//! `i % W`), generated with the clock stopped; the clock runs while rows are fed and the
//! dataflow is stepped until its probe passes the epoch (see [`dataflows`]).
//!
//! # Operations: what the dataflow and the baseline both output
//!
//! * `dedup_keep_last`: rows `(key, (event time, payload))`; the library's
//!   `deduplicate(Keep::Last, DedupOrder::EventTime)` (rule A7). Output: the retract changelog,
//!   `+I` for a key's first row, `-U old, +U new` (both with the new row's `seq`) when a row's
//!   time is `>=` the kept row's. Baseline: one `HashMap<key, (time, payload)>` fold.
//! * `versioned_merge`: writes `[key, payload, version]` as typed rows (the engine's `Row` of
//!   three BIGINTs, as `dtemporal merge --schema` reads them), version = the event time; the
//!   `versioned` merge engine (Fluss, rule C1: a version `>=` the stored one replaces it) with
//!   a BIGINT version column. Output: the same retract changelog. Baseline: a `HashMap` fold
//!   over the same rows (read the version, keep a copy of the winning row).
//! * `temporal_join_final` / `temporal_join_incremental`: build side `min(100k, N/10)` keys x
//!   10 versions (key `k`'s `j`-th version at a random time in the `j`-th tenth of the span),
//!   loaded at epoch 0 before the clock starts; `N` probe rows `(key, (time, payload))`. INNER
//!   event-time temporal join (rules B3-B5): each probe row joined with its key's version with
//!   the greatest time `<=` its time, dropped if none (about 5%). Final mode uses watermarks
//!   with 5 s lateness (no probe row is late) and reports late build versions (none is late),
//!   as the command line and the Table API do; incremental mode arranges every probe row.
//!   Output: one `+I (probe, rate)` per matched probe row. Baseline: the versions in one array
//!   sorted by (key, time), one binary search per probe row (the sort-merge's build side).
//! * `asof_snapshot`: `N` versions `(key, Version { time, seq, row | delete })`, one in ten a
//!   delete; `VersionedTable::as_of(t)` with `t` 90% into the span (rule A3). Output: the
//!   snapshot's changes, which sum to `(key, row)` for every key whose version valid at `t`
//!   (greatest `(time, seq)` with `time <= t`) is a row. Baseline: a `HashMap` of each key's
//!   greatest `(time, seq)` with `time <= t`, then the rows.
//! * `nexmark_q18`: `N` bids from the `nexmark` crate's default generator; keep-last per
//!   `(bidder, auction)` by `date_time` (Nexmark q18, `ROW_NUMBER() .. ORDER BY dateTime DESC =
//!   1`), the library's dedup as above. Baseline: the `HashMap` fold.
//! * `group_by`: the dedup workload's rows, `COUNT(*)` and `SUM(payload)` per key with the
//!   typed `group_aggregate`. Output: per epoch and changed key, the retraction of its previous
//!   `(key, count, sum)` and the new one. Baseline: a `HashMap` fold, the changed keys' rows
//!   emitted at the end of each epoch.
//! * `table_group_by`, `table_temporal_join`: `group_by` and `temporal_join_final` as Table API
//!   plans over packed rows ([`relational`]), against the same baselines: the price of the
//!   relational layer over the hand-typed operator.
//! * `table_asof_join`: the workload of `table_temporal_join` as `probes ASOF JOIN rates
//!   MATCH_CONDITION (ts >= ts0) ON k = k0` (incremental, the ASOF join's one mode), against the
//!   same baseline: an ASOF `>=` join beside the temporal join it generalises.
//! * `table_interval_join`, `table_asof_nearest`: the same probes and rates as an interval join
//!   (`ts BETWEEN ts0 - 30 s AND ts0 + 30 s`, final mode) and an ASOF NEAREST join
//!   ([`joins`]). Baselines: per probe row, a binary search of its key's sorted versions.
//! * `table_equi_join`: a regular join of two updating tables ([`joins`]): per input row an
//!   order inserted, an older one deleted and a dimension row updated. Baseline: a symmetric
//!   hash join.
//! * `table_tumble_count`, `table_session`: the dedup workload's rows over 1000 keys,
//!   `COUNT(*)` and `SUM(payload)` per key and 1-minute tumbling window, or per key and session
//!   (gap 2 s), final mode with a 5 s watermark delay (no row is late) ([`windows`]).
//!   Output: each window's row once. Baselines: a `HashMap` fold per (key, window); each key's
//!   rows sorted and split at gaps.
//! * `nexmark_q5`, `nexmark_q7`, `nexmark_q8`, `nexmark_q11`: Flink's Nexmark queries in SQL,
//!   final mode, over `N` events of the `nexmark` SQL source (people, auctions and bids; rates
//!   count all of them) ([`nexmark`]). Output: the query's rows. Baselines: the sequential
//!   computations the SQL tests check the queries against.

/// The allocator of the measured runs and their baselines (the crate's default `mimalloc` feature).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod baseline;
mod clock;
mod dataflows;
mod joins;
mod nexmark;
mod relational;
mod report;
mod rss;
mod windows;
mod workload;

use std::process::{Command, ExitCode};

use clap::{Parser, ValueEnum};

use report::Line;
use workload::Shape;

/// A measured operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// Dedup keep-last by event time.
    #[value(name = "dedup_keep_last")]
    DedupKeepLast,
    /// The `versioned` merge engine.
    #[value(name = "versioned_merge")]
    VersionedMerge,
    /// Event-time temporal join, final mode.
    #[value(name = "temporal_join_final")]
    TemporalJoinFinal,
    /// Event-time temporal join, incremental mode.
    #[value(name = "temporal_join_incremental")]
    TemporalJoinIncremental,
    /// `VersionedTable::as_of`.
    #[value(name = "asof_snapshot")]
    AsofSnapshot,
    /// Nexmark q18 over the `nexmark` generator's bids.
    #[value(name = "nexmark_q18")]
    NexmarkQ18,
    /// `COUNT(*)`, `SUM` per key with the typed group aggregation.
    #[value(name = "group_by")]
    GroupBy,
    /// The same GROUP BY as a Table API plan over packed rows.
    #[value(name = "table_group_by")]
    TableGroupBy,
    /// `temporal_join_final` as a Table API plan over packed rows.
    #[value(name = "table_temporal_join")]
    TableTemporalJoin,
    /// The same join as an ASOF `>=` join (incremental) in a Table API plan.
    #[value(name = "table_asof_join")]
    TableAsofJoin,
    /// An interval join of the same inputs (final mode) in a Table API plan.
    #[value(name = "table_interval_join")]
    TableIntervalJoin,
    /// The same inputs as an ASOF NEAREST join in a Table API plan.
    #[value(name = "table_asof_nearest")]
    TableAsofNearest,
    /// A regular equi-join of two updating tables in a Table API plan.
    #[value(name = "table_equi_join")]
    TableEquiJoin,
    /// A tumbling-window `COUNT(*)`, `SUM` per key (final mode) in a Table API plan.
    #[value(name = "table_tumble_count")]
    TableTumbleCount,
    /// A session-window `COUNT(*)`, `SUM` per key (final mode) in a Table API plan.
    #[value(name = "table_session")]
    TableSession,
    /// Nexmark q5 (hot items: hopping windows, a join with each window's maximum) in SQL.
    #[value(name = "nexmark_q5")]
    NexmarkQ5,
    /// Nexmark q7 (highest bid: a tumbling maximum joined back to the bids) in SQL.
    #[value(name = "nexmark_q7")]
    NexmarkQ7,
    /// Nexmark q8 (new users who sell: a join of two tumbling-window aggregations) in SQL.
    #[value(name = "nexmark_q8")]
    NexmarkQ8,
    /// Nexmark q11 (user sessions: session windows per bidder) in SQL.
    #[value(name = "nexmark_q11")]
    NexmarkQ11,
}

impl Op {
    /// The name printed in the report line.
    fn name(self) -> &'static str {
        match self {
            Op::DedupKeepLast => "dedup_keep_last",
            Op::VersionedMerge => "versioned_merge",
            Op::TemporalJoinFinal => "temporal_join_final",
            Op::TemporalJoinIncremental => "temporal_join_incremental",
            Op::AsofSnapshot => "asof_snapshot",
            Op::NexmarkQ18 => "nexmark_q18",
            Op::GroupBy => "group_by",
            Op::TableGroupBy => "table_group_by",
            Op::TableTemporalJoin => "table_temporal_join",
            Op::TableAsofJoin => "table_asof_join",
            Op::TableIntervalJoin => "table_interval_join",
            Op::TableAsofNearest => "table_asof_nearest",
            Op::TableEquiJoin => "table_equi_join",
            Op::TableTumbleCount => "table_tumble_count",
            Op::TableSession => "table_session",
            Op::NexmarkQ5 => "nexmark_q5",
            Op::NexmarkQ7 => "nexmark_q7",
            Op::NexmarkQ8 => "nexmark_q8",
            Op::NexmarkQ11 => "nexmark_q11",
        }
    }
}

/// Throughput of the differential-temporal operators against sequential baselines.
#[derive(Parser, Debug)]
#[command(about)]
struct Args {
    /// Input rows (probe rows for the temporal joins, events of all kinds for the Nexmark SQL
    /// queries).
    #[arg(long, default_value_t = 10_000_000)]
    rows: u64,
    /// Worker threads (default: one run with 1 and one with 2).
    #[arg(short = 'w', long = "workers")]
    workers: Option<usize>,
    /// Measure only this operation (default: all).
    #[arg(long)]
    op: Option<Op>,
    /// Rows per epoch (system time), over all workers.
    #[arg(long, default_value_t = 100_000)]
    epoch_rows: u64,
    /// Internal: run one measurement in this process and print its lines.
    #[arg(long, hide = true)]
    child: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.rows == 0 || args.epoch_rows == 0 || args.workers == Some(0) {
        eprintln!("error: --rows, --epoch-rows and -w must be at least 1");
        return ExitCode::from(2);
    }
    let shape = Shape {
        rows: args.rows,
        epoch_rows: args.epoch_rows,
    };
    match (args.child, args.op, args.workers) {
        (true, Some(op), Some(workers)) => child(op, workers, shape),
        (true, ..) => {
            eprintln!("error: --child needs --op and -w");
            ExitCode::from(2)
        }
        (false, op, workers) => parent(op, workers, shape),
    }
}

/// Runs every requested (op, workers) in its own child process and prints their lines.
fn parent(op: Option<Op>, workers: Option<usize>, shape: Shape) -> ExitCode {
    let ops = match op {
        Some(op) => vec![op],
        None => Op::value_variants().to_vec(),
    };
    let workers = workers.map_or(vec![1, 2], |w| vec![w]);
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: cannot find this program to run its measurements: {e}");
            return ExitCode::FAILURE;
        }
    };
    for op in ops {
        for &w in &workers {
            let output = Command::new(&exe)
                .args(["--child", "--op", op.name(), "-w", &w.to_string()])
                .args(["--rows", &shape.rows.to_string()])
                .args(["--epoch-rows", &shape.epoch_rows.to_string()])
                .stderr(std::process::Stdio::inherit())
                .output();
            match output {
                Ok(out) if out.status.success() => {
                    print!("{}", String::from_utf8_lossy(&out.stdout));
                }
                Ok(out) => {
                    print!("{}", String::from_utf8_lossy(&out.stdout));
                    eprintln!(
                        "error: op={} workers={w} failed ({})",
                        op.name(),
                        out.status
                    );
                    return ExitCode::FAILURE;
                }
                Err(e) => {
                    eprintln!("error: cannot start the measurement of {}: {e}", op.name());
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// One measurement: dataflow, peak RSS, baseline, check, lines.
fn child(op: Op, workers: usize, shape: Shape) -> ExitCode {
    let run = dataflows::measure(op, workers, shape);
    let peak_rss_mb = rss::peak_rss_mb().unwrap_or(f64::NAN);
    let base = baseline::run(op, shape);
    if run.digest != base.digest {
        eprintln!(
            "error: op={} workers={workers}: the dataflow's output ({} records, checksum {:#x}) \
             differs from the baseline's ({} records, checksum {:#x})",
            op.name(),
            run.digest.records,
            run.digest.sum,
            base.digest.records,
            base.digest.sum
        );
        return ExitCode::FAILURE;
    }
    let line = Line {
        op: op.name(),
        workers,
        rows: shape.rows,
        seconds: run.seconds,
        baseline_seconds: base.clock.wall.as_secs_f64(),
        peak_rss_mb,
    };
    let (live, formula) = rss::live_state(op, &shape, base.keys);
    let live_mb = live as f64 / (1024.0 * 1024.0);
    println!("{line}");
    let base_cpu = base.clock.cpu.as_secs_f64();
    let per_cpu = |seconds: f64| shape.rows as f64 / seconds;
    println!(
        "# op={} workers={workers} cpu_seconds={:.3} rows_per_cpu_s={:.0} \
         baseline_rows_per_cpu_s={:.0} cpu_ratio={:.3} live_state_mb={live_mb:.1} \
         rss_over_live={:.2} output_records={} (live state: {formula})",
        op.name(),
        run.cpu_seconds,
        per_cpu(run.cpu_seconds),
        per_cpu(base_cpu),
        base_cpu / run.cpu_seconds,
        peak_rss_mb / live_mb,
        run.digest.records,
    );
    ExitCode::SUCCESS
}
