//! The temporal joins on the worked cases (B01, B02, B06, B09, B13, B15) and against the
//! sequential models over random inputs, batchings and worker counts.

use std::collections::BTreeMap;

use differential_dataflow::VecCollection;
use proptest::prelude::*;

use super::{
    arrange_probe, arrange_versions_pruned, lookup_join, reference, temporal_join,
    temporal_join_final, temporal_join_final_pruned, FinalJoin, JoinConfig, JoinKey, JoinKind,
    Joined, Residual, Watermarks,
};
use crate::testing::{arb_cuts, batch, content_at, run_binary, Epoch, Updates};
use crate::watermark::{no_watermark, watermarks, Watermark};
use crate::{arrange_versions, Change, RowKind, Seq, SysTime, Version};

type Key = String;
/// Probe row of the operator-level cases: (time, val).
type Row = (i64, String);
type Out = (Key, Change<(Row, Option<String>)>);

/// An event script line: (step, input, op, time, key, val), as in the case files.
type Step = (
    u64,
    &'static str,
    &'static str,
    i64,
    &'static str,
    &'static str,
);

/// The four inputs of a script: one epoch per step (`seq` = step), watermark steps as
/// candidates `w + 1` (a Flink watermark `w` says "late iff time <= w"). Build `-U` rows
/// are not versions (rule A5).
struct Script {
    probe: Vec<Epoch<(Key, Change<Row>)>>,
    build: Vec<Epoch<(Key, Version<i64, String>)>>,
    probe_wm: Vec<Epoch<i64>>,
    build_wm: Vec<Epoch<i64>>,
}

fn script(steps: &[Step]) -> Script {
    let n = steps.len();
    let mut s = Script {
        probe: vec![vec![]; n],
        build: vec![vec![]; n],
        probe_wm: vec![vec![]; n],
        build_wm: vec![vec![]; n],
    };
    for (i, &(seq, input, op, time, key, val)) in steps.iter().enumerate() {
        let kind: Option<RowKind> = op.parse().ok();
        match (input, kind) {
            ("wm_left", _) => s.probe_wm[i].push((time + 1, 1)),
            ("wm_right", _) => s.build_wm[i].push((time + 1, 1)),
            ("left", Some(k)) => {
                s.probe[i].push(((key.into(), Change::new(seq, k, (time, val.into()))), 1))
            }
            ("right", Some(RowKind::UpdateBefore)) => {}
            ("right", Some(RowKind::Delete)) => {
                s.build[i].push(((key.into(), Version::delete(time, seq)), 1))
            }
            ("right", Some(_)) => {
                s.build[i].push(((key.into(), Version::row(time, seq, val.into())), 1))
            }
            other => panic!("bad script line {other:?}"),
        }
    }
    s
}

/// Runs the final mode over a script on `workers` workers: (joined, late seqs).
///
/// Each input's watermark collection is its explicit watermark steps plus a `Min` mark per epoch
/// with data ([`no_watermark`]), so the end of input falls after the last epoch of either.
fn run_final(workers: usize, s: &Script, kind: JoinKind) -> (Updates<Out>, Updates<Seq>) {
    type L = Result<(Key, Change<Row>), i64>;
    type R = Result<(Key, Version<i64, String>), i64>;
    fn tag<D: Clone>(data: &[Epoch<D>], wm: &[Epoch<i64>]) -> Vec<Epoch<Result<D, i64>>> {
        let data = data.iter().map(|e| {
            e.iter()
                .map(|(d, r)| (Ok(d.clone()), *r))
                .collect::<Vec<_>>()
        });
        let wm = wm.iter().map(|e| e.iter().map(|(w, r)| (Err(*w), *r)));
        data.zip(wm)
            .map(|(mut d, w)| {
                d.extend(w);
                d
            })
            .collect()
    }
    let (left, right) = (tag(&s.probe, &s.probe_wm), tag(&s.build, &s.build_wm));
    let out = run_binary(workers, left, right, move |l, r| {
        let probe = l.clone().flat_map(|x: L| x.ok());
        let build = r.clone().flat_map(|x: R| x.ok());
        let probe_wm = wm(l.flat_map(|x: L| x.err())).concat(no_watermark(probe.clone(), "P"));
        let build_wm = wm(r.flat_map(|x: R| x.err())).concat(no_watermark(build.clone(), "B"));
        let build = arrange_versions(build, "Build");
        let j = temporal_join_final(
            probe,
            |p: &Row| p.0,
            build,
            (probe_wm, build_wm),
            JoinConfig::new(kind).named("J"),
        );
        j.joined.map(Ok).concat(j.late.map(|(_, r)| Err(r.seq)))
    });
    split(out)
}

