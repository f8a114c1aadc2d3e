//! The reference of the temporal and lookup joins: each probe change joined with the build
//! version its key has at its rowtime (the temporal join, recomputed at every system time; in
//! final mode with a state TTL, the operator's own sequential model over the watermarks) or at
//! its system time (the lookup join, never revised).

use std::collections::{BTreeMap, BTreeSet};

use crate::expr::RowArena;
use crate::plan::Join;
use crate::repr::{Datum, DatumVec, Row, Ts};
use differential_temporal_operators::retention::Retention;
use differential_temporal_operators::temporal_join::{reference as model, JoinConfig};
use differential_temporal_operators::testing::Epoch;
use differential_temporal_operators::versioned::version_of_change;
use differential_temporal_operators::watermark::Watermark;
use differential_temporal_operators::{Change, RowKind, SysTime, Version};

use super::rows::{
    consolidate, diff_counts_into, event_time, has_null, joined_row, pad, project, refuse, times,
};
use super::{Refused, Stream};

/// The event-time temporal join of the accumulated changes at every system time (see the
/// interpreter's module docs).
pub(super) fn temporal_join(
    join: &Join,
    probe_changes: &Stream,
    build_changes: &Stream,
    refused: &mut Vec<Refused>,
) -> Stream {
    let (probe_key, build_key) = (&join.probe_key, &join.build_key);
    let probe_time = join.probe.schema.rowtime.as_ref().map(|r| r.column);
    let build_time = join.build.schema.rowtime.as_ref().map(|r| r.column);
    let (mut datums, mut arena) = (DatumVec::new(), RowArena::new());
    // Build rows with a key but no event time cannot be versions: refused.
    for (time, b) in build_changes {
        let key = project(&b.row, build_key, &mut datums);
        if !has_null(&key) && build_time.and_then(|c| event_time(&b.row, c)).is_none() {
            refused.push(refuse(*time, b.seq, "NULL event time"));
        }
    }
    let mut out = Vec::new();
    let all_times = times(probe_changes.iter().chain(build_changes).map(|(t, _)| *t));
    let mut previous = Vec::new();
    for at in all_times {
        let mut now = Vec::new();
        for (time, change) in probe_changes.iter().filter(|(t, _)| *t <= at) {
            // A NULL key never matches (and is not checked for its time).
            let k = project(&change.row, probe_key, &mut datums);
            let version = if has_null(&k) {
                None
            } else {
                let Some(t) = probe_time.and_then(|c| event_time(&change.row, c)) else {
                    if at == *time {
                        refused.push(refuse(*time, change.seq, "NULL event time"));
                    }
                    continue;
                };
                build_changes
                    .iter()
                    .filter(|(bt, b)| {
                        *bt <= at
                            && b.kind != RowKind::UpdateBefore
                            && project(&b.row, build_key, &mut DatumVec::new()) == k
                    })
                    .filter_map(|(_, b)| {
                        let vt = build_time.and_then(|c| event_time(&b.row, c))?;
                        (vt <= t).then_some(((vt, b.seq), b))
                    })
                    .max_by(|a, b| a.0.cmp(&b.0))
                    .and_then(|(_, b)| (b.kind != RowKind::Delete).then_some(&b.row))
            };
            match joined(join, &change.row, version, &mut arena) {
                Ok(Some(row)) => now.push((row, change.kind.sign())),
                Ok(None) => {}
                Err(e) => {
                    if at == *time {
                        refused.push(refuse(*time, change.seq, e.to_string()));
                    }
                }
            }
        }
        let now = consolidate(now);
        diff_counts_into(&mut out, at, &previous, &now);
        previous = now;
    }
    out
}

