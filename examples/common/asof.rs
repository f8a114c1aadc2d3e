//! Shared by the examples and their tests: an event-time temporal join of two CSV-shaped
//! tables on timely workers, built from the typed operators of `differential-temporal`.
//!
//! Probe side: an append-only table (every row a `+I` whose `seq` is its position among the
//! data rows), keyed by one column, event time from another. Build side: the temporal table
//! function of an append-only history (Flink `createTemporalTableFunction(time, key)`, semantics
//! rule B15): every row is a version of its key at its time, `seq` its position, so of two rows
//! with the same key and time the later one wins (rule A4). A probe row joins the version valid
//! at its time: the greatest `(time, seq)` with `time <= probe time` (rule B3).
//!
//! Each worker reads the whole file but parses and feeds only its share of the rows (positions
//! `p` with `p % workers == worker`); the operators exchange rows by key.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use differential_dataflow::input::InputSession;
use differential_temporal::operators::temporal_join::{arrange_probe, temporal_join, JoinKind};
use differential_temporal::operators::{arrange_versions, Change, RowKind, SysTime, Version};
use differential_temporal::time::{parse_event_time, EventTime};
use timely::dataflow::ProbeHandle;

/// A row of text cells (an empty cell is NULL).
pub type Row = Vec<String>;

/// Where a table's rows come from.
pub enum Source {
    /// A CSV file with a header row.
    File(PathBuf),
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

impl Table {
    /// A CSV file with a header row; `key` and `time` are column names.
    pub fn csv(path: impl AsRef<Path>, key: &str, time: &str) -> Result<Table, String> {
        let path = path.as_ref();
        let mut reader =
            csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .iter()
            .map(str::to_string)
            .collect();
        Table::new(header, Source::File(path.to_path_buf()), key, time)
    }

    /// Rows in memory.
    pub fn rows(header: &[&str], rows: Vec<Row>, key: &str, time: &str) -> Result<Table, String> {
        let header = header.iter().map(|h| h.to_string()).collect();
        Table::new(header, Source::Rows(Arc::new(rows)), key, time)
    }

    fn new(header: Vec<String>, source: Source, key: &str, time: &str) -> Result<Table, String> {
        let key = column(&header, key)?;
        let time = column(&header, time)?;
        Ok(Table {
            header,
            source,
            key,
            time,
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
        let mine = |p: usize| p % peers == index;
        match &self.source {
            Source::Rows(rows) => {
                for (p, row) in rows.iter().enumerate().filter(|(p, _)| mine(*p)) {
                    f(p as u64, Ok(row.clone()));
                }
            }
            Source::File(path) => {
                let mut reader =
                    csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let mut record = csv::ByteRecord::new();
                let mut p = 0usize;
                loop {
                    match reader.read_byte_record(&mut record) {
                        Ok(false) => break,
                        Ok(true) if mine(p) => {
                            let cells: Result<Row, _> = record
                                .iter()
                                .map(|c| std::str::from_utf8(c).map(str::to_string))
                                .collect();
                            match cells {
                                Ok(row) if row.len() == self.header.len() => f(p as u64, Ok(row)),
                                Ok(row) => f(
                                    p as u64,
                                    Err(format!(
                                        "{} cells, expected {}",
                                        row.len(),
                                        self.header.len()
                                    )),
                                ),
                                Err(e) => f(p as u64, Err(e.to_string())),
                            }
                        }
                        Ok(true) => {}
                        Err(e) if mine(p) => f(p as u64, Err(e.to_string())),
                        Err(_) => {}
                    }
                    p += 1;
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

/// One joined row: the probe row's position, the probe row, the build row (`None` = NULL).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct JoinedRow {
    /// Position of the probe row among its table's data rows.
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
    /// Rows not fed: `(side, position, reason)`.
    pub rejected: Vec<(&'static str, u64, String)>,
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
type Fed = (
    Vec<(Change<(ProbeRow, Option<String>)>, isize)>,
    Vec<(&'static str, u64, String)>,
    usize,
    usize,
);

/// Joins every probe row with the build version of its key valid at its event time, on
/// `workers` timely worker threads ([`JoinKind::Left`] keeps unmatched probe rows).
pub fn asof_join(
    probe: Table,
    build: Table,
    kind: JoinKind,
    workers: usize,
) -> Result<JoinOutput, String> {
    let header = joined_header(&probe.header, &build.header);
    let build_width = build.header.len();
    let tables = Arc::new((probe, build));
    let start = Instant::now();
    let shared = Arc::clone(&tables);
    let guards = timely::execute(timely::Config::process(workers.max(1)), move |worker| {
        let (probe_table, build_table) = &*shared;
        let (index, peers) = (worker.index(), worker.peers());
        let mut probe_in = InputSession::<SysTime, (String, Change<ProbeRow>), isize>::new();
        let mut build_in =
            InputSession::<SysTime, (String, Version<EventTime, String>), isize>::new();
        let handle = ProbeHandle::new();
        let seen = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&seen);
        worker.dataflow::<SysTime, _, _>(|scope| {
            let probe = arrange_probe(probe_in.to_collection(scope), |r: &ProbeRow| r.0, "Probe");
            let build = arrange_versions(build_in.to_collection(scope), "Build");
            temporal_join(probe, build, kind, |_, _| true, "AsOfJoin")
                .inspect(move |((_, change), _, diff)| {
                    sink.borrow_mut().push((change.clone(), *diff))
                })
                .probe_with(&handle);
        });
        let mut rejected = Vec::new();
        let (mut probes, mut builds) = (0, 0);
        let read = build_table.for_share(index, peers, |seq, row| {
            match row.and_then(|r| Ok((event_time(&r[build_table.time])?, pack(&r)?, r))) {
                Ok((t, packed, row)) => {
                    builds += 1;
                    let key = row[build_table.key].clone();
                    build_in.update((key, Version::row(t, seq, packed)), 1);
                }
                Err(e) => rejected.push(("build", seq, e)),
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
                    Err(e) => rejected.push(("probe", seq, e)),
                }
            })
        });
        drop(probe_in);
        drop(build_in);
        while worker.step() {}
        let joined: Vec<_> = seen.take();
        read.map(|()| (joined, rejected, probes, builds))
    })
    .map_err(|e| format!("timely: {e}"))?;
    let mut joined = Vec::new();
    let mut rejected = Vec::new();
    let (mut probe_rows, mut build_rows) = (0, 0);
    for result in guards.join() {
        let (j, r, p, b): Fed = result.map_err(|e| format!("worker: {e}"))??;
        joined.extend(j);
        rejected.extend(r);
        probe_rows += p;
        build_rows += b;
    }
    differential_dataflow::consolidation::consolidate(&mut joined);
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
    rejected.sort();
    Ok(JoinOutput {
        header,
        rows,
        build_width,
        probe_rows,
        build_rows,
        rejected,
        elapsed: start.elapsed(),
    })
}

/// Splits the command line into the worker count (`-w N`, `--workers N`, `-wN`; default
/// `default`) and the remaining (positional) arguments.
pub fn parse_args(
    args: impl IntoIterator<Item = String>,
    default: usize,
) -> Result<(usize, Vec<String>), String> {
    let mut workers = default;
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "-w" | "--workers" => args.next().ok_or("-w needs a number")?,
            a if a.starts_with("-w") => a[2..].to_string(),
            _ => {
                rest.push(arg);
                continue;
            }
        };
        workers = value
            .parse()
            .map_err(|_| format!("bad worker count `{value}`"))?;
    }
    Ok((workers, rest))
}