/// The watermark collection of explicit watermark values.
fn wm(c: VecCollection<'_, SysTime, i64>) -> VecCollection<'_, SysTime, Watermark<i64>> {
    watermarks(c, |t: &i64| *t, |m: &i64| *m, "Explicit")
}

fn split<A: Ord + Clone, B: Ord + Clone>(out: Updates<Result<A, B>>) -> (Updates<A>, Updates<B>) {
    let ok = out
        .iter()
        .filter_map(|(x, t, r)| x.clone().ok().map(|a| (a, *t, *r)))
        .collect();
    let err = out
        .iter()
        .filter_map(|(x, t, r)| x.clone().err().map(|b| (b, *t, *r)))
        .collect();
    (ok, err)
}

/// An expected output row: (systime, kind, seq, probe time, key, probe val, build val).
type Expect = (
    SysTime,
    RowKind,
    Seq,
    i64,
    &'static str,
    &'static str,
    Option<&'static str>,
);

fn expected(rows: &[Expect]) -> Updates<Out> {
    let mut out: Updates<Out> = rows
        .iter()
        .map(|&(at, kind, seq, t, k, v, b)| {
            let row = ((t, v.to_string()), b.map(String::from));
            ((k.to_string(), Change::new(seq, kind, row)), at, 1)
        })
        .collect();
    out.sort();
    out
}

/// The incremental join over a script (watermarks ignored): its final content.
fn incremental_final_content(s: &Script, kind: JoinKind) -> Vec<(Out, isize)> {
    let out = run_binary(2, s.probe.clone(), s.build.clone(), move |p, b| {
        let probe = arrange_probe(p, |r: &Row| r.0, "Probe");
        temporal_join(
            probe,
            arrange_versions(b, "Build"),
            JoinConfig::new(kind).named("J"),
        )
    });
    content_at(&out, SysTime::MAX)
}

fn as_content(rows: &Updates<Out>) -> Vec<(Out, isize)> {
    content_at(rows, SysTime::MAX)
}

const B01: [Step; 21] = [
    (1, "wm_left", "", 0, "", ""),
    (2, "wm_right", "", 0, "", ""),
    (3, "left", "+I", 1, "k1", "1a1"),
    (4, "right", "+I", 2, "k1", "1a2"),
    (5, "wm_left", "", 2, "", ""),
    (6, "wm_right", "", 2, "", ""),
    (7, "left", "+I", 3, "k1", "1a3"),
    (8, "right", "+I", 4, "k2", "2a4"),
    (9, "wm_left", "", 5, "", ""),
    (10, "wm_right", "", 5, "", ""),
    (11, "left", "+I", 6, "k2", "2a3"),
    (12, "right", "-U", 7, "k2", "2a4"),
    (13, "right", "+U", 7, "k2", "2a5"),
    (14, "wm_left", "", 8, "", ""),
    (15, "wm_right", "", 9, "", ""),
    (16, "left", "+I", 9, "k2", "5a11"),
    (17, "left", "+I", 11, "k2", "5a12"),
    (18, "right", "-D", 9, "k2", "2a5"),
    (19, "right", "+I", 10, "k2", "2a6"),
    (20, "wm_left", "", 13, "", ""),
    (21, "wm_right", "", 13, "", ""),
];

#[test]
fn b01_version_choice_and_watermark_emission() {
    use RowKind::Insert as I;
    // Step n is epoch n - 1; a watermark of epoch e is in force from epoch e + 1. Flink's
    // `emitted_at_wm` 2, 5, 8, 9, 13 are the epochs after steps 6, 10, 15, 20, 21.
    let s = script(&B01);
    let inner = expected(&[
        (10, I, 7, 3, "k1", "1a3", Some("1a2")),
        (15, I, 11, 6, "k2", "2a3", Some("2a4")),
        (21, I, 17, 11, "k2", "5a12", Some("2a6")),
    ]);
    let left = expected(&[
        (6, I, 3, 1, "k1", "1a1", None),
        (10, I, 7, 3, "k1", "1a3", Some("1a2")),
        (15, I, 11, 6, "k2", "2a3", Some("2a4")),
        (20, I, 16, 9, "k2", "5a11", None),
        (21, I, 17, 11, "k2", "5a12", Some("2a6")),
    ]);
    for workers in [1, 2] {
        assert_eq!(
            run_final(workers, &s, JoinKind::Inner),
            (inner.clone(), vec![])
        );
        assert_eq!(
            run_final(workers, &s, JoinKind::Left),
            (left.clone(), vec![])
        );
    }
    // Nothing is late: the incremental join consolidates to the same rows.
    assert_eq!(
        incremental_final_content(&s, JoinKind::Inner),
        as_content(&inner)
    );
    assert_eq!(
        incremental_final_content(&s, JoinKind::Left),
        as_content(&left)
    );
}

#[test]
fn b02_probe_kind_is_forwarded() {
    use RowKind::{Insert as I, UpdateAfter as U};
    let mut steps = B01;
    steps[6].2 = "+U"; // left +U 3 k1 1a3
    steps[11] = (12, "wm_left", "", 5, "", ""); // B02 has no -U on the build side
    let s = script(&steps);
    let left = expected(&[
        (6, I, 3, 1, "k1", "1a1", None),
        (10, U, 7, 3, "k1", "1a3", Some("1a2")),
        (15, I, 11, 6, "k2", "2a3", Some("2a4")),
        (20, I, 16, 9, "k2", "5a11", None),
        (21, I, 17, 11, "k2", "5a12", Some("2a6")),
    ]);
    let inner: Updates<Out> = left
        .iter()
        .filter(|r| r.0 .1.row.1.is_some())
        .cloned()
        .collect();
    assert_eq!(run_final(2, &s, JoinKind::Left), (left.clone(), vec![]));
    assert_eq!(run_final(2, &s, JoinKind::Inner), (inner.clone(), vec![]));
    assert_eq!(
        incremental_final_content(&s, JoinKind::Left),
        as_content(&left)
    );
    assert_eq!(
        incremental_final_content(&s, JoinKind::Inner),
        as_content(&inner)
    );
}

#[test]
fn b06_equal_time_boundary() {
    use RowKind::Insert as I;
    let s = script(&[
        (1, "wm_left", "", 0, "", ""),
        (2, "wm_right", "", 0, "", ""),
        (3, "right", "+I", 2, "k1", "2a2"),
        (4, "left", "+I", 2, "k1", "1a2"),
        (5, "wm_left", "", 2, "", ""),
        (6, "wm_right", "", 2, "", ""),
        (7, "right", "-D", 4, "k1", "2a2"),
        (8, "left", "+I", 4, "k1", "1a4"),
        (9, "wm_left", "", 4, "", ""),
        (10, "wm_right", "", 4, "", ""),
    ]);
    let inner = expected(&[(6, I, 4, 2, "k1", "1a2", Some("2a2"))]);
    let left = expected(&[
        (6, I, 4, 2, "k1", "1a2", Some("2a2")),
        (10, I, 8, 4, "k1", "1a4", None),
    ]);
    assert_eq!(run_final(2, &s, JoinKind::Inner), (inner.clone(), vec![]));
    assert_eq!(run_final(2, &s, JoinKind::Left), (left.clone(), vec![]));
    assert_eq!(
        incremental_final_content(&s, JoinKind::Inner),
        as_content(&inner)
    );
    assert_eq!(
        incremental_final_content(&s, JoinKind::Left),
        as_content(&left)
    );
}

#[test]
fn late_probe_rows_are_reported_not_joined() {
    // B9: a probe row behind the combined watermark on arrival is late, INNER and LEFT alike.
    let s = script(&[
        (1, "right", "+I", 1, "k1", "r1"),
        (2, "wm_left", "", 5, "", ""),
        (3, "wm_right", "", 5, "", ""),
        (4, "left", "+I", 5, "k1", "late"),
        (5, "left", "+I", 6, "k1", "ok"),
    ]);
    let left = expected(&[(5, RowKind::Insert, 5, 6, "k1", "ok", Some("r1"))]);
    assert_eq!(run_final(2, &s, JoinKind::Left), (left, vec![(4, 3, 1)]));
}

/// A NULL key matches nothing, not even a build version with a NULL key (SQL's rule, not
/// Flink's): INNER drops the probe row, LEFT pads it, in all three joins.
#[test]
fn null_keys_never_match() {
    type K = Option<u8>;
    let probe: Vec<Epoch<(K, Change<i64>)>> = vec![vec![
        ((Some(1), Change::new(0, RowKind::Insert, 10)), 1),
        ((None, Change::new(1, RowKind::Insert, 10)), 1),
    ]];
    let build: Vec<Epoch<(K, Version<i64, char>)>> = vec![vec![
        ((Some(1), Version::row(5, 2, 'x')), 1),
        ((None, Version::row(5, 3, 'y')), 1),
    ]];
    let row = |k: K, seq, b| ((k, Change::new(seq, RowKind::Insert, (10, b))), 0, 1);
    for kind in [JoinKind::Inner, JoinKind::Left] {
        let mut want = vec![row(Some(1), 0, Some('x'))];
        if kind == JoinKind::Left {
            want.insert(0, row(None, 1, None));
        }
        let incremental = run_binary(2, probe.clone(), build.clone(), move |p, b| {
            let p = arrange_probe(p, |t: &i64| *t, "Probe");
            temporal_join(
                p,
                arrange_versions(b, "Build"),
                JoinConfig::new(kind).named("J"),
            )
        });
        assert_eq!(incremental, want);
        assert_eq!(
            reference::incremental(&probe, &build, |t| *t, kind, |_, _| true),
            want
        );
        let lookup = run_binary(2, probe.clone(), build.clone(), move |p, b| {
            lookup_join(
                p,
                arrange_versions(b, "Build"),
                JoinConfig::new(kind).named("L"),
            )
        });
        assert_eq!(lookup, want);
        let last = run_binary(2, probe.clone(), build.clone(), move |p, b| {
            let (p_wm, b_wm) = (no_watermark(p.clone(), "P"), no_watermark(b.clone(), "B"));
            let build = arrange_versions(b, "Build");
            temporal_join_final(
                p,
                |t: &i64| *t,
                build,
                (p_wm, b_wm),
                JoinConfig::new(kind).named("J"),
            )
            .joined
        });
        let at_end: Vec<_> = want.iter().map(|(d, _, r)| (d.clone(), 1, *r)).collect();
        assert_eq!(last, at_end);
    }
}

mod bounded;
mod idle;
mod retention;
mod sql_cases;

/// A key of the property tests: `None` is NULL (it matches nothing, NULL included).
type ArbKey = Option<u8>;

/// Random build and probe inputs of the property tests, before their cut into epochs.
#[derive(Clone, Debug)]
struct Inputs {
    /// Build versions in arrival order, each with the number of epochs after its own at which it
    /// is retracted again (`None`: never).
    versions: Vec<((ArbKey, Version<u8, u8>), Option<usize>)>,
    probes: Vec<(ArbKey, Change<(u8, u8)>)>,
}

impl Inputs {
    /// The build epochs: the versions cut at `cuts`, then each retraction (diff `-1`) in its
    /// epoch, after as many empty epochs as the latest one needs.
    fn build(&self, cuts: &[usize]) -> Vec<Epoch<(ArbKey, Version<u8, u8>)>> {
        let versions: Vec<_> = self.versions.iter().map(|(v, _)| v.clone()).collect();
        let mut epochs = batch(&versions, cuts);
        for (p, (v, delay)) in self.versions.iter().enumerate() {
            if let Some(delay) = delay {
                // The epoch of version `p`: the number of cuts at or before `p`.
                let e = cuts.iter().filter(|&&c| c <= p).count() + delay;
                epochs.resize(epochs.len().max(e + 1), Vec::new());
                epochs[e].push((v.clone(), -1));
            }
        }
        epochs
    }

    /// The same versions, none of them retracted.
    fn inserts_only(&self) -> Inputs {
        let versions = self.versions.iter().map(|(v, _)| (v.clone(), None));
        Inputs {
            versions: versions.collect(),
            probes: self.probes.clone(),
        }
    }
}

/// Random inputs for the property tests: build versions (~20% deletes, ~20% retracted again 1
/// or 2 epochs after their arrival) and probe changes over few keys (NULL among them) and times
/// (many ties), in a random arrival order.
fn arb_inputs() -> impl Strategy<Value = Inputs> {
    let key = || proptest::option::weighted(0.85, 0u8..3);
    let version = (
        key(),
        0u8..8,
        proptest::option::weighted(0.8, 0u8..4),
        proptest::option::weighted(0.2, 1usize..3),
    );
    let probe = (key(), 0u8..8, 0u8..4, 0usize..4);
    (
        proptest::collection::vec(version, 0..14),
        proptest::collection::vec(probe, 0..14),
    )
        .prop_map(|(vs, ps)| {
            let versions = vs
                .into_iter()
                .enumerate()
                .map(|(i, (k, t, row, retract))| {
                    let seq = i as Seq;
                    ((k, Version { time: t, seq, row }), retract)
                })
                .collect();
            let probes = ps
                .into_iter()
                .enumerate()
                .map(|(i, (k, t, v, kind))| {
                    (k, Change::new(100 + i as Seq, RowKind::ALL[kind], (t, v)))
                })
                .collect();
            Inputs { versions, probes }
        })
}

/// Which build side a final-mode join reads: the plain versions arrangement, the B11-pruned
/// one, or versions of its own (pruned too); on versions never retracted behind the watermark
/// all three give the same output.
#[derive(Clone, Copy, Debug)]
pub(super) enum FinalBuild {
    Plain,
    Pruned,
    Own,
}
pub(super) use FinalBuild::{Own, Plain, Pruned};

impl FinalBuild {
    /// The final-mode join of `probe` and the versions `build` on this build side (the pruned
    /// arrangement's idle timeout `idle_timeout`, as `config`'s).
    pub(super) fn join<'s, K, E, P, B, T, R>(
        self,
        probe: VecCollection<'s, SysTime, (K, Change<P>)>,
        probe_time: T,
        build: VecCollection<'s, SysTime, (K, Version<E, B>)>,
        marks: Watermarks<'s, E>,
        config: JoinConfig<R, E>,
        idle_timeout: SysTime,
    ) -> FinalJoin<'s, K, (K, Joined<P, B>)>
    where
        K: differential_dataflow::ExchangeData
            + differential_dataflow::Hashable
            + JoinKey
            + std::hash::Hash,
        E: differential_dataflow::ExchangeData,
        P: differential_dataflow::ExchangeData,
        B: differential_dataflow::ExchangeData,
        T: Fn(&P) -> E + 'static,
        R: Residual<P, B>,
    {
        match self {
            Plain => {
                let build = arrange_versions(build, "Build");
                temporal_join_final(probe, probe_time, build, marks, config)
            }
            Pruned => {
                let (p_wm, b_wm) = (marks.0.clone(), marks.1.clone());
                let build = arrange_versions_pruned(build, p_wm, b_wm, idle_timeout, "Build");
                temporal_join_final(probe, probe_time, build, marks, config)
            }
            Own => temporal_join_final_pruned(probe, probe_time, build, marks, config),
        }
    }
}

