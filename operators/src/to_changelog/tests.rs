use differential_dataflow::consolidation::consolidate_updates;
use proptest::prelude::*;

use super::{pair_changes, reference, to_changelog};
use crate::testing::{run_unary, Epoch};
use crate::{Change, ChangelogMode, RowKind};

#[test]
fn pairs_retractions_with_insertions() {
    use RowKind::*;
    let got = pair_changes(7, &[("a", -1), ("b", 2), ("c", -2)]);
    let want = vec![
        Change::new(7, UpdateBefore, "a"),
        Change::new(7, UpdateAfter, "b"),
        Change::new(7, UpdateBefore, "c"),
        Change::new(7, UpdateAfter, "b"),
        Change::new(7, Delete, "c"),
    ];
    assert_eq!(got, want);
    assert_eq!(
        pair_changes(1, &[("x", 1)]),
        vec![Change::new(1, Insert, "x")]
    );
}

#[test]
fn currency_rates_in_upsert_mode() {
    // The versioned view of issue 2's seed example, as collection changes per epoch.
    let change = |k: &str, v: u32, d: isize| ((k.to_string(), v), d);
    let epochs: Vec<Epoch<(String, u32)>> = vec![
        vec![
            change("Yen", 102, 1),
            change("Euro", 114, 1),
            change("USD", 1, 1),
        ],
        vec![
            change("Euro", 114, -1),
            change("Euro", 119, 1),
            change("Pounds", 107, 1),
        ],
        vec![change("Pounds", 107, -1), change("Pounds", 108, 1)],
    ];
    let out = run_unary(2, epochs, |c| {
        to_changelog(c, ChangelogMode::Upsert, "ToChangelog")
    });
    let mut rows: Vec<_> = out
        .iter()
        .map(|((k, c), t, d)| (*t, c.kind.as_str(), k.as_str(), c.row, *d))
        .collect();
    rows.sort_by_key(|&(t, _, k, _, _)| (t, k));
    assert_eq!(
        rows,
        vec![
            (0, "+I", "Euro", 114, 1),
            (0, "+I", "USD", 1, 1),
            (0, "+I", "Yen", 102, 1),
            (1, "+U", "Euro", 119, 1),
            (1, "+I", "Pounds", 107, 1),
            (2, "+U", "Pounds", 108, 1),
        ]
    );
}

fn arb_epochs() -> impl Strategy<Value = Vec<Epoch<(u8, u8)>>> {
    let change = (
        (0u8..4, 0u8..4),
        prop_oneof![Just(1isize), Just(-1), Just(2)],
    );
    prop::collection::vec(prop::collection::vec(change, 0..8), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn matches_the_reference(epochs in arb_epochs(), upsert in any::<bool>()) {
        let mode = if upsert { ChangelogMode::Upsert } else { ChangelogMode::Retract };
        let mut want: Vec<_> = reference::to_changelog(&epochs, mode)
            .into_iter()
            .map(|(d, t)| (d, t, 1))
            .collect();
        consolidate_updates(&mut want);
        for workers in [1, 2, 4] {
            let got = run_unary(workers, epochs.clone(), move |c| to_changelog(c, mode, "ToChangelog"));
            prop_assert_eq!(&got, &want, "workers = {}", workers);
        }
    }
}