/// The final-mode temporal join with a state TTL of `ttl_ms` (rules B9-B13): the operator's
/// own sequential model ([`model::final_mode`]) over the keyed changes, one epoch a system
/// time, each side's watermark its rowtime's declared delay behind its largest rowtime. A
/// probe row with a NULL key bypasses the join (a LEFT join pads it); rows with a NULL rowtime,
/// late probe rows and late build versions (kept all the same) are refused.
pub(super) fn temporal_join_final(
    join: &Join,
    ttl_ms: u64,
    probe_changes: &Stream,
    build_changes: &Stream,
    refused: &mut Vec<Refused>,
) -> Stream {
    let rowtime = |schema: &crate::repr::Schema| {
        let rowtime = schema.rowtime.as_ref();
        rowtime
            .map(|r| (r.column, r.delay_ms))
            .expect("the plan checked both rowtimes")
    };
    let (p_col, p_delay) = rowtime(&join.probe.schema);
    let (b_col, b_delay) = rowtime(&join.build.schema);
    let build_width = join.build.schema.len();
    let epochs = (probe_changes.iter().chain(build_changes))
        .map(|(t, _)| *t as usize + 1)
        .max()
        .unwrap_or(0);
    let mut probe: Vec<Epoch<(Row, Change<Row>)>> = vec![Vec::new(); epochs];
    let mut build: Vec<Epoch<(Row, Version<Ts, Row>)>> = vec![Vec::new(); epochs];
    let mut probe_wm: Vec<Vec<Watermark<Ts>>> = vec![Vec::new(); epochs];
    let mut build_wm: Vec<Vec<Watermark<Ts>>> = vec![Vec::new(); epochs];
    let mut out = Vec::new();
    let mut datums = DatumVec::new();
    for (t, change) in probe_changes {
        let k = project(&change.row, &join.probe_key, &mut datums);
        if has_null(&k) {
            if join.kind == crate::plan::JoinKind::Left {
                let padded = pad(&change.row, None, build_width);
                out.push((*t, Change::new(change.seq, change.kind, padded)));
            }
            continue;
        }
        let Some(time) = event_time(&change.row, p_col) else {
            refused.push(refuse(*t, change.seq, "NULL event time"));
            continue;
        };
        probe_wm[*t as usize].push(Watermark::At(plus_millis(time, -p_delay)));
        probe[*t as usize].push(((k, change.clone()), 1));
    }
    for (t, change) in build_changes {
        let k = project(&change.row, &join.build_key, &mut datums);
        if has_null(&k) {
            continue;
        }
        let Some(time) = event_time(&change.row, b_col) else {
            refused.push(refuse(*t, change.seq, "NULL event time"));
            continue;
        };
        if let Ok(version) = version_of_change(change.clone(), time) {
            build_wm[*t as usize].push(Watermark::At(plus_millis(time, -b_delay)));
            build[*t as usize].push(((k, version), 1));
        }
    }
    // A build version behind the combined watermark in force at its system time is kept but
    // reported (rule B10, as the rendered join's `late_versions`).
    let fold = |wm: &[Vec<Watermark<Ts>>], s: usize| {
        wm[..s]
            .iter()
            .flatten()
            .max()
            .cloned()
            .unwrap_or(Watermark::Min)
    };
    for (s, epoch) in build.iter().enumerate() {
        let w = fold(&probe_wm, s).min(fold(&build_wm, s));
        for ((_, version), _) in epoch.iter().filter(|((_, v), _)| w.is_late(&v.time)) {
            refused.push(refuse(s as SysTime, version.seq, "late build version"));
        }
    }
    let residual = join.residual.clone();
    let holds = move |p: &Row, b: &Row| {
        let Some(residual) = &residual else {
            return true;
        };
        let (row, arena) = (pad(p, Some(b), 0), RowArena::new());
        let datums: Vec<Datum> = row.iter().collect();
        matches!(residual.eval(&datums, &arena), Ok(Datum::Bool(true)))
    };
    let ttl = ttl_ms.min(i64::MAX as u64) as i64;
    let config = JoinConfig::new(join.kind)
        .residual(holds)
        .retention(Retention::new(move |t: &Ts| plus_millis(*t, ttl)));
    let time_of = |row: &Row| event_time(row, p_col).expect("NULL rowtimes were refused");
    let (joined, late) =
        model::final_mode(&probe, &build, (&probe_wm, &build_wm), time_of, &config);
    for ((_, seq), t, _) in late {
        refused.push(refuse(t, seq, "late probe row"));
    }
    for ((_, change), t, diff) in joined {
        let (p, b) = &change.row;
        let row = pad(p, b.as_ref(), build_width);
        for _ in 0..diff {
            out.push((t, Change::new(change.seq, change.kind, row.clone())));
        }
    }
    out
}