fn residual(p: &(u8, u8), b: &u8) -> bool {
    !(p.1 + b).is_multiple_of(3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn incremental_matches_model_at_every_time(
        inputs in arb_inputs(),
        build_cuts in arb_cuts(14, 5),
        probe_cuts in arb_cuts(14, 5),
        left in any::<bool>(),
    ) {
        let kind = if left { JoinKind::Left } else { JoinKind::Inner };
        let (p, b) = (batch(&inputs.probes, &probe_cuts), inputs.build(&build_cuts));
        let model = reference::incremental(&p, &b, |r: &(u8, u8)| r.0, kind, residual);
        for workers in [1, 2, 4] {
            let out = run_binary(workers, p.clone(), b.clone(), move |p, b| {
                let probe = arrange_probe(p, |r: &(u8, u8)| r.0, "Probe");
                temporal_join(probe, arrange_versions(b, "Build"), JoinConfig::new(kind).residual(residual).named("J"))
            });
            prop_assert_eq!(&out, &model);
        }
    }

    #[test]
    fn final_mode_matches_model(
        inputs in arb_inputs(),
        build_cuts in arb_cuts(14, 5),
        probe_cuts in arb_cuts(14, 5),
        left in any::<bool>(),
    ) {
        let kind = if left { JoinKind::Left } else { JoinKind::Inner };
        let p = batch(&inputs.probes, &probe_cuts);
        // The plain build arrangement on the versions and their retractions; the pruned ones
        // (rule B11: the arrangement or the join's own versions) on the versions alone: they are
        // exact only while no version behind the combined watermark is retracted (the
        // versions that would uncover may be pruned).
        let plain = (inputs.build(&build_cuts), &[(1, Plain), (2, Plain), (4, Plain)][..]);
        let pruned = [(1, Pruned), (2, Pruned), (1, Own), (2, Own), (4, Own)];
        let pruned = (inputs.inserts_only().build(&build_cuts), &pruned[..]);
        for (b, configs) in [plain, pruned] {
            // Watermark = max event time of earlier epochs - 1 (lateness 1).
            let lower = |m: &u8| m.saturating_sub(1);
            let marks = |max: Option<u8>| max.map(|m| Watermark::At(lower(&m))).into_iter().collect::<Vec<_>>();
            let p_wm: Vec<_> = p.iter().map(|e| marks(e.iter().map(|((_, c), _)| c.row.0).max())).collect();
            let b_wm: Vec<_> = b.iter().map(|e| marks(e.iter().map(|((_, v), _)| v.time).max())).collect();
            let model = reference::final_mode(&p, &b, (&p_wm, &b_wm), |r: &(u8, u8)| r.0, &JoinConfig::new(kind).residual(residual));
            for &(workers, build_side) in configs {
                let out = run_binary(workers, p.clone(), b.clone(), move |p, b| {
                    let p_wm = watermarks(p.clone(), |(_, c): &(ArbKey, Change<(u8, u8)>)| c.row.0, lower, "PWm");
                    let b_wm = watermarks(b.clone(), |(_, v): &(ArbKey, Version<u8, u8>)| v.time, lower, "BWm");
                    let config = JoinConfig::new(kind).residual(residual).named("J");
                    let j = build_side.join(p, |r: &(u8, u8)| r.0, b, (p_wm, b_wm), config, 0);
                    j.joined.map(Ok).concat(j.late.map(|(k, r)| Err((k, r.seq))))
                });
                prop_assert_eq!(&split(out), &model, "{} workers, {:?}", workers, build_side);
            }
        }
    }

    #[test]
    fn lookup_join_matches_model(
        inputs in arb_inputs(),
        build_cuts in arb_cuts(14, 5),
        probe_cuts in arb_cuts(14, 5),
    ) {
        let (p, b) = (batch(&inputs.probes, &probe_cuts), inputs.build(&build_cuts));
        let model = reference::lookup(&p, &b, JoinKind::Left, residual, None);
        for workers in [1, 2] {
            let out = run_binary(workers, p.clone(), b.clone(), move |p, b| {
                lookup_join(p, arrange_versions(b, "Build"), JoinConfig::new(JoinKind::Left).residual(residual).named("L"))
            });
            prop_assert_eq!(&out, &model);
        }
    }
}

/// Folds a changelog of `(order id -> row)` into the table an upsert sink keyed by order id
/// holds at the end (`+I`/`+U` set the row, `-U`/`-D` remove it), in `(seq, kind)` order.
pub(super) fn upsert_sink<R: Clone>(mut rows: Vec<(u64, Change<R>)>) -> BTreeMap<u64, R> {
    rows.sort_by_key(|(_, c)| (c.seq, c.kind));
    let mut table = BTreeMap::new();
    for (id, c) in rows {
        if c.kind.is_accumulate() {
            table.insert(id, c.row);
        } else {
            table.remove(&id);
        }
    }
    table
}
