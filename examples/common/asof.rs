//! Shared by the examples and their tests: an event-time temporal join of two CSV-shaped
//! tables on timely workers, built from the typed operators of `differential-temporal`.
//!
//! Probe side: an append-only table (every row a `+I` whose `seq` is its line in the file, or its
//! position for rows in memory), keyed by one column, event time from another. Build side: the temporal table
//! function of an append-only history (Flink `createTemporalTableFunction(time, key)`, semantics
//! rule B15): every row is a version of its key at its time, `seq` as above, so of two rows
//! with the same key and time the later one wins (rule A4). A probe row joins the version valid
//! at its time: the greatest `(time, seq)` with `time <= probe time` (rule B3).
//!
//! Runs on one process or several (timely's `-w`, `-n`, `-p`, `-h` flags: [`Cluster`]). A file is
//! read with the library's CSV layer: every worker scans the bytes for record boundaries (no
//! parsing) and parses only its share of the blocks ([`Schema::parse_block`]); the operators
//! exchange rows by key, and the joined rows, rejected rows and counts are gathered at global
//! worker 0, whose process returns them.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use differential_dataflow::input::InputSession;
use differential_temporal::csv::{InputSpec, Schema};
use differential_temporal::operators::temporal_join::{
    arrange_probe, temporal_join, JoinConfig, JoinKind,
};
use differential_temporal::operators::{arrange_versions, Change, RowKind, SysTime, Version};
use differential_temporal::repr::time::{parse_event_time, EventTime};
use differential_temporal::row::TextCells;
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::dataflow::ProbeHandle;

/// A row of text cells (an empty cell is NULL).
pub type Row = Vec<String>;

/// Where a table's rows come from.
pub enum Source {
    /// A CSV file with a header row.
    File(Schema),
    /// Rows in memory (header given separately).
    Rows(Arc<Vec<Row>>),
}

/// A table: its columns, its rows, and which columns are the key and the event time.
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// The rows.
    pub source: Source,
    /// Index of the key column.
    pub key: usize,
    /// Index of the event-time column.
    pub time: usize,
}

/// Bytes of a file block: a worker parses the blocks `b` with `b % workers == worker`.
const BLOCK_BYTES: usize = 1 << 16;

impl Table {
    /// A CSV file with a header row; `key` and `time` are column names. A row's `seq` is the
    /// line on which it starts.
    pub fn csv(path: impl AsRef<Path>, key: &str, time: &str) -> Result<Table, String> {
        let spec = InputSpec {
            path: path.as_ref().to_string_lossy().into_owned(),
            key: vec![key.to_string()],
            nullable_key: false,
            time: Some(time.to_string()),
        };
        let schema = Schema::open(&spec, 0).map_err(|e| e.to_string())?;
        let (header, key) = (schema.columns.clone(), schema.key[0]);
        let time = schema.time.ok_or("no time column")?;
        Ok(Table {
            header,
            source: Source::File(schema),
            key,
            time,
        })
    }

    /// Rows in memory; a row's `seq` is its position.
    pub fn rows(header: &[&str], rows: Vec<Row>, key: &str, time: &str) -> Result<Table, String> {
        let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
        Ok(Table {
            key: column(&header, key)?,
            time: column(&header, time)?,
            header,
            source: Source::Rows(Arc::new(rows)),
        })
    }

    /// Calls `f(seq, row)` for this worker's share of the rows (`Err(reason)` for a row that
    /// cannot be read).
    fn for_share(
        &self,
        index: usize,
        peers: usize,
        mut f: impl FnMut(u64, Result<Row, String>),
    ) -> Result<(), String> {
        let mine = |p: u64| p % peers as u64 == index as u64;
        match &self.source {
            Source::Rows(rows) => {
                for (p, row) in rows.iter().enumerate().filter(|(p, _)| mine(*p as u64)) {
                    f(p as u64, Ok(row.clone()));
                }
            }
            Source::File(schema) => {
                let mut blocks = schema.blocks(BLOCK_BYTES).map_err(|e| e.to_string())?;
                while let Some(block) = blocks
                    .next_owned(mine)
                    .map_err(|e| format!("{}: {e}", schema.path))?
                {
                    schema.parse_block(&block, |row| match row {
                        Ok(r) => f(
                            r.seq,
                            Ok(r.row
                                .cells()
                                .map(|c| c.unwrap_or_default().to_string())
                                .collect()),
                        ),
                        Err(e) => f(e.line, Err(e.to_string())),
                    });
                }
            }
        }
        Ok(())
    }
}

fn column(header: &[String], name: &str) -> Result<usize, String> {
    header
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| format!("no column `{name}` in {header:?}"))
}

/// An event time in any form of [`parse_event_time`] (dates included), as an error string.
pub fn event_time(text: &str) -> Result<EventTime, String> {
    parse_event_time(text).map_err(|e| e.to_string())
}

