//! Idle-state retention: the final mode (rule B13, measured on the combined watermark) and the
//! lookup join (rule B17, in system-time epochs), exact outputs of an expiry and agreement with
//! the sequential models on random inputs.

use proptest::prelude::*;

use super::{arb_cuts, arb_inputs, residual, split, ArbKey, FinalBuild, Own, Plain};
use crate::retention::Retention;
use crate::temporal_join::{
    lookup_join, reference, temporal_join_final, JoinConfig, JoinKind, Joined,
};
use crate::testing::{batch, run_binary, Epoch, Updates};
use crate::watermark::{watermarks, Watermark};
use crate::{arrange_versions, Change, RowKind, Seq, Version};

type Probe = Epoch<(char, Change<i64>)>;
type Build = Epoch<(char, Version<i64, char>)>;
type Out = (char, Joined<i64, char>);

/// Probe rows `(seq, key, time)` and build versions `(seq, key, time, row)` per epoch.
fn script() -> (Vec<Probe>, Vec<Build>) {
    let p = |seq, k, t| ((k, Change::new(seq, RowKind::Insert, t)), 1);
    let b = |seq, k, t, r| ((k, Version::row(t, seq, r)), 1);
    let probe = vec![
        vec![p(0, 'a', 2)],
        vec![p(1, 'b', 30)],
        vec![p(2, 'a', 31)],
        vec![p(3, 'a', 33), p(4, 'b', 40)],
    ];
    let build = vec![
        vec![b(10, 'a', 1, '1')],
        vec![b(11, 'b', 30, 'x')],
        vec![b(12, 'a', 32, '2')],
        vec![b(13, 'b', 41, 'y')],
    ];
    (probe, build)
}

/// The final join of `script` with lateness 0 and a retention of `ttl` ms (`None`: off).
fn run(workers: usize, kind: JoinKind, ttl: Option<i64>) -> Updates<Out> {
    let (probe, build) = script();
    run_binary(workers, probe, build, move |p, b| {
        let p_wm = watermarks(
            p.clone(),
            |(_, c): &(char, Change<i64>)| c.row,
            |m: &i64| *m,
            "PWm",
        );
        let b_wm = watermarks(
            b.clone(),
            |(_, v): &(char, Version<i64, char>)| v.time,
            |m: &i64| *m,
            "BWm",
        );
        let build = arrange_versions(b, "Build");
        let time = |t: &i64| *t;
        let config = JoinConfig::new(kind)
            .retention(ttl.map(Retention::millis))
            .named("J");
        let j = temporal_join_final(p, time, build, (p_wm, b_wm), config);
        j.joined
    })
}

/// The model's output on `script` (watermark candidate per epoch: its maximum event time).
fn model(kind: JoinKind, ttl: Option<i64>) -> Updates<Out> {
    let (probe, build) = script();
    let p_wm: Vec<_> = (probe.iter())
        .map(|e| e.iter().map(|((_, c), _)| Watermark::At(c.row)).collect())
        .collect();
    let b_wm: Vec<_> = (build.iter())
        .map(|e| e.iter().map(|((_, v), _)| Watermark::At(v.time)).collect())
        .collect();
    let config = JoinConfig::new(kind).retention(ttl.map(Retention::millis));
    let (joined, late) = reference::final_mode(&probe, &build, (&p_wm, &b_wm), |t| *t, &config);
    assert_eq!(late, vec![]);
    joined
}

