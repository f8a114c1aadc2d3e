//! Final mode: the pruned build arrangement stays bounded (rule B11), and the output does not
//! depend on the arrival order of the rows within the allowed lateness (issue 5 section 3).

use proptest::prelude::*;

use super::{arrange_versions_pruned, residual, FinalBuild, JoinConfig, JoinKind, Own, Pruned};
use crate::testing::{content_at, run_binary, Epoch};
use crate::version::version_of;
use crate::watermark::watermarks;
use crate::{Change, RowKind, Seq, SysTime, Version};
use differential_dataflow::VecCollection;

/// The B11-pruned versions arrangement of `versions` under the watermarks of `probes` and
/// `versions` (event time = the probe row, the version's time; lateness 0), as a collection.
fn pruned<'s>(
    probes: VecCollection<'s, SysTime, (u64, Change<u64>)>,
    versions: VecCollection<'s, SysTime, (u64, Version<u64, u64>)>,
) -> VecCollection<'s, SysTime, (u64, Version<u64, u64>)> {
    let p_wm = watermarks(
        probes,
        |(_, c): &(u64, Change<u64>)| c.row,
        |m: &u64| *m,
        "PWm",
    );
    let b_wm = watermarks(
        versions.clone(),
        |(_, v): &(u64, Version<u64, u64>)| v.time,
        |m: &u64| *m,
        "BWm",
    );
    arrange_versions_pruned(versions, p_wm, b_wm, 0, "Pruned")
        .as_collection(|k, v| (*k, version_of(v)))
}

/// 20 keys, one version and one probe row per key and epoch at event time = epoch (lateness 0).
/// The rise at epoch `s` (watermark `s - 1`) keeps each key's version `s - 2` and retracts the
/// older ones at `s + 1`, so at every system time `t >= 3` the arrangement holds exactly the
/// versions `t - 3 ..= t` of every key: 4 per key, where an unpruned one holds `t + 1`.
#[test]
fn pruned_arrangement_holds_a_few_versions_per_key() {
    const KEYS: u64 = 20;
    const EPOCHS: u64 = 30;
    let mut probes: Vec<Epoch<(u64, Change<u64>)>> = Vec::new();
    let mut versions: Vec<Epoch<(u64, Version<u64, u64>)>> = Vec::new();
    for e in 0..EPOCHS {
        let seq = |k: u64| e * KEYS + k;
        probes.push(
            (0..KEYS)
                .map(|k| ((k, Change::new(seq(k), RowKind::Insert, e)), 1))
                .collect(),
        );
        versions.push(
            (0..KEYS)
                .map(|k| ((k, Version::row(e, seq(k), k)), 1))
                .collect(),
        );
    }
    for workers in [1, 2] {
        let out = run_binary(workers, probes.clone(), versions.clone(), pruned);
        for t in 3..EPOCHS {
            let mut expected: Vec<_> = (0..KEYS)
                .flat_map(|k| (t - 3..=t).map(move |e| ((k, Version::row(e, e * KEYS + k, k)), 1)))
                .collect();
            expected.sort();
            assert_eq!(
                content_at(&out, t),
                expected,
                "system time {t} on {workers} workers"
            );
        }
    }
}

/// Rises retracting more versions than a timely message holds (the pruning hands its
/// retractions to the batcher in message-sized pieces): 500 keys with versions at times 0, 1 and
/// 2 in epoch 0 and one at time 10 in epoch 1, a probe row at time 2, then 10 (lateness 0). The
/// rise at epoch 1 (watermark 2) retracts every key's version 0 at epoch 2, the rise at epoch 2
/// (watermark 10) its version 1 at epoch 3: 500 retractions at once each time.
#[test]
fn rises_retracting_many_versions_prune_them_all() {
    const KEYS: u64 = 500;
    let version = |k: u64, t: u64| ((k, Version::row(t, t * KEYS + k, k)), 1);
    let first = (0..KEYS).flat_map(|k| (0..3).map(move |t| version(k, t)));
    let versions = vec![first.collect(), (0..KEYS).map(|k| version(k, 10)).collect()];
    let probe = |seq, t| vec![((0u64, Change::new(seq, RowKind::Insert, t)), 1)];
    let probes: Vec<Epoch<(u64, Change<u64>)>> = vec![probe(0, 2), probe(1, 10)];
    for workers in [1, 2] {
        let out = run_binary(workers, probes.clone(), versions.clone(), pruned);
        let kept = |times: &[u64]| {
            let mut kept: Vec<_> = (0..KEYS)
                .flat_map(|k| times.iter().map(move |&t| version(k, t)))
                .collect();
            kept.sort();
            kept
        };
        let at = |t| content_at(&out, t);
        assert_eq!(at(1), kept(&[0, 1, 2, 10]), "{workers} workers");
        assert_eq!(at(2), kept(&[1, 2, 10]), "{workers} workers");
        assert_eq!(at(3), kept(&[2, 10]), "{workers} workers");
    }
}

/// Allowed lateness of both inputs in the determinism property.
const LATENESS: u8 = 3;

