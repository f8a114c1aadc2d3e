//! The embedding examples (`examples/embed_typed.rs`, `examples/embed_table.rs`, issue 52) run
//! as the README shows them, at 1 and 2 workers: their `run` is called with timely's
//! arguments, and their results are pinned.

#[allow(dead_code)]
#[path = "../examples/embed_typed.rs"]
mod embed_typed;

#[allow(dead_code)]
#[path = "../examples/embed_table.rs"]
mod embed_table;

/// timely's arguments for `workers` threads.
fn args(workers: usize) -> impl Iterator<Item = String> {
    ["example", "-w", &workers.to_string()]
        .map(str::to_string)
        .into_iter()
}

#[test]
fn typed_operators_in_a_users_dataflow() {
    for workers in [1, 2] {
        let totals = embed_typed::run(args(workers)).unwrap();
        // USD: 300 at the late rate 93 (as of time 10) + 200 at 94; CHF: 500 at 105; GBP has
        // no rate (LEFT join); the duplicate deliveries of orders 1 and 2 count once.
        let expected = [("CHF", 1, 52_500), ("GBP", 1, 0), ("USD", 2, 46_700)]
            .map(|(c, n, cents)| (c.to_string(), n, cents));
        assert_eq!(totals, expected, "{workers} worker(s)");
    }
}

#[test]
fn a_sql_plan_in_a_users_dataflow() {
    for workers in [1, 2] {
        let (totals, refused) = embed_table::run(args(workers)).unwrap();
        let total = |currency: &str, orders, cents| embed_table::Total {
            currency: currency.to_string(),
            orders,
            cents: Some(cents),
        };
        assert_eq!(
            totals,
            [total("CHF", 1, 52_500), total("USD", 2, 46_700)],
            "{workers} worker(s)"
        );
        assert_eq!(refused, 0, "{workers} worker(s)");
    }
}