/// One joined row: the probe row's `seq`, the probe row, the build row (`None` = NULL).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct JoinedRow {
    /// The probe row's `seq` (its line in a file, its position among rows in memory).
    pub seq: u64,
    /// The probe row.
    pub probe: Row,
    /// The version joined, or `None` (LEFT join padding).
    pub build: Option<Row>,
}

impl JoinedRow {
    /// Probe cells then build cells (`build_width` empty cells for NULL).
    pub fn cells(&self, build_width: usize) -> Row {
        let mut cells = self.probe.clone();
        match &self.build {
            Some(b) => cells.extend(b.iter().cloned()),
            None => cells.extend(std::iter::repeat_n(String::new(), build_width)),
        }
        cells
    }
}

/// The result of [`asof_join`].
pub struct JoinOutput {
    /// Output columns: probe columns, then build columns renamed with [`joined_header`].
    pub header: Vec<String>,
    /// Joined rows, in probe row order.
    pub rows: Vec<JoinedRow>,
    /// Number of build columns (the NULL padding's width).
    pub build_width: usize,
    /// Probe rows fed into the dataflow.
    pub probe_rows: usize,
    /// Build rows (versions) fed into the dataflow.
    pub build_rows: usize,
    /// Rows not fed: `(side, seq, reason)`.
    pub rejected: Vec<(String, u64, String)>,
    /// Wall time of the dataflow run (reading, joining, collecting).
    pub elapsed: Duration,
}

impl JoinOutput {
    /// Joined rows with a build row.
    pub fn matched(&self) -> usize {
        self.rows.iter().filter(|r| r.build.is_some()).count()
    }
}