/// The epoch of each row (`times[i]` its event time): rows in event-time order cut at `cuts`,
/// then row `i` delayed by `delays[i]` epochs when no row becomes late under [`LATENESS`] (a
/// row of epoch `e` is late iff its time `<` the largest time of epochs `< e` minus the
/// lateness).
fn arrival(times: &[u8], cuts: &[usize], delays: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by_key(|&i| (times[i], i));
    let mut epoch = vec![0; times.len()];
    for (pos, &i) in order.iter().enumerate() {
        epoch[i] = cuts.iter().filter(|&&c| c <= pos).count();
    }
    let on_time = |epoch: &[usize]| {
        (0..times.len()).all(|j| {
            let before = (0..times.len()).filter(|&k| epoch[k] < epoch[j]);
            let max = before.map(|k| times[k]).max();
            max.is_none_or(|m| times[j] >= m.saturating_sub(LATENESS))
        })
    };
    for (i, d) in delays.iter().enumerate().take(times.len()) {
        let was = epoch[i];
        epoch[i] += d;
        if !on_time(&epoch) {
            epoch[i] = was;
        }
    }
    epoch
}

/// `rows` dealt into epochs as [`arrival`] says.
fn epochs<D: Clone>(rows: &[D], epoch: &[usize]) -> Vec<Epoch<D>> {
    let n = epoch.iter().max().map_or(0, |m| m + 1);
    let mut out = vec![Vec::new(); n];
    for (row, &e) in rows.iter().zip(epoch) {
        out[e].push((row.clone(), 1));
    }
    out
}

type Probe = (u8, Change<(u8, u8)>);
type Build = (u8, Version<u8, u8>);

/// The final-mode LEFT join's content at the end and its late rows, on `workers` workers.
fn final_content(
    build_side: FinalBuild,
    workers: usize,
    p: Vec<Epoch<Probe>>,
    b: Vec<Epoch<Build>>,
) -> Vec<(Result<(u8, Change<((u8, u8), Option<u8>)>), Seq>, isize)> {
    let lower = |m: &u8| m.saturating_sub(LATENESS);
    let out = run_binary(workers, p, b, move |p, b| {
        let p_wm = watermarks(p.clone(), |(_, c): &Probe| c.row.0, lower, "PWm");
        let b_wm = watermarks(b.clone(), |(_, v): &Build| v.time, lower, "BWm");
        let config = JoinConfig::new(JoinKind::Left)
            .residual(residual)
            .named("J");
        let j = build_side.join(p, |r: &(u8, u8)| r.0, b, (p_wm, b_wm), config, 0);
        j.joined.map(Ok).concat(j.late.map(|(_, r)| Err(r.seq)))
    });
    content_at(&out, u64::MAX)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Rows moved across epochs within the allowed lateness (none becomes late): the final-mode
    /// output is the same, on 1 and 2 workers, over the pruned arrangement and over versions of
    /// the join's own, and no row is reported late.
    #[test]
    fn final_mode_output_is_independent_of_arrival_order(
        versions in proptest::collection::vec((0u8..3, 0u8..16, proptest::option::weighted(0.8, 0u8..4)), 0..14),
        probes in proptest::collection::vec((0u8..3, 0u8..16, 0u8..4), 0..14),
        cuts in proptest::collection::vec(proptest::collection::vec(0usize..14, 0..5), 4),
        delays in proptest::collection::vec(proptest::collection::vec(0usize..3, 14), 2),
    ) {
        let versions: Vec<Build> = versions
            .into_iter()
            .enumerate()
            .map(|(i, (k, time, row))| (k, Version { time, seq: i as Seq, row }))
            .collect();
        let probes: Vec<Probe> = probes
            .into_iter()
            .enumerate()
            .map(|(i, (k, t, v))| (k, Change::new(100 + i as Seq, RowKind::Insert, (t, v))))
            .collect();
        let v_times: Vec<u8> = versions.iter().map(|(_, v)| v.time).collect();
        let p_times: Vec<u8> = probes.iter().map(|(_, c)| c.row.0).collect();
        let in_order = (
            epochs(&probes, &arrival(&p_times, &cuts[0], &[])),
            epochs(&versions, &arrival(&v_times, &cuts[1], &[])),
        );
        let shuffled = (
            epochs(&probes, &arrival(&p_times, &cuts[2], &delays[0])),
            epochs(&versions, &arrival(&v_times, &cuts[3], &delays[1])),
        );
        let expected = final_content(Pruned, 1, in_order.0.clone(), in_order.1.clone());
        prop_assert_eq!(expected.len(), probes.len());
        prop_assert!(expected.iter().all(|(r, _)| r.is_ok()));
        for (build_side, workers) in [(Pruned, 1), (Pruned, 2), (Own, 1), (Own, 2)] {
            let out = final_content(build_side, workers, shuffled.0.clone(), shuffled.1.clone());
            prop_assert_eq!(&out, &expected, "{:?} on {} workers", build_side, workers);
        }
    }
}
