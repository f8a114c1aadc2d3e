//! Case E05's ordering rules, in SQL and the Table API, on 1 and 2 workers: a sort by the
//! ascending rowtime is accepted (its table is the input's); `ORDER BY .. LIMIT` is a Top-N
//! whose changelog retracts the row pushed out of the top; `ORDER BY` a non-time column or the
//! rowtime descending without a fetch, and `OFFSET` without a fetch, are refused with the reason.
//! (E05's join row, a regular join without an equality, is in `joins.rs`.)

use differential_temporal::expr::col;
use differential_temporal::repr::{DataType, Schema};
use differential_temporal::table::TableEnv;

use super::{changelog_text, env, last_rows};

const ORDERS: &str = "order_id,amount,order_time
1,50,2024-01-01 10:00:00
2,20,2024-01-01 10:01:00
3,70,2024-01-01 10:02:00
4,10,2024-01-01 10:03:00
5,40,2024-01-01 10:04:00
6,30,2024-01-01 10:05:00
7,60,2024-01-01 10:06:00
";

fn orders(workers: usize, dir: &tempfile::TempDir) -> TableEnv {
    let path = dir.path().join("orders.csv");
    std::fs::write(&path, ORDERS).unwrap();
    let env = env(workers);
    env.execute_sql(&format!(
        "CREATE TABLE Orders (order_id BIGINT, amount BIGINT, order_time TIMESTAMP(3),
           WATERMARK FOR order_time AS order_time)
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    env
}

/// `ORDER BY amount LIMIT 5`: the five smallest amounts, each row its own system time; the
/// sixth row enters the top and pushes 70 out (`-D` first), the seventh does not enter it.
#[test]
fn e05_top_n_is_accepted_and_updating() {
    let expected = [
        "+I,1,50,2024-01-01 10:00:00.000",
        "+I,2,20,2024-01-01 10:01:00.000",
        "+I,3,70,2024-01-01 10:02:00.000",
        "+I,4,10,2024-01-01 10:03:00.000",
        "+I,5,40,2024-01-01 10:04:00.000",
        "-D,3,70,2024-01-01 10:02:00.000",
        "+I,6,30,2024-01-01 10:05:00.000",
    ];
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        let env = orders(workers, &dir);
        for query in [
            "SELECT * FROM Orders ORDER BY amount LIMIT 5",
            "SELECT * FROM Orders ORDER BY amount FETCH FIRST 5 ROWS ONLY",
        ] {
            let sql = last_rows(&env, query);
            assert_eq!(changelog_text(&sql), expected, "{query}, {workers} workers");
        }
        let api = env.from("Orders").order_by([col("amount").asc()]).fetch(5);
        assert_eq!(changelog_text(&api.execute().unwrap()), expected);
        // OFFSET with a fetch: the 2nd and 3rd smallest, in both forms.
        let window = [
            "2,20,2024-01-01 10:01:00.000",
            "6,30,2024-01-01 10:05:00.000",
        ];
        let sql = last_rows(
            &env,
            "SELECT * FROM Orders ORDER BY amount LIMIT 2 OFFSET 1",
        );
        assert_eq!(sql.rows_as_text(), window);
        let api = env
            .from("Orders")
            .order_by([col("amount").asc()])
            .offset(1)
            .fetch(2);
        assert_eq!(api.execute().unwrap().rows_as_text(), window);
    }
}

/// `ORDER BY order_time, order_id` with `order_time` the rowtime: accepted, the table is the
/// input's; in explain the sort is over the input, append-only.
#[test]
fn e05_sort_by_ascending_rowtime_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let env = orders(1, &dir);
    let query = "SELECT * FROM Orders ORDER BY order_time, order_id";
    let rows = last_rows(&env, query).rows_as_text();
    assert_eq!(rows.len(), 7);
    assert_eq!(rows[0], "1,50,2024-01-01 10:00:00.000");
    let plan = env.sql_query(query).unwrap().explain().unwrap();
    assert!(
        plan.starts_with("Sort(order=[order_time ASC NULLS FIRST, order_id ASC NULLS FIRST], offset=0, fetch=ALL) -> [order_id BIGINT, amount BIGINT, order_time TIMESTAMP(3)] append-only rowtime=order_time"),
        "{plan}"
    );
}

/// The refused sorts, each with the reason, in SQL and the Table API.
#[test]
fn e05_other_sorts_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let env = orders(1, &dir);
    let error = |query: &str| env.sql_query(query).err().unwrap().to_string();
    let needs_fetch = "Sort: Sort on a non-time-attribute field is not supported: ORDER BY on an unbounded table needs FETCH / LIMIT (a Top-N) or an ascending time attribute as its first key, and the first key is";
    assert_eq!(
        error("SELECT * FROM Orders ORDER BY amount"),
        format!("SQL validation error at line 1, column 31: {needs_fetch} 'amount', not a time attribute")
    );
    assert_eq!(
        error("SELECT * FROM Orders ORDER BY order_time DESC"),
        format!("SQL validation error at line 1, column 31: {needs_fetch} the time attribute 'order_time' descending")
    );
    let no_fetch = "OFFSET without FETCH / LIMIT on an unbounded table is not supported";
    assert!(error("SELECT * FROM Orders ORDER BY amount OFFSET 3").contains(no_fetch));
    assert!(error("SELECT * FROM Orders LIMIT 3")
        .contains("FETCH / LIMIT without ORDER BY is not supported"));
    let api = env.from("Orders").order_by([col("amount").asc()]).offset(3);
    let message = api.execute().unwrap_err().to_string();
    assert!(
        message.starts_with(&format!("offset: Sort: {no_fetch}")),
        "{message}"
    );
    let api = env
        .from("Orders")
        .order_by([col("amount").desc()])
        .execute();
    assert!(api
        .unwrap_err()
        .to_string()
        .contains("'amount', not a time attribute"));
    let api = env.from("Orders").fetch(3).execute();
    assert_eq!(
        api.unwrap_err().to_string(),
        "fetch follows order_by: it limits a sorted table (Flink's orderBy(..).offset(..).fetch(..))"
    );
}

/// NULLs sort first ascending and last descending (NULL is the smallest value), or as NULLS
/// FIRST / LAST say; ties on the keys are ordered by value.
#[test]
fn top_n_null_placement() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "k,v\n1,\n2,5\n3,\n4,7\n").unwrap();
    let env = TableEnv::new();
    let schema = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .column("v", DataType::BigInt.nullable())
        .build()
        .unwrap();
    env.register_csv("T", path.to_str().unwrap(), Some(schema))
        .unwrap();
    let top = |sql: &str| {
        env.sql_query(sql)
            .unwrap()
            .execute()
            .unwrap()
            .rows_as_text()
    };
    assert_eq!(top("SELECT * FROM T ORDER BY v LIMIT 2"), ["1,", "3,"]);
    assert_eq!(
        top("SELECT * FROM T ORDER BY v DESC LIMIT 2"),
        ["2,5", "4,7"]
    );
    assert_eq!(
        top("SELECT * FROM T ORDER BY v NULLS LAST LIMIT 1"),
        ["2,5"]
    );
    let api = env
        .from("T")
        .order_by([col("v").desc().nulls_first()])
        .fetch(1);
    assert_eq!(api.execute().unwrap().rows_as_text(), ["1,"]);
}