/// Probe columns then build columns; a build column whose name is taken gets the suffix `0`
/// (then `1`, ...), Flink's rule.
pub fn joined_header(probe: &[String], build: &[String]) -> Vec<String> {
    let mut out: Vec<String> = probe.to_vec();
    for name in build {
        let mut candidate = name.clone();
        let mut n = 0;
        while out.contains(&candidate) {
            candidate = format!("{name}{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// Separates the cells of a row packed into one string for the dataflow (one allocation per row
/// instead of one per cell; rows move through several arrangements).
const SEP: char = '\u{1f}';

fn pack(row: &[String]) -> Result<String, String> {
    match row.iter().any(|c| c.contains(SEP)) {
        true => Err("a cell contains the unit separator U+001F".into()),
        false => Ok(row.join("\u{1f}")),
    }
}

fn unpack(packed: &str) -> Row {
    packed.split(SEP).map(str::to_string).collect()
}

type ProbeRow = (EventTime, String);

/// What a worker tells worker 0 besides the joined rows: counts and rows not fed.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
enum Note {
    /// Probe rows fed (the update's count).
    Probes,
    /// Build rows fed (the update's count).
    Builds,
    /// A row not fed: side, seq, reason.
    Rejected(String, u64, String),
}

/// How the dataflow runs: timely's flags `-w THREADS`, `-n PROCESSES`, `-p INDEX`,
/// `-h HOSTFILE` (a file of `host:port` lines, one per process).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    /// The flags and their values, as timely reads them.
    pub args: Vec<String>,
}

impl Cluster {
    /// One process of `threads` workers.
    pub fn threads(threads: usize) -> Cluster {
        Cluster {
            args: vec!["-w".into(), threads.max(1).to_string()],
        }
    }

    /// The value of flag `flag` (its last occurrence), parsed, or `default`.
    fn value(&self, flag: &str, default: usize) -> usize {
        let at = self.args.iter().rposition(|a| a == flag);
        at.and_then(|i| self.args.get(i + 1)?.parse().ok())
            .unwrap_or(default)
    }

    /// Workers over all processes.
    pub fn workers(&self) -> usize {
        self.value("-w", 1) * self.value("-n", 1)
    }
}

impl From<usize> for Cluster {
    fn from(threads: usize) -> Cluster {
        Cluster::threads(threads)
    }
}

/// Joins every probe row with the build version of its key valid at its event time
/// ([`JoinKind::Left`] keeps unmatched probe rows), on the workers of `cluster`.
///
/// Returns `Ok(None)` in a process that does not host worker 0 (the output is gathered there).
pub fn asof_join(
    probe: Table,
    build: Table,
    kind: JoinKind,
    cluster: impl Into<Cluster>,
) -> Result<Option<JoinOutput>, String> {
    let cluster: Cluster = cluster.into();
    let args = std::iter::once("asof".to_string()).chain(cluster.args);
    let config = timely::Config::from_args(args).map_err(|e| format!("timely: {e}"))?;
    let header = joined_header(&probe.header, &build.header);
    let build_width = build.header.len();
    let tables = Arc::new((probe, build));
    let start = Instant::now();
    let guards = timely::execute(config, move |worker| {
        let (probe_table, build_table) = &*tables;
        let (index, peers) = (worker.index(), worker.peers());
        let mut probe_in = InputSession::<SysTime, (String, Change<ProbeRow>), isize>::new();
        let mut build_in =
            InputSession::<SysTime, (String, Version<EventTime, String>), isize>::new();
        let mut notes_in = InputSession::<SysTime, Note, isize>::new();
        let handle = ProbeHandle::new();
        let joined = Rc::new(RefCell::new(Vec::new()));
        let notes = Rc::new(RefCell::new(Vec::new()));
        worker.dataflow::<SysTime, _, _>(|scope| {
            let probe = arrange_probe(probe_in.to_collection(scope), |r: &ProbeRow| r.0, "Probe");
            let build = arrange_versions(build_in.to_collection(scope), "Build");
            let out = temporal_join(probe, build, JoinConfig::new(kind).named("AsOfJoin"));
            gather(out.map(|(_, change)| change).inner, &joined).probe_with(&handle);
            gather(notes_in.to_collection(scope).inner, &notes).probe_with(&handle);
        });
        let (mut probes, mut builds) = (0, 0);
        let mut reject = |side: &str, seq, reason| {
            notes_in.insert(Note::Rejected(side.to_string(), seq, reason));
        };
        let read = build_table.for_share(index, peers, |seq, row| {
            match row.and_then(|r| Ok((event_time(&r[build_table.time])?, pack(&r)?, r))) {
                Ok((t, packed, row)) => {
                    builds += 1;
                    let key = row[build_table.key].clone();
                    build_in.update((key, Version::row(t, seq, packed)), 1);
                }
                Err(e) => reject("build", seq, e),
            }
        });
        let read = read.and_then(|()| {
            probe_table.for_share(index, peers, |seq, row| {
                match row.and_then(|r| Ok((event_time(&r[probe_table.time])?, pack(&r)?, r))) {
                    Ok((t, packed, row)) => {
                        probes += 1;
                        let key = row[probe_table.key].clone();
                        probe_in.update((key, Change::new(seq, RowKind::Insert, (t, packed))), 1);
                    }
                    Err(e) => reject("probe", seq, e),
                }
            })
        });
        notes_in.update(Note::Probes, probes);
        notes_in.update(Note::Builds, builds);
        drop((probe_in, build_in, notes_in));
        while worker.step() {}
        read.map(|()| (index == 0).then(|| (joined.take(), notes.take())))
    })
    .map_err(|e| format!("timely: {e}"))?;
    let mut gathered = None;
    for result in guards.join() {
        if let Some(g) = result.map_err(|e| format!("worker: {e}"))?? {
            gathered = Some(g);
        }
    }
    let Some((mut joined, mut notes)) = gathered else {
        return Ok(None);
    };
    differential_dataflow::consolidation::consolidate(&mut joined);
    differential_dataflow::consolidation::consolidate(&mut notes);
    let mut rows = Vec::with_capacity(joined.len());
    for (change, diff) in joined {
        if diff < 0 {
            return Err(format!(
                "negative multiplicity {diff} for probe row {}",
                change.seq
            ));
        }
        let ((_, probe), build) = change.row;
        for _ in 0..diff {
            rows.push(JoinedRow {
                seq: change.seq,
                probe: unpack(&probe),
                build: build.as_deref().map(unpack),
            });
        }
    }
    rows.sort();
    let (mut probe_rows, mut build_rows, mut rejected) = (0, 0, Vec::new());
    for (note, n) in notes {
        match note {
            Note::Probes => probe_rows = n as usize,
            Note::Builds => build_rows = n as usize,
            Note::Rejected(side, seq, reason) => rejected.push((side, seq, reason)),
        }
    }
    Ok(Some(JoinOutput {
        header,
        rows,
        build_width,
        probe_rows,
        build_rows,
        rejected,
        elapsed: start.elapsed(),
    }))
}

/// Sends a stream's updates to worker 0 and collects them there into `into`.
fn gather<'s, D: differential_dataflow::ExchangeData>(
    stream: timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>>,
    into: &Rc<RefCell<Vec<(D, isize)>>>,
) -> timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>> {
    let sink = Rc::clone(into);
    stream
        .exchange(|_| 0)
        .inspect(move |(d, _, r)| sink.borrow_mut().push((d.clone(), *r)))
}

/// Splits the command line into timely's cluster flags ([`Cluster`]; `-w` defaults to
/// `default`, `-wN` is accepted) and the remaining (positional) arguments.
pub fn parse_args(
    args: impl IntoIterator<Item = String>,
    default: usize,
) -> Result<(Cluster, Vec<String>), String> {
    let mut cluster = Cluster::threads(default);
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, value) = match arg.as_str() {
            "-w" | "--workers" => ("-w", args.next()),
            "-n" | "--processes" => ("-n", args.next()),
            "-p" | "--process" => ("-p", args.next()),
            "-h" | "--hostfile" => ("-h", args.next()),
            a if a.starts_with("-w") => ("-w", Some(a[2..].to_string())),
            _ => {
                rest.push(arg);
                continue;
            }
        };
        let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
        if flag != "-h" && value.parse::<usize>().is_err() {
            return Err(format!("{flag}: bad number `{value}`"));
        }
        cluster.args.extend([flag.to_string(), value]);
    }
    Ok((cluster, rest))
}
