//! GROUP BY with counter aggregates (COUNT, exact SUM / AVG), the form whose groups keep a few
//! integer words: NULL and NOT NULL keys and columns, quantities shared between aggregates of
//! one column, overflow of a total (the row refused, the group left as it was) and of a result
//! type (the group without a row), integer rows packed on the stack, and more counters than the
//! compact layout holds.

use differential_temporal::expr::{col, count_star, Expr};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Schema};

use super::{changelog_text, env, write};

/// The refusal of a row that takes an aggregate's total past the result type `ty`.
fn overflow_of(ty: &str) -> String {
    format!("numeric overflow in 'the aggregate's accumulator': the result does not fit {ty}")
}

/// `SELECT k, aggregates.. FROM T GROUP BY k` over the CSV `text` read with `schema`, in
/// incremental mode on `workers` workers: the changelog as text and the refused rows as
/// `(seq, reason)`.
fn group_by_k(
    text: &str,
    schema: &Schema,
    workers: usize,
    aggregates: impl IntoIterator<Item = Expr>,
) -> (Vec<String>, Vec<(u64, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t.csv", text);
    let env = env(workers, ExecutionMode::Incremental);
    env.register_csv("T", &path, Some(schema.clone())).unwrap();
    let result = env
        .from("T")
        .group_by([col("k")])
        .select(std::iter::once(col("k")).chain(aggregates))
        .execute()
        .unwrap();
    let refused = (result.refused().iter())
        .map(|(_, r)| (r.seq, r.reason.to_string()))
        .collect();
    (changelog_text(&result), refused)
}

/// A counter GROUP BY whose exact SUM's accumulator would overflow (two DECIMAL(38, 0) values
/// past 128 bits): the row is refused with its position, and COUNT(*), updated before the SUM,
/// is rolled back, so the group keeps the value of the rows it accepted.
#[test]
fn a_counter_row_that_overflows_its_sum_leaves_the_group_as_it_was() {
    let big = "9".repeat(38);
    let text = format!("k,d\n1,{big}\n1,{big}\n1,-1\n");
    let schema = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .column("d", DataType::decimal(38, 0).unwrap().not_null())
        .build()
        .unwrap();
    let (first, last) = (format!("1,1,{big}"), format!("1,2,{}8", "9".repeat(37)));
    let overflow = overflow_of("DECIMAL(38, 0)");
    for workers in [1, 2] {
        let aggregates = [count_star().alias("n"), col("d").sum().alias("s")];
        let (changelog, refused) = group_by_k(&text, &schema, workers, aggregates);
        let expected = [
            format!("+I,{first}"),
            format!("-U,{first}"),
            format!("+U,{last}"),
        ];
        assert_eq!(changelog, expected, "{workers} workers");
        // The second row (line 3) took the accumulator past 128 bits.
        assert_eq!(refused, [(3, overflow.to_string())], "{workers} workers");
    }
}

/// A GROUP BY on one integer column with only counters (COUNT, exact SUM / AVG), the form
/// rendered with an `i64` key and columns read in place: a NULL key is a group, a negative
/// TINYINT keeps its sign, COUNT(v) skips NULLs, a SUM that overflows BIGINT leaves its group
/// without a row (reported refused) until a later row brings it back into range, and an
/// all-NULL SUM / AVG is NULL.
#[test]
fn integer_key_counters_keep_nulls_signs_and_overflow() {
    let text = "k,v,d\n-3,9223372036854775807,1.50\n,5,2.25\n-3,1,\n-3,-1,0.25\n7,,\n";
    let schema = Schema::builder()
        .column("k", DataType::TinyInt.nullable())
        .column("v", DataType::BigInt.nullable())
        .column("d", DataType::decimal(10, 2).unwrap().nullable())
        .build()
        .unwrap();
    let overflow = overflow_of("BIGINT");
    for workers in [1, 2] {
        let aggregates = [
            count_star().alias("n"),
            col("v").count().alias("nv"),
            col("v").sum().alias("sv"),
            col("d").sum().alias("sd"),
            col("d").avg().alias("ad"),
        ];
        let (changelog, refused) = group_by_k(text, &schema, workers, aggregates);
        assert_eq!(
            changelog,
            [
                "+I,-3,1,1,9223372036854775807,1.50,1.500000",
                "+I,,1,1,5,2.25,2.250000",
                "-D,-3,1,1,9223372036854775807,1.50,1.500000",
                "+I,-3,3,3,9223372036854775807,1.75,0.875000",
                "+I,7,1,0,,,",
            ],
            "{workers} workers"
        );
        // The third row (line 4) took the SUM past BIGINT.
        assert_eq!(refused, [(4, overflow.to_string())], "{workers} workers");
    }
}

/// A GROUP BY on one integer column whose aggregates are all integers (COUNT(*), SUM and AVG of
/// a BIGINT), the form whose output rows are packed on the stack: a NULL key, a SUM past BIGINT
/// (the group without a row until it is back in range), an all-NULL SUM / AVG (NULL), and a
/// row wider than the inline bytes (nine-byte key, SUM and AVG).
#[test]
fn integer_key_integer_counters_keep_nulls_overflow_and_wide_rows() {
    let text = "k,v\n-3,9223372036854775807\n,5\n-3,1\n-3,-1\n7,\n4294967296,-4294967296\n";
    let schema = Schema::builder()
        .column("k", DataType::BigInt.nullable())
        .column("v", DataType::BigInt.nullable())
        .build()
        .unwrap();
    let overflow = overflow_of("BIGINT");
    for workers in [1, 2] {
        let aggregates = [
            count_star().alias("n"),
            col("v").sum().alias("sv"),
            col("v").avg().alias("av"),
        ];
        let (changelog, refused) = group_by_k(text, &schema, workers, aggregates);
        assert_eq!(
            changelog,
            [
                "+I,-3,1,9223372036854775807,9223372036854775807",
                "+I,,1,5,5",
                "-D,-3,1,9223372036854775807,9223372036854775807",
                "+I,-3,3,9223372036854775807,3074457345618258602",
                "+I,7,1,,",
                "+I,4294967296,1,-4294967296,-4294967296",
            ],
            "{workers} workers"
        );
        // The third row (line 4) took the SUM past BIGINT.
        assert_eq!(refused, [(4, overflow.to_string())], "{workers} workers");
    }
}

/// Two DECIMAL(38, s) totals overflowing on the same row: the row is refused with the error of
/// the first aggregate in the query's order (here the one over the later column), and the
/// group is left as it was for the next row.
#[test]
fn a_row_overflowing_two_totals_is_refused_as_the_first_aggregate() {
    let (a, b) = ("9".repeat(38), format!("{}.99", "9".repeat(36)));
    let text = format!("k,a,b\n1,{a},{b}\n1,{a},{b}\n1,-1,\n");
    let schema = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .column("a", DataType::decimal(38, 0).unwrap().not_null())
        .column("b", DataType::decimal(38, 2).unwrap().nullable())
        .build()
        .unwrap();
    let overflow = overflow_of("DECIMAL(38, 2)");
    let less = format!("{}8", "9".repeat(37));
    for workers in [1, 2] {
        let aggregates = [
            col("b").sum().alias("sb"),
            col("a").sum().alias("sa"),
            count_star().alias("n"),
        ];
        let (changelog, refused) = group_by_k(&text, &schema, workers, aggregates);
        let expected = [
            format!("+I,1,{b},{a},1"),
            format!("-U,1,{b},{a},1"),
            format!("+U,1,{b},{less},2"),
        ];
        assert_eq!(changelog, expected, "{workers} workers");
        assert_eq!(refused, [(3, overflow.to_string())], "{workers} workers");
    }
}

/// SUM, AVG and COUNT of one nullable column share its total and count, SUM and AVG of a NOT
/// NULL DECIMAL share a total and count with the rows, COUNT of a NOT NULL column is the row
/// count: eight words, the largest compact layout. One more nullable COUNT (nine words) takes
/// the accumulators' path, with the same values.
#[test]
fn counters_sharing_columns_fill_the_compact_layout_and_beyond() {
    let text = "k,b,a,v,w\n1,,1.50,3,\n1,4,2.25,-2,1\n2,-7,0.10,1,\n1,5,0.75,4,2\n";
    let schema = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .column("b", DataType::BigInt.nullable())
        .column("a", DataType::decimal(10, 2).unwrap().not_null())
        .column("v", DataType::Int.not_null())
        .column("w", DataType::BigInt.nullable())
        .build()
        .unwrap();
    let aggregates = || {
        [
            col("b").sum().alias("sb"),
            col("b").avg().alias("ab"),
            col("b").count().alias("nb"),
            col("a").sum().alias("sa"),
            col("a").avg().alias("aa"),
            col("v").count().alias("nv"),
            col("v").avg().alias("av"),
            count_star().alias("n"),
        ]
    };
    let expected = [
        ("+I,1,,,0,1.50,1.500000,1,3,1", ",0"),
        ("-U,1,,,0,1.50,1.500000,1,3,1", ",0"),
        ("+U,1,4,4,1,3.75,1.875000,2,0,2", ",1"),
        ("+I,2,-7,-7,1,0.10,0.100000,1,1,1", ",0"),
        ("-U,1,4,4,1,3.75,1.875000,2,0,2", ",1"),
        ("+U,1,9,4,2,4.50,1.500000,3,1,3", ",2"),
    ];
    for workers in [1, 2] {
        let (changelog, refused) = group_by_k(text, &schema, workers, aggregates());
        let eight: Vec<String> = expected.iter().map(|(row, _)| row.to_string()).collect();
        assert_eq!(changelog, eight, "{workers} workers");
        assert!(refused.is_empty(), "{refused:?}");
        let nine = aggregates()
            .into_iter()
            .chain([col("w").count().alias("nw")]);
        let (changelog, refused) = group_by_k(text, &schema, workers, nine);
        let nine: Vec<String> = expected
            .iter()
            .map(|(row, w)| format!("{row}{w}"))
            .collect();
        assert_eq!(changelog, nine, "{workers} workers");
        assert!(refused.is_empty(), "{refused:?}");
    }
}
