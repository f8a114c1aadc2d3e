//! The typed-API side of the bad-input matrix: the crate's CSV reader feeding an operator on
//! 1, 2 and 4 workers, reported like the command line (output lines, refused rows).

use std::path::Path;

use differential_temporal::csv::{InputSpec, Record, RowError, Schema};
use differential_temporal::merge_engine::{merge_engine, Row as EngineRow};
use differential_temporal::merge_options::{merge_engine_from_options, parse_option};
use differential_temporal::operators::dedup::{DedupConfig, DedupOrder, Deduplicate, Keep};
use differential_temporal::operators::testing::{batch, run_unary};
use differential_temporal::operators::versioned::{versions_from_changelog, VersionedTable};
use differential_temporal::operators::{Change, RowKind, Version};
use differential_temporal::row::{pack_cells, Row, TextCells, TimedRow};

use super::Run;

/// Reads `in.csv` of `dir` through the crate's CSV layer (blocks of 16 bytes, so rows spread
/// over several epochs): its schema, the well-formed records and the malformed rows.
fn read(dir: &Path, key: &str, time: Option<&str>) -> (Schema, Vec<Record>, Vec<RowError>) {
    let path = dir.join("in.csv").to_str().unwrap().to_string();
    let spec = InputSpec {
        path,
        key: vec![key.to_string()],
        nullable_key: false,
        time: time.map(str::to_string),
    };
    let mut schema = Schema::open(&spec, 0).unwrap();
    let (mut records, mut errors) = (Vec::new(), Vec::new());
    let mut blocks = schema.blocks(16).unwrap();
    while let Some(block) = blocks.next_owned(|_| true).unwrap() {
        schema.parse_block(&block, |r| match r {
            Ok(r) => records.push(r),
            Err(e) => errors.push(e),
        });
    }
    schema.path = "in.csv".to_string();
    for e in &mut errors {
        e.file = schema.path.clone();
    }
    (schema, records, errors)
}

/// Runs `build` on 1, 2 and 4 workers over `rows` cut into epochs of two rows, checks that the
/// final contents agree, and returns them.
fn on_workers<I, O, F>(rows: &[I], build: F) -> Vec<O>
where
    I: differential_dataflow::ExchangeData + Sync,
    O: differential_dataflow::ExchangeData,
    F: for<'s> Fn(
            differential_dataflow::VecCollection<'s, u64, I>,
        ) -> differential_dataflow::VecCollection<'s, u64, O>
        + Send
        + Sync
        + Clone
        + 'static,
{
    let cuts: Vec<usize> = (2..rows.len()).step_by(2).collect();
    let results: Vec<Vec<O>> = [1, 2, 4]
        .into_iter()
        .map(|w| {
            let mut finals: Vec<(O, isize)> = run_unary(w, batch(rows, &cuts), build.clone())
                .into_iter()
                .map(|(d, _, r)| (d, r))
                .collect();
            differential_dataflow::consolidation::consolidate(&mut finals);
            finals
                .into_iter()
                .flat_map(|(d, r)| std::iter::repeat_n(d, usize::try_from(r).unwrap()))
                .collect()
        })
        .collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    results.into_iter().next().unwrap()
}

/// A typed-API run's report: output lines, refused rows (`(seq, reason)`) and malformed rows.
fn report(
    schema: &Schema,
    lines: Vec<String>,
    refused: Vec<(u64, String)>,
    malformed: Vec<RowError>,
) -> Run {
    let mut errors: Vec<RowError> = refused
        .into_iter()
        .map(|(seq, reason)| schema.error(seq, None, reason))
        .chain(malformed)
        .collect();
    errors.sort();
    Run {
        code: i32::from(!errors.is_empty()),
        stdout: lines.concat(),
        stderr: errors.iter().map(|e| format!("{e}\n")).collect(),
    }
}

/// A row's cells joined by commas (NULL empty).
fn cells(row: &Row) -> String {
    let cells: Vec<&str> = row.cells().map(Option::unwrap_or_default).collect();
    cells.join(",")
}

type Outcome<V> = Result<(u64, Change<V>), (u64, String)>;

