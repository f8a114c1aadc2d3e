//! The idle-source timeout of the final-mode join ([`JoinConfig::idle_timeout`]): a build side
//! that stops sending no longer holds the probe rows until the end of input.

use super::{split, FinalBuild, Own, Pruned};
use crate::temporal_join::{late_versions, JoinConfig, JoinKind, Joined};
use crate::testing::{run_binary, Epoch, Updates};
use crate::watermark::{watermarks, TimeText};
use crate::{Change, RowKind, Seq, SysTime, Version};

type Out = (char, Joined<i64, char>);

/// Probe rows of key `a` at event times 0, 10, 20 (epochs 0-2), then nothing until epoch 10
/// (times 100 and 15); one build version at time 0 (epoch 0), then nothing. Lateness 0.
/// Returns (joined, late seqs) for the idle timeout `timeout` in system times.
fn run(build_side: FinalBuild, workers: usize, timeout: SysTime) -> (Updates<Out>, Updates<Seq>) {
    let p = |seq, t| ((('a'), Change::new(seq, RowKind::Insert, t)), 1);
    let mut probe: Vec<Epoch<(char, Change<i64>)>> = vec![vec![p(0, 0)], vec![p(1, 10)]];
    probe.push(vec![p(2, 20)]);
    probe.extend((3..10).map(|_| Vec::new()));
    probe.push(vec![p(3, 100), p(4, 15)]);
    let build = vec![vec![(('a', Version::row(0i64, 9, 'x')), 1)]];
    let out = run_binary(workers, probe, build, move |p, b| {
        let p_wm = watermarks(
            p.clone(),
            |(_, c): &(char, Change<i64>)| c.row,
            |m| *m,
            "PWm",
        );
        let b_time = |(_, v): &(char, Version<i64, char>)| v.time;
        let b_wm = watermarks(b.clone(), b_time, |m| *m, "BWm");
        let late_builds = late_versions(
            b.clone(),
            p_wm.clone(),
            b_wm.clone(),
            timeout,
            TimeText::default(),
            "Late",
        );
        let config = JoinConfig::new(JoinKind::Inner).idle_timeout(timeout);
        let j = build_side.join(p, |t: &i64| *t, b, (p_wm, b_wm), config, timeout);
        let late = j.late.concat(late_builds).map(|(_, r)| Err(r.seq));
        j.joined.map(Ok).concat(late)
    });
    split(out)
}

/// The joined row of probe row `seq` at time `t` with the version `x`, emitted at `at`.
fn row(seq: Seq, t: i64, at: SysTime) -> (Out, SysTime, isize) {
    (
        ('a', Change::new(seq, RowKind::Insert, (t, Some('x')))),
        at,
        1,
    )
}

#[test]
fn an_idle_build_side_releases_the_probe_rows_after_the_timeout() {
    for (build_side, workers) in [(Pruned, 1), (Pruned, 2), (Own, 1), (Own, 2)] {
        let on = format!("{build_side:?} on {workers} workers");
        // Timeout 3: the build side (last row at epoch 0) is idle from epoch 4, where no input
        // sends anything; the watermark rises to the probe side's 20 there and fires 0 and 10.
        // At epoch 10 the row at 15 is behind it: late. The probe side's 100 fires 20 at 11,
        // and the end of input 100.
        let (joined, late) = run(build_side, workers, 3);
        let want = vec![row(0, 0, 4), row(1, 10, 4), row(2, 20, 11), row(3, 100, 11)];
        assert_eq!((joined, late), (want, vec![(4, 10, 1)]), "{on}");
        // Timeout off: the build side's watermark 0 holds every probe row until the end.
        let (joined, late) = run(build_side, workers, 0);
        let want: Vec<_> = [(0, 0), (1, 10), (2, 20), (3, 100), (4, 15)]
            .into_iter()
            .map(|(seq, t)| row(seq, t, 11))
            .collect();
        assert_eq!((joined, late), (want, vec![]), "{on}");
    }
}
