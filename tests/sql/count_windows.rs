//! Row-count group windows (issue 12) in the Table API: `Tumble::over(rows(n))` and
//! `Slide::over(rows(n)).every(rows(m))` on a `PROCTIME()` attribute, per key and over the whole
//! table, overlapping and gapped, exact and the same in both modes on 1 and 2 workers; and the
//! refusals (a row-count window on the rowtime, size 0, mixed size and slide, window
//! properties, no group_by).

use differential_temporal::expr::{col, Expr};
use differential_temporal::render::ExecutionMode;
use differential_temporal::table::{millis, rows, GroupWindow, Slide, TableEnv, Tumble};

use super::proctime_windows::clicks_env;
use super::{changelog_text, orders_env};

/// The changelog of `SELECT keys, SUM(n) GROUP BY window, keys` over Clicks.
fn sums(env: &TableEnv, window: GroupWindow, keys: &[&str]) -> Vec<String> {
    let mut group: Vec<Expr> = vec![col("w")];
    let mut items: Vec<Expr> = Vec::new();
    for k in keys {
        group.push(col(*k));
        items.push(col(*k));
    }
    items.push(col("n").sum().alias("total"));
    let table = (env.from("Clicks"))
        .window(window.on(col("pt")).alias("w"))
        .group_by(group)
        .select(items);
    changelog_text(&table.execute().unwrap())
}

#[test]
fn row_count_windows_fire_on_their_last_row() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        for workers in [1, 2] {
            let env = clicks_env(&dir, workers, mode);
            let label = format!("{mode:?} on {workers} workers");
            // Per user, every 2 rows: a's 1,3 and 4,6 (7 waits), b's 2,5 (8 waits).
            assert_eq!(
                sums(&env, Tumble::over(rows(2)), &["user"]),
                vec!["+I,a,4", "+I,b,7", "+I,a,10"],
                "{label}"
            );
            // Per user, 3 rows every 2: a's 1,3,4 and 4,6,7; b's 2,5,8.
            assert_eq!(
                sums(&env, Slide::over(rows(3)).every(rows(2)), &["user"]),
                vec!["+I,a,8", "+I,a,17", "+I,b,15"],
                "{label}"
            );
            // The whole table, 2 rows every 3: rows 1,2 and 4,5 and 7,8 (3 and 6 in none).
            assert_eq!(
                sums(&env, Slide::over(rows(2)).every(rows(3)), &[]),
                vec!["+I,3", "+I,9", "+I,15"],
                "{label}"
            );
        }
    }
}

#[test]
fn row_count_window_misuse_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let env = clicks_env(&dir, 1, ExecutionMode::Incremental);
    let error = |window: GroupWindow, time: &str, items: Vec<Expr>| {
        let table = (env.from("Clicks"))
            .window(window.on(col(time)).alias("w"))
            .group_by([col("w")])
            .select(items);
        table.execute().err().map(|e| e.to_string())
    };
    let count = || vec![col("n").count().alias("c")];
    assert_eq!(
        error(Tumble::over(rows(0)), "pt", count()).unwrap(),
        "window(..).group_by(..).select: CountWindowAggregate: Count window parameters must satisfy slide > 0 and size > 0, but got slide 0 rows and size 0 rows."
    );
    assert_eq!(
        error(Slide::over(rows(2)).every(millis(5)), "pt", count()).unwrap(),
        "window(..).group_by(..).select: WindowAggregate: Sliding window expects same type of size and slide."
    );
    assert_eq!(
        error(Tumble::over(rows(2)), "user", count()).unwrap(),
        "window(..).group_by(..).select: CountWindowAggregate: a row-count window is defined over a processing time attribute, but 'user' (STRING) is not one (declare it AS PROCTIME())"
    );
    assert_eq!(
        error(Tumble::over(rows(2)), "pt", vec![col("w").end()]).unwrap(),
        "window(..).group_by(..).select: WindowAggregate: a row-count window has no start, end or rowtime, so 'w' can only be grouped by (size 2 rows, slide 2 rows)"
    );
    let rows_alone = (env.from("Clicks"))
        .window(Tumble::over(rows(2)).on(col("pt")).alias("w"))
        .select([col("n")]);
    assert_eq!(
        rows_alone.execute().err().map(|e| e.to_string()).unwrap(),
        "window(..).select: WindowTableFunction: a row-count window's rows cannot be read without group_by (it is a group window only)"
    );
    // Flink refuses row-count windows on event time, in its words.
    let orders = orders_env(1, ExecutionMode::Incremental);
    let on_rowtime = (orders.from("Orders"))
        .window(Tumble::over(rows(2)).on(col("rowtime")).alias("w"))
        .group_by([col("w")])
        .select([col("b").sum()]);
    assert_eq!(
        on_rowtime.execute().err().map(|e| e.to_string()).unwrap(),
        "window(..).group_by(..).select: CountWindowAggregate: Event-time grouping windows on row intervals in a stream environment are currently not supported."
    );
}