/// The lookup join: each probe change joined, at its system time, with the current build
/// version of its key (greatest `(rowtime, seq)`, by `seq` alone without a build rowtime). With
/// a state TTL of `r` system times (rule B17): every probe change and build version touches
/// its key at its system time; the key's state expires at `t + r` after a touch at `t` that no
/// touch strictly between follows, and a probe change then sees only the versions entered at
/// or after the key's last expiry. Build changes with a key but a NULL rowtime are refused.
pub(super) fn lookup_join(
    join: &Join,
    probe_changes: &Stream,
    build_changes: &Stream,
    refused: &mut Vec<Refused>,
) -> Stream {
    let build_time = join.build.schema.rowtime.as_ref().map(|r| r.column);
    let (mut datums, mut arena) = (DatumVec::new(), RowArena::new());
    // The build changes that make versions: `(system time, key, rowtime, change)`.
    let mut versions = Vec::new();
    let mut touches: BTreeMap<Row, BTreeSet<SysTime>> = BTreeMap::new();
    for (time, b) in build_changes {
        let k = project(&b.row, &join.build_key, &mut datums);
        if has_null(&k) {
            continue;
        }
        let rowtime = build_time.map(|c| event_time(&b.row, c));
        if rowtime == Some(None) {
            refused.push(refuse(*time, b.seq, "NULL event time"));
        } else if b.kind != RowKind::UpdateBefore {
            touches.entry(k.clone()).or_default().insert(*time);
            versions.push((*time, k, rowtime.flatten(), b));
        }
    }
    for (time, change) in probe_changes {
        let k = project(&change.row, &join.probe_key, &mut datums);
        if !has_null(&k) {
            touches.entry(k).or_default().insert(*time);
        }
    }
    // The key's last expiry at or before `s` (0: none).
    let since = |k: &Row, s: SysTime| -> SysTime {
        let (Some(r), Some(touched)) = (join.state_ttl, touches.get(k)) else {
            return 0;
        };
        (touched.iter())
            .map(|t| (t, t + r))
            .filter(|(t, e)| *e <= s && touched.range(**t + 1..*e).next().is_none())
            .map(|(_, e)| e)
            .max()
            .unwrap_or(0)
    };
    let mut out = Vec::new();
    for (time, change) in probe_changes {
        let k = project(&change.row, &join.probe_key, &mut datums);
        let version = if has_null(&k) {
            None
        } else {
            let from = since(&k, *time);
            (versions.iter())
                .filter(|(bt, bk, _, _)| bt <= time && *bt >= from && *bk == k)
                .max_by_key(|(_, _, rowtime, b)| (*rowtime, b.seq))
                .and_then(|(_, _, _, b)| (b.kind != RowKind::Delete).then_some(&b.row))
        };
        match joined(join, &change.row, version, &mut arena) {
            Ok(Some(row)) => out.push((*time, Change::new(change.seq, change.kind, row))),
            Ok(None) => {}
            Err(e) => refused.push(refuse(*time, change.seq, e.to_string())),
        }
    }
    out
}

/// `probe` joined with `version` as the join's kind and residual decide (see [`joined_row`]).
fn joined(
    join: &Join,
    probe: &Row,
    version: Option<&Row>,
    arena: &mut RowArena,
) -> Result<Option<Row>, crate::expr::EvalError> {
    let (width, residual) = (join.build.schema.len(), join.residual.as_ref());
    joined_row(probe, version, width, join.kind, residual, arena)
}

/// `ts + millis`, saturating.
fn plus_millis(ts: Ts, millis: i64) -> Ts {
    Ts {
        millis: ts.millis.saturating_add(millis),
        ..ts
    }
}
