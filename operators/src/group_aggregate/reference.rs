//! The sequential model of [`group_aggregate`](super::group_aggregate): at every system time,
//! each group's rows accumulated from scratch and folded once, in `(seq, value)` order.

use std::collections::BTreeMap;

use super::GroupFold;
use crate::testing::Epoch;
use crate::Seq;

/// The aggregated table after each epoch: `tables[s]` is the table at system time `s`, sorted,
/// with the groups `output` refused left out.
pub fn tables<K, F>(epochs: &[Epoch<(K, (Seq, F::Value))>], fold: &F) -> Vec<Vec<F::Output>>
where
    K: Ord + Clone,
    F: GroupFold<K>,
{
    let mut accumulated: BTreeMap<(K, Seq, F::Value), isize> = BTreeMap::new();
    let mut tables = Vec::new();
    for epoch in epochs {
        for ((key, (seq, value)), diff) in epoch {
            *accumulated
                .entry((key.clone(), *seq, value.clone()))
                .or_insert(0) += diff;
        }
        accumulated.retain(|_, diff| *diff != 0);
        let mut groups: BTreeMap<&K, (F::State, isize)> = BTreeMap::new();
        for ((key, _, value), diff) in &accumulated {
            let (state, rows) = groups.entry(key).or_insert_with(|| (fold.init(), 0));
            fold.update(state, value, *diff)
                .expect("the model's folds accept every row");
            *rows += diff;
        }
        let mut table: Vec<F::Output> = groups
            .into_iter()
            .filter(|(_, (_, rows))| *rows > 0)
            .filter_map(|(key, (state, _))| fold.output(key, &state).ok())
            .collect();
        table.sort();
        tables.push(table);
    }
    tables
}