/// Watermarks (min of both inputs' maxima of the earlier epochs): W(2) = 30, W(3) = 31,
/// W(4) = 40. At epoch 2 the order `a`@2 fires with `1`, then key `a` expires (2 + 10 < 30):
/// `1` is forgotten. The order `a`@31 (epoch 2) finds no version valid at 31 (`2`@32, which
/// arrived after the expiry, is newer): INNER drops it, LEFT pads it. `a`@33 finds `2`. Key
/// `b` (access 30, expiry 40, never passed before its rows fire) keeps `x`.
#[test]
fn expired_key_forgets_its_versions() {
    let row = |k, seq, t, b, at| ((k, Change::new(seq, RowKind::Insert, (t, b))), at, 1);
    let left = vec![
        row('a', 0, 2, Some('1'), 2),
        row('a', 2, 31, None, 4),
        row('a', 3, 33, Some('2'), 4),
        row('b', 1, 30, Some('x'), 3),
        row('b', 4, 40, Some('x'), 4),
    ];
    let inner: Vec<_> = left
        .iter()
        .filter(|r| r.0 .1.row.1.is_some())
        .cloned()
        .collect();
    for (kind, want) in [(JoinKind::Left, &left), (JoinKind::Inner, &inner)] {
        assert_eq!(&model(kind, Some(10)), want);
        for workers in [1, 2] {
            assert_eq!(&run(workers, kind, Some(10)), want, "{workers} workers");
        }
    }
    // Without a retention (and with one too long to pass) `a`@31 joins `1`.
    let mut kept = left.clone();
    kept[1] = row('a', 2, 31, Some('1'), 4);
    assert_eq!(run(2, JoinKind::Left, None), kept);
    assert_eq!(run(2, JoinKind::Left, Some(100)), kept);
    assert_eq!(model(JoinKind::Left, Some(100)), kept);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random inputs (retractions included), batchings and retentions (0 to 4): the operator
    /// agrees with the model on 1 and 2 workers; so does the join over versions of its own
    /// (pruned, removing an expired key's versions) on the versions never retracted.
    #[test]
    fn final_mode_with_retention_matches_model(
        inputs in arb_inputs(),
        build_cuts in arb_cuts(14, 5),
        probe_cuts in arb_cuts(14, 5),
        left in any::<bool>(),
        ttl in 0u8..5,
    ) {
        let kind = if left { JoinKind::Left } else { JoinKind::Inner };
        let p = batch(&inputs.probes, &probe_cuts);
        let plain = (inputs.build(&build_cuts), Plain);
        let own = (inputs.inserts_only().build(&build_cuts), Own);
        for (b, build_side) in [plain, own] {
            // Watermark = max event time of earlier epochs - 1 (lateness 1).
            let lower = |m: &u8| m.saturating_sub(1);
            let marks = |max: Option<u8>| max.map(|m| Watermark::At(lower(&m))).into_iter().collect::<Vec<_>>();
            let p_wm: Vec<_> = p.iter().map(|e| marks(e.iter().map(|((_, c), _)| c.row.0).max())).collect();
            let b_wm: Vec<_> = b.iter().map(|e| marks(e.iter().map(|((_, v), _)| v.time).max())).collect();
            let retention = Retention::new(move |t: &u8| t.saturating_add(ttl));
            let model = reference::final_mode(&p, &b, (&p_wm, &b_wm), |r: &(u8, u8)| r.0, &JoinConfig::new(kind).residual(residual).retention(retention.clone()));
            for workers in [1, 2] {
                let out = run_binary(workers, p.clone(), b.clone(), move |p, b| {
                    let p_wm = watermarks(p.clone(), |(_, c): &(ArbKey, Change<(u8, u8)>)| c.row.0, lower, "PWm");
                    let b_wm = watermarks(b.clone(), |(_, v): &(ArbKey, Version<u8, u8>)| v.time, lower, "BWm");
                    let retention = Retention::new(move |t: &u8| t.saturating_add(ttl));
                    let config = JoinConfig::new(kind).residual(residual).retention(retention).named("J");
                    let j = FinalBuild::join(build_side, p, |r: &(u8, u8)| r.0, b, (p_wm, b_wm), config, 0);
                    j.joined.map(Ok).concat(j.late.map(|(k, r)| Err((k, r.seq))))
                });
                let out: (Updates<(ArbKey, Joined<(u8, u8), u8>)>, Updates<(ArbKey, Seq)>) = split(out);
                prop_assert_eq!(&out, &model, "{} workers, {:?}", workers, build_side);
            }
        }
    }
}

/// The lookup join with a retention of 2 epochs. Key `a`: rate `1` at epoch 0, orders at
/// epochs 1 (sees `1`) and 4 (nothing touched `a` at epochs 2 and 3: expired at 3, so it finds
/// nothing), rate `2` at epoch 5 and an order at epoch 5 (sees `2`). Key `b` is touched every
/// epoch by its orders and keeps rate `x`.
#[test]
fn lookup_join_forgets_an_idle_key() {
    let p = |seq, k| ((k, Change::new(seq, RowKind::Insert, seq as i64)), 1);
    let b = |seq, k, r| ((k, Version::row(0i64, seq, r)), 1);
    let probe: Vec<Probe> = vec![
        vec![p(0, 'b')],
        vec![p(1, 'a'), p(2, 'b')],
        vec![p(3, 'b')],
        vec![p(4, 'b')],
        vec![p(5, 'a'), p(6, 'b')],
        vec![p(7, 'a')],
    ];
    let build: Vec<Build> = vec![
        vec![b(10, 'a', '1'), b(11, 'b', 'x')],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![b(12, 'a', '2')],
    ];
    let row = |k, seq: u64, r, at| {
        (
            (k, Change::new(seq, RowKind::Insert, (seq as i64, r))),
            at,
            1,
        )
    };
    let want = vec![
        row('a', 1, Some('1'), 1),
        row('a', 5, None, 4),
        row('a', 7, Some('2'), 5),
        row('b', 0, Some('x'), 0),
        row('b', 2, Some('x'), 1),
        row('b', 3, Some('x'), 2),
        row('b', 4, Some('x'), 3),
        row('b', 6, Some('x'), 4),
    ];
    let model = reference::lookup(&probe, &build, JoinKind::Left, |_, _| true, Some(2));
    assert_eq!(model, want);
    for workers in [1, 2] {
        let out = run_binary(workers, probe.clone(), build.clone(), |p, b| {
            let build = arrange_versions(b, "Build");
            lookup_join(
                p,
                build,
                JoinConfig::new(JoinKind::Left)
                    .retention(Retention::epochs(2))
                    .named("L"),
            )
        });
        assert_eq!(out, want, "{workers} workers");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// The lookup join with a random retention (0 = off, 1 to 3 epochs) agrees with the model.
    #[test]
    fn lookup_join_with_retention_matches_model(
        inputs in arb_inputs(),
        build_cuts in arb_cuts(14, 5),
        probe_cuts in arb_cuts(14, 5),
        ttl in 0u64..4,
    ) {
        let (p, b) = (batch(&inputs.probes, &probe_cuts), inputs.build(&build_cuts));
        let model = reference::lookup(&p, &b, JoinKind::Left, residual, Some(ttl));
        for workers in [1, 2] {
            let out = run_binary(workers, p.clone(), b.clone(), move |p, b| {
                let build = arrange_versions(b, "Build");
                lookup_join(p, build, JoinConfig::new(JoinKind::Left).residual(residual).retention((ttl > 0).then(|| Retention::epochs(ttl))).named("L"))
            });
            prop_assert_eq!(&out, &model, "{} workers", workers);
        }
    }
}
