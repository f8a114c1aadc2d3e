//! The bad-input rows of lateral joins (issue 13): an unknown table function, arguments of the
//! wrong types, a LEFT lateral join with a condition other than `ON TRUE`, UNNEST of a value
//! that is not a collection; each a clear error naming the function or expression.

use std::path::Path;
use std::sync::Arc;

use differential_temporal::expr::{Collector, TableFunction};
use differential_temporal::repr::{DataType, Datum, Field};
use differential_temporal::table::TableEnv;

use super::{Case, Run, Via};

macro_rules! ddl {
    () => {
        "CREATE TABLE o (id INT, cur STRING) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv'); CREATE TABLE a (id INT, tags ARRAY<STRING>) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');\n"
    };
}

const FILES: &[(&str, &[u8])] = &[
    ("o.csv", b"id,cur\n1,EUR\n"),
    ("a.csv", b"id,tags\n1,x;y\n"),
];

/// `split(s)`: the words of `s`, one column `word`.
struct Split;

impl TableFunction for Split {
    fn name(&self) -> &str {
        "split"
    }
    fn arguments(&self) -> Vec<DataType> {
        vec![DataType::STRING]
    }
    fn output(&self) -> Vec<Field> {
        vec![Field::new("word", DataType::STRING.nullable())]
    }
    fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String> {
        if let Datum::Str(s) = args[0] {
            s.split(' ').for_each(|w| out.collect([Datum::Str(w)]));
        }
        Ok(())
    }
}

/// Runs `sql` over `o.csv` with `split` registered: exit code 2 and the error, or 0.
fn run_sql(dir: &Path, sql: &str) -> Run {
    let env = TableEnv::new();
    env.register_table_function(Arc::new(Split)).unwrap();
    let path = dir.join("o.csv");
    env.execute_sql(&format!(
        "CREATE TABLE o (id INT, cur STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    let (code, stderr) = match env.execute_sql(sql) {
        Ok(_) => (0, String::new()),
        Err(e) => (2, e.to_string()),
    };
    Run {
        code,
        stdout: String::new(),
        stderr,
    }
}

fn wrong_argument_types(dir: &Path) -> Run {
    run_sql(dir, "SELECT * FROM o, LATERAL TABLE(split(id))")
}

fn left_lateral_with_condition(dir: &Path) -> Run {
    run_sql(
        dir,
        "SELECT * FROM o LEFT JOIN LATERAL TABLE(split(cur)) AS T(w) ON w = 'x'",
    )
}

pub(super) const LATERAL_CASES: &[Case] = &[
    Case {
        name: "sql: LATERAL TABLE of an unknown table function",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT * FROM o, LATERAL TABLE(split(cur))")]),
        code: 2,
        stderr: &["No match found for table function 'split'"],
        stdout: "",
    },
    Case {
        name: "sql: UNNEST of a column that is not an ARRAY or a MAP",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT * FROM o CROSS JOIN UNNEST(cur) AS t(c)")]),
        code: 2,
        stderr: &[
            "Cannot apply 'UNNEST' to arguments of type '<STRING>'",
            "Supported form(s): 'UNNEST(<ARRAY>)', 'UNNEST(<MAP>)'",
        ],
        stdout: "",
    },
    Case {
        name: "sql: LEFT JOIN UNNEST with a condition other than ON TRUE",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT * FROM a LEFT JOIN UNNEST(tags) AS t(tag) ON tag = 'x'")]),
        code: 2,
        stderr: &["Left outer joins with a table function do not accept a predicate such as tag = 'x'. Only literal TRUE is accepted."],
        stdout: "",
    },
    Case {
        name: "api: a table function called with an argument of the wrong type",
        files: FILES,
        via: Via::Api(wrong_argument_types),
        code: 2,
        stderr: &[
            "Cannot apply 'split' to arguments of type '<INT>'",
            "Supported form(s): 'split(<STRING>)'",
        ],
        stdout: "",
    },
    Case {
        name: "api: LEFT JOIN LATERAL TABLE with a condition other than ON TRUE",
        files: FILES,
        via: Via::Api(left_lateral_with_condition),
        code: 2,
        stderr: &["Left outer joins with a table function do not accept a predicate such as w = 'x'. Only literal TRUE is accepted."],
        stdout: "",
    },
];
