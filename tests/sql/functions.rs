//! User-defined functions and UNNEST (issue 13), SQL beside the Table API, exact rows on 1
//! and 2 workers: Flink's documentation examples of user-defined functions (the
//! `SplitFunction` UDTF in `joinLateral` / `leftOuterJoinLateral` and `LATERAL TABLE (..)`,
//! with and without column aliases, the `SubstringFunction` scalar UDF and the `WeightedAvg`
//! UDAF), UNNEST of arrays (NULL and NULL elements, WITH ORDINALITY, INNER and LEFT), a
//! function's runtime failure reported as a row error, and the expansions of an updating
//! input retracted with its rows.

use std::sync::Arc;

use differential_temporal::expr::{
    call, call_aggregate, col, lit, AggregateUdf, Collector, ExprError, RowArena, ScalarUdf,
    TableFunction, UdafAccumulator,
};
use differential_temporal::repr::{ColumnType, DataType, Datum, Field, RowPacker};
use differential_temporal::table::{TableEnv, TableResult};

use super::{changelog_text, env, last_rows};

/// Flink's `SplitFunction` (`@FunctionHint(output = @DataTypeHint("ROW<word STRING, length
/// INT>"))`): each space-separated word of a string with its length; "boom" fails.
struct SplitFunction;

impl TableFunction for SplitFunction {
    fn name(&self) -> &str {
        "SplitFunction"
    }
    fn arguments(&self) -> Vec<DataType> {
        vec![DataType::STRING]
    }
    fn output(&self) -> Vec<Field> {
        vec![
            Field::new("word", DataType::STRING.nullable()),
            Field::new("length", DataType::Int.nullable()),
        ]
    }
    fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String> {
        match args[0] {
            Datum::Str("boom") => Err("cannot split 'boom'".into()),
            Datum::Str(s) => {
                for word in s.split(' ') {
                    out.collect([Datum::Str(word), Datum::Int(word.chars().count() as i64)]);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Flink's `SubstringFunction`: `s.substring(begin, end)` (0-based, end exclusive); an
/// out-of-range end fails, as Java's `substring` throws.
fn substring_function() -> ScalarUdf {
    let args = vec![DataType::STRING, DataType::Int, DataType::Int];
    ScalarUdf::new(
        "SubstringFunction",
        args,
        DataType::STRING.nullable(),
        |args: &[Datum<'_>], _: &RowArena| match (args[0], args[1], args[2]) {
            (Datum::Str(s), Datum::Int(b), Datum::Int(e)) => (s.get(b as usize..e as usize))
                .map(Datum::Str)
                .ok_or_else(|| format!("begin {b}, end {e}, length {}", s.len())),
            _ => Ok(Datum::Null),
        },
    )
}

const MY_TABLE: &str = "id,myField\n1,hello world\n2,\n3,a bb ccc\n";
const ORDERS: &str = "id,tags\n1,a;b\n2,\n3,c\n4,;d\n";

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// An environment with `MyTable(id INT, myField STRING)`, `Orders(id INT, tags
/// ARRAY<STRING>)` and the functions registered.
fn functions_env(dir: &tempfile::TempDir, workers: usize) -> TableEnv {
    let env = env(workers);
    let (my_table, orders) = (write(dir, "t.csv", MY_TABLE), write(dir, "o.csv", ORDERS));
    env.execute_sql(&format!(
        "CREATE TABLE MyTable (id INT, myField STRING) WITH ('connector' = 'filesystem', 'path' = '{my_table}', 'format' = 'csv');
         CREATE TABLE Orders (id INT, tags ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');"
    ))
    .unwrap();
    env.register_table_function(Arc::new(SplitFunction))
        .unwrap();
    env.register_function(substring_function()).unwrap();
    env
}

fn sorted(result: &TableResult) -> Vec<String> {
    let mut rows = result.rows_as_text();
    rows.sort();
    rows
}

fn want(rows: &[&str]) -> Vec<String> {
    let mut rows: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    rows.sort();
    rows
}

const INNER: &[&str] = &[
    "hello world,hello,5",
    "hello world,world,5",
    "a bb ccc,a,1",
    "a bb ccc,bb,2",
    "a bb ccc,ccc,3",
];

/// The documentation's `joinLateral` / `LATERAL TABLE` examples: INNER drops the NULL row.
#[test]
fn split_function_inner_in_both_forms() {
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        let env = functions_env(&dir, workers);
        let api = env
            .from("MyTable")
            .join_lateral(call("SplitFunction", [col("myField")]), lit(true))
            .select([col("myField"), col("word"), col("length")]);
        assert_eq!(sorted(&api.execute().unwrap()), want(INNER));
        for sql in [
            "SELECT myField, word, length FROM MyTable, LATERAL TABLE(SplitFunction(myField))",
            "SELECT myField, word, length FROM MyTable CROSS JOIN LATERAL TABLE(SplitFunction(myField))",
            "SELECT myField, word, length FROM MyTable JOIN LATERAL TABLE(SplitFunction(myField)) ON TRUE",
        ] {
            assert_eq!(sorted(&last_rows(&env, sql)), want(INNER), "{sql}");
        }
        let names = last_rows(
            &env,
            "SELECT * FROM MyTable, LATERAL TABLE(SplitFunction(myField))",
        );
        assert_eq!(
            names.schema().names().collect::<Vec<_>>(),
            ["id", "myField", "word", "length"]
        );
    }
}

/// `leftOuterJoinLateral` and `LEFT JOIN LATERAL TABLE (..) ON TRUE`, with Flink's renaming
/// `.as("newWord", "newLength")` / `AS T(newWord, newLength)`: the NULL row is padded.
#[test]
fn split_function_left_with_aliases_in_both_forms() {
    let dir = tempfile::tempdir().unwrap();
    let mut left = want(INNER);
    left.push(",,".to_string());
    left.sort();
    for workers in [1, 2] {
        let env = functions_env(&dir, workers);
        let api = env
            .from("MyTable")
            .left_outer_join_lateral(call("SplitFunction", [col("myField")]), lit(true))
            .select([col("myField"), col("word"), col("length")]);
        assert_eq!(sorted(&api.execute().unwrap()), left);
        let renamed = env
            .from("MyTable")
            .left_outer_join_lateral(
                call("SplitFunction", [col("myField")]).as_columns(["newWord", "newLength"]),
                lit(true),
            )
            .select([col("myField"), col("newWord"), col("newLength")]);
        assert_eq!(sorted(&renamed.execute().unwrap()), left);
        for sql in [
            "SELECT myField, word, length FROM MyTable LEFT JOIN LATERAL TABLE(SplitFunction(myField)) ON TRUE",
            "SELECT myField, newWord, newLength FROM MyTable LEFT JOIN LATERAL TABLE(SplitFunction(myField)) AS T(newWord, newLength) ON TRUE",
        ] {
            assert_eq!(sorted(&last_rows(&env, sql)), left, "{sql}");
        }
    }
}

/// An INNER lateral join's `ON` condition is checked on each joined row; a LEFT one takes
/// `ON TRUE` only (Flink's message), in both forms.
#[test]
fn lateral_join_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let env = functions_env(&dir, 1);
    let sql = "SELECT id, w FROM MyTable JOIN LATERAL TABLE(SplitFunction(myField)) AS T(w, l) ON T.l > 1 AND id < 3";
    assert_eq!(sorted(&last_rows(&env, sql)), want(&["1,hello", "1,world"]));
    let api = env
        .from("MyTable")
        .join_lateral(
            call("SplitFunction", [col("myField")]),
            col("length").gt(lit(1)),
        )
        .select([col("id"), col("word")]);
    assert_eq!(
        sorted(&api.execute().unwrap()),
        want(&["1,hello", "1,world", "3,bb", "3,ccc"])
    );
    let refused = "Left outer joins with a table function do not accept a predicate such as length > 1. Only literal TRUE is accepted.";
    let api = env
        .from("MyTable")
        .left_outer_join_lateral(
            call("SplitFunction", [col("myField")]),
            col("length").gt(lit(1)),
        )
        .execute();
    let Err(error) = api else {
        panic!("a LEFT lateral join with a condition runs");
    };
    let error = error.to_string();
    assert!(error.contains(refused), "{error}");
}

/// Flink's `SubstringFunction` in both forms; a call out of range refuses its row, reported
/// with the function's name.
#[test]
fn substring_function_in_both_forms() {
    let dir = tempfile::tempdir().unwrap();
    let env = functions_env(&dir, 2);
    let expected = want(&["llo wo", "bb ccc", ""]);
    let api =
        env.from("MyTable")
            .select([call("SubstringFunction", [col("myField"), lit(2), lit(8)]).alias("s")]);
    assert_eq!(sorted(&api.execute().unwrap()), expected);
    let sql = last_rows(
        &env,
        "SELECT SubstringFunction(myField, 2, 8) AS s FROM MyTable",
    );
    assert_eq!(sorted(&sql), expected);
    let out_of_range = last_rows(
        &env,
        "SELECT SubstringFunction(myField, 5, 11) FROM MyTable",
    );
    assert_eq!(sorted(&out_of_range), want(&["", " world"]));
    let reasons: Vec<&str> = (out_of_range.refused().iter())
        .map(|(_, r)| r.reason.as_ref())
        .collect();
    assert_eq!(
        reasons,
        ["function 'SubstringFunction' failed: begin 5, end 11, length 8"]
    );
}

/// UNNEST of an ARRAY column: each element a row (a NULL element too), a NULL array none
/// (INNER) or one padded row (LEFT); WITH ORDINALITY numbers the elements from 1.
#[test]
fn unnest_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let inner = want(&["1,a", "1,b", "3,c", "4,", "4,d"]);
    for workers in [1, 2] {
        let env = functions_env(&dir, workers);
        for sql in [
            "SELECT id, tag FROM Orders CROSS JOIN UNNEST(tags) AS t(tag)",
            "SELECT id, tag FROM Orders, UNNEST(tags) AS t(tag)",
            "SELECT id, t.tag FROM Orders JOIN UNNEST(tags) AS t(tag) ON TRUE",
        ] {
            assert_eq!(sorted(&last_rows(&env, sql)), inner, "{sql}");
        }
        let left = "SELECT id, tag FROM Orders LEFT JOIN UNNEST(tags) AS t(tag) ON TRUE";
        let mut padded = inner.clone();
        padded.push("2,".into());
        padded.sort();
        assert_eq!(sorted(&last_rows(&env, left)), padded);
        let numbered = "SELECT id, tag, pos FROM Orders CROSS JOIN UNNEST(tags) WITH ORDINALITY AS t(tag, pos)";
        assert_eq!(
            sorted(&last_rows(&env, numbered)),
            want(&["1,a,1", "1,b,2", "3,c,1", "4,,1", "4,d,2"])
        );
        let filtered =
            "SELECT id, tag FROM Orders CROSS JOIN UNNEST(tags) AS t(tag) WHERE tag <> 'b'";
        assert_eq!(
            sorted(&last_rows(&env, filtered)),
            want(&["1,a", "3,c", "4,d"])
        );
    }
}

/// A retraction of an input row retracts exactly its expansions; a row whose function fails
/// is refused (with its reason), the others expanded.
#[test]
fn expansions_of_an_updating_input_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let words = write(
        &dir,
        "w.csv",
        "op,id,s\n+I,1,x y\n+I,2,boom\n+I,3,z\n-D,1,x y\n",
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&format!(
            "CREATE TABLE W (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{words}', 'format' = 'csv')"
        ))
        .unwrap();
        env.register_table_function(Arc::new(SplitFunction))
            .unwrap();
        let result = last_rows(
            &env,
            "SELECT id, word FROM W, LATERAL TABLE(SplitFunction(s)) AS T(word, n)",
        );
        let mut changes: Vec<String> = (result.changelog().iter())
            .map(|(t, _)| t.to_string())
            .zip(changelog_text(&result))
            .map(|(t, line)| format!("{t},{line}"))
            .collect();
        changes.sort();
        assert_eq!(
            changes,
            ["0,+I,1,x", "0,+I,1,y", "2,+I,3,z", "3,-D,1,x", "3,-D,1,y"]
        );
        assert_eq!(sorted(&result), ["3,z"]);
        let reasons: Vec<&str> = result
            .refused()
            .iter()
            .map(|(_, r)| r.reason.as_ref())
            .collect();
        assert_eq!(
            reasons,
            ["function 'SplitFunction' failed: cannot split 'boom'"]
        );
    }
}

/// The plan: a `Correlate` node with the function, its kind and the input's columns first.
#[test]
fn explain_shows_the_correlate() {
    let dir = tempfile::tempdir().unwrap();
    let env = functions_env(&dir, 1);
    let table = env
        .sql_query(
            "SELECT * FROM Orders LEFT JOIN UNNEST(tags) WITH ORDINALITY AS t(tag, pos) ON TRUE",
        )
        .unwrap();
    let plan = table.plan().unwrap().explain();
    let correlate = "Correlate(kind=LEFT, function=[UNNEST WITH ORDINALITY(tags)]) -> [id INT, tags ARRAY<STRING>, tag STRING, pos INT] append-only";
    assert!(
        plan.lines().any(|line| line.trim_start() == correlate),
        "{plan}"
    );
}

/// Flink's `WeightedAvg` (`AggregateFunction<Long, WeightedAvgAccumulator>`): `sum(value *
/// weight) / sum(weight)` in integers, NULL without weight; accumulate, retract and merge.
#[derive(Debug)]
struct WeightedAvg;

#[derive(Debug, Default)]
struct WeightedAvgAccumulator {
    sum: i64,
    count: i64,
}

impl AggregateUdf for WeightedAvg {
    fn name(&self) -> &str {
        "WeightedAvg"
    }
    fn return_type(&self, args: &[ColumnType]) -> Result<ColumnType, ExprError> {
        match args {
            [v, w] if v.data_type.is_integer() && w.data_type.is_integer() => {
                Ok(DataType::BigInt.nullable())
            }
            _ => Err(ExprError::InvalidArgument {
                expr: "WeightedAvg".into(),
                reason: "takes an integer value and an integer weight".into(),
            }),
        }
    }
    fn create_accumulator(&self) -> Box<dyn UdafAccumulator> {
        Box::new(WeightedAvgAccumulator::default())
    }
    fn has_retract(&self) -> bool {
        true
    }
}

impl WeightedAvgAccumulator {
    fn add(&mut self, args: &[Datum<'_>], sign: i64) {
        if let (Datum::Int(value), Datum::Int(weight)) = (args[0], args[1]) {
            self.sum += sign * value * weight;
            self.count += sign * weight;
        }
    }
}

impl UdafAccumulator for WeightedAvgAccumulator {
    fn accumulate(&mut self, args: &[Datum<'_>]) -> Result<(), String> {
        self.add(args, 1);
        Ok(())
    }
    fn retract(&mut self, args: &[Datum<'_>]) -> Result<(), String> {
        self.add(args, -1);
        Ok(())
    }
    fn merge(&mut self, other: &dyn UdafAccumulator) -> Result<(), String> {
        let other = (other.as_any().downcast_ref::<WeightedAvgAccumulator>())
            .ok_or("not a WeightedAvg accumulator")?;
        self.sum += other.sum;
        self.count += other.count;
        Ok(())
    }
    fn get_value(&self, packer: &mut RowPacker<'_>) -> Result<(), String> {
        packer.push(match self.count {
            0 => Datum::Null,
            count => Datum::Int(self.sum / count),
        });
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Flink's `WeightedAvg` example in both forms (`call(WeightedAvg.class, $("value"),
/// $("weight"))` in a grouped select; `WeightedAvg(`value`, weight)` in SQL), over an
/// append-only table and over a changelog whose `-D` retracts from the accumulator.
#[test]
fn weighted_avg_in_both_forms() {
    let dir = tempfile::tempdir().unwrap();
    let scores = write(
        &dir,
        "s.csv",
        "myField,value,weight\na,10,1\na,20,3\nb,5,2\nb,,1\n",
    );
    let changes = write(
        &dir,
        "c.csv",
        "op,myField,value,weight\n+I,a,10,1\n+I,a,20,3\n-D,a,20,3\n+I,b,4,1\n",
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&format!(
            "CREATE TABLE Scores (myField STRING, `value` BIGINT, weight INT) WITH ('connector' = 'filesystem', 'path' = '{scores}', 'format' = 'csv');
             CREATE TABLE Changes (myField STRING, `value` BIGINT, weight INT) WITH ('connector' = 'filesystem', 'path' = '{changes}', 'format' = 'csv');"
        ))
        .unwrap();
        env.register_aggregate_function(Arc::new(WeightedAvg))
            .unwrap();
        for (table, expected) in [("Scores", ["a,17", "b,5"]), ("Changes", ["a,10", "b,4"])] {
            let api = env.from(table).group_by([col("myField")]).select([
                col("myField"),
                call_aggregate("WeightedAvg", [col("value"), col("weight")]).alias("avg"),
            ]);
            assert_eq!(sorted(&api.execute().unwrap()), expected, "{table}");
            let sql = format!(
                "SELECT myField, WeightedAvg(`value`, weight) AS avg FROM {table} GROUP BY myField"
            );
            assert_eq!(sorted(&last_rows(&env, &sql)), expected, "{sql}");
        }
    }
}