/// Splits outcomes sorted by `(seq, kind)` into changelog lines and refused rows.
fn split_outcomes<V>(
    outcomes: Vec<Outcome<V>>,
    row: impl Fn(&V) -> String,
) -> (Vec<String>, Vec<(u64, String)>) {
    let mut lines = Vec::new();
    let mut refused = Vec::new();
    for o in outcomes {
        match o {
            Ok((_, c)) => lines.push(format!("{},{}\n", c.kind, row(&c.row))),
            Err(r) => refused.push(r),
        }
    }
    (lines, refused)
}

/// Keep-last dedup by event time over `in.csv` (a changelog): rule A14 refuses its -U/-D rows.
pub fn api_dedup(dir: &Path) -> Run {
    let (schema, records, malformed) = read(dir, "id", Some("t"));
    let rows: Vec<_> = records.into_iter().map(Record::into_change).collect();
    let outcomes = on_workers(&rows, |c| {
        let merged = c.deduplicate(
            DedupConfig::new(Keep::Last, DedupOrder::EventTime),
            |r: &TimedRow| r.time,
        );
        let ok = merged.changelog.map(|(_, c)| Ok((c.seq, c)));
        let refused = merged
            .rejected
            .map(|(_, r)| Err((r.seq, r.reason.into_owned())));
        ok.concat(refused)
    });
    let mut outcomes = outcomes;
    outcomes.sort_by_key(|o| match o {
        Ok((seq, c)) => (*seq, c.kind as u8),
        Err((seq, _)) => (*seq, 0),
    });
    let (lines, refused) = split_outcomes(outcomes, |r: &TimedRow| cells(&r.row));
    report(&schema, lines, refused, malformed)
}

/// The versioned table of `in.csv` as of time 10, after also retracting (diff -1) a version that
/// was never inserted: a negative count is no row, and the other keys are unaffected.
pub fn api_versioned_retract_absent(dir: &Path) -> Run {
    let (schema, records, malformed) = read(dir, "id", Some("t"));
    let never = (
        pack_cells([Some("z")]),
        Version::row(
            0,
            99,
            TimedRow {
                time: 0,
                seq: 99,
                row: pack_cells([Some("z")]),
            },
        ),
    );
    // (versions, retracted?): the changelog's versions are inserted, `never` is retracted.
    let rows: Vec<_> = records
        .into_iter()
        .map(|r| (r.into_change(), None))
        .chain([(
            (
                Row::new(),
                Change::new(
                    0,
                    RowKind::Delete,
                    TimedRow {
                        time: 0,
                        seq: 0,
                        row: Row::new(),
                    },
                ),
            ),
            Some(never),
        )])
        .collect();
    let table = on_workers(&rows, |c| {
        let changes = c
            .clone()
            .flat_map(|(change, never)| never.is_none().then_some(change));
        let retracted = c.flat_map(|(_, never)| never).negate();
        let versions = versions_from_changelog(changes, |r: &TimedRow| r.time).concat(retracted);
        VersionedTable::new(versions, "Versions")
            .as_of(10)
            .map(|(_, r)| (r.seq, r.row))
    });
    let lines = table
        .iter()
        .map(|(_, row)| format!("{}\n", cells(row)))
        .collect();
    report(&schema, lines, Vec::new(), malformed)
}

/// Paimon's default deduplicate merge engine over `in.csv`.
pub fn api_merge_deduplicate(dir: &Path) -> Run {
    let (schema, records, malformed) = read(dir, "id", None);
    let options = [parse_option("merge-engine=deduplicate").unwrap()];
    let engine = merge_engine_from_options(
        &options,
        &differential_temporal::repr::Schema::strings(&schema.columns),
        &["id".to_string()],
    )
    .unwrap();
    let rows: Vec<_> = records
        .into_iter()
        .map(|r| (r.key, Change::new(r.seq, r.kind, r.row)))
        .collect();
    let mut outcomes = on_workers(&rows, move |c| {
        let merged = merge_engine(c, engine.clone());
        let ok = merged.changelog.map(|(_, c)| Ok((c.seq, c)));
        let refused = merged.rejected.map(|(_, r)| Err((r.seq, r.to_string())));
        ok.concat(refused)
    });
    outcomes.sort_by_key(|o| match o {
        Ok((seq, c)) => (*seq, c.kind as u8),
        Err((seq, _)) => (*seq, 0),
    });
    let (lines, refused) = split_outcomes(outcomes, |r: &EngineRow| {
        let cells: Vec<&str> = r.cells().map(Option::unwrap_or_default).collect();
        cells.join(",")
    });
    report(&schema, lines, refused, malformed)
}
