//! The Table API: Flink's relational operations over dynamic tables, in Rust.
//!
//! A [`TableEnv`] holds the registered tables (CSV files with a schema built in Rust), the
//! functions and temporal table functions, and how to run (workers, timely's `-w -n -p -h`,
//! incremental or final mode). A [`Table`] is a lazy plan ([`RelExpr`]) with its schema: each
//! operation builds a node and defers any error to the one `Result` of [`Table::execute`],
//! [`Table::explain`] or [`Table::plan`], which names the operation and column that failed.
//!
//! ```no_run
//! use differential_temporal::expr::col;
//! use differential_temporal::repr::{DataType, Schema};
//! use differential_temporal::table::TableEnv;
//!
//! let env = TableEnv::new().with_workers(2);
//! let orders = Schema::builder()
//!     .column("a", DataType::STRING.nullable())
//!     .column("b", DataType::BigInt.nullable())
//!     .build()?;
//! env.register_csv("Orders", "orders.csv", Some(orders))?;
//! let counts = env
//!     .from("Orders")
//!     .group_by([col("a")])
//!     .select([col("a"), col("b").count().alias("cnt")]);
//! counts.execute()?.print();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Semantics follow Flink's Table API (`org.apache.flink.table.api.Table`); operation names
//! are Rust's spelling of Flink's (`group_by`, `add_columns`, `join_lateral`...), and `where`
//! is [`Table::where_`] (a keyword in Rust).

mod asof_join;
mod catalog;
mod env;
mod equi_join;
mod execute;
mod files;
mod join;
mod lateral;
pub(crate) mod live;
mod over;
mod result;
mod select;
mod set_op;
mod sort;
mod sources;
mod window;

pub use crate::error::TableError;
pub use env::{TableEnv, TableSource, TemporalTableFunction};
pub(crate) use execute::BATCH_IN_FINAL_MODE;
pub use execute::{ExecuteOptions, ResultForm, RuntimeMode};
pub use over::{
    row_interval, Over, OverWindow, OverWindowedTable, Preceding, UNBOUNDED_RANGE, UNBOUNDED_ROW,
};
pub(crate) use result::table_changelog;
pub use result::TableResult;
pub use select::GroupedTable;
pub use window::{
    hours, millis, minutes, rows, seconds, GroupWindow, GroupWindowedTable, Session, Slide,
    SlideWithSize, Tumble, WindowGroupedTable, WindowKind, WindowSize,
};

use crate::expr::Expr;
use crate::plan::lower::column_indices;
use crate::plan::{DedupOrder, Keep, PlanError, RelExpr};
use crate::repr::Schema;

/// A lazy relational expression over the tables of a [`TableEnv`].
#[derive(Clone)]
pub struct Table {
    env: TableEnv,
    plan: Result<RelExpr, TableError>,
    /// After `order_by`, `offset` or `fetch`: the sort so far, which the next of them extends.
    sorting: Option<sort::Sorting>,
}

impl TableError {
    fn plan(operation: &'static str) -> impl FnOnce(PlanError) -> TableError {
        move |source| TableError::Plan { operation, source }
    }
}

impl Table {
    pub(crate) fn new(env: &TableEnv, plan: Result<RelExpr, TableError>) -> Table {
        Table {
            env: env.clone(),
            plan,
            sorting: None,
        }
    }

    /// This table's plan, or the first error met building it.
    pub fn plan(&self) -> Result<&RelExpr, &TableError> {
        self.plan.as_ref()
    }

    /// The output schema (Flink's `Table.getResolvedSchema()`), or the first error.
    pub fn schema(&self) -> Result<&Schema, &TableError> {
        self.plan().map(|p| &p.schema)
    }

    /// The plan as text (Flink's `Table.explain()`), see [`RelExpr::explain`].
    pub fn explain(&self) -> Result<String, &TableError> {
        self.plan().map(RelExpr::explain)
    }

    /// Applies `f` to the plan, or keeps the first error.
    fn then(
        &self,
        operation: &'static str,
        f: impl FnOnce(RelExpr) -> Result<RelExpr, PlanError>,
    ) -> Table {
        let plan = match &self.plan {
            Ok(plan) => f(plan.clone()).map_err(TableError::plan(operation)),
            Err(e) => Err(e.clone()),
        };
        Table::new(&self.env, plan)
    }

    /// `WHERE predicate`: keeps the rows for which `predicate` is TRUE (Flink's `filter`).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::{col, lit};
    /// let (env, _dir) = doc_env();
    /// let big = env.from("Orders").filter(col("b").gt(lit(1i64)));
    /// let rows = big.execute().unwrap().rows_as_text();
    /// assert_eq!(rows, vec!["x,2", "y,3"]);
    /// ```
    pub fn filter(&self, predicate: Expr) -> Table {
        let registry = self.env.functions();
        self.then("filter", move |plan| {
            plan.filter_expr(&predicate, &registry)
        })
    }

    /// `WHERE predicate` (Flink's `where`): the same as [`filter`](Table::filter).
    pub fn where_(&self, predicate: Expr) -> Table {
        self.filter(predicate)
    }

    /// Deduplication (`ROW_NUMBER() OVER (PARTITION BY key ORDER BY time ASC|DESC) = 1`): the
    /// first or last row of each `key` by the rowtime attribute (`DedupOrder::EventTime`) or
    /// by arrival (`DedupOrder::Arrival`, Flink's proctime order). Keep-last by rowtime is the
    /// seed's versioned view: its output has `key` as primary key and keeps the rowtime, so it
    /// can be the build side of [`temporal_join`](Table::temporal_join).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::plan::{DedupOrder, Keep};
    /// let (env, _dir) = doc_env();
    /// let latest = env.from("Rates").deduplicate([col("currency")], Keep::Last, DedupOrder::EventTime);
    /// assert_eq!(latest.execute().unwrap().rows_as_text(), vec!["Euro,116,2024-01-01 10:30:00.000"]);
    /// ```
    pub fn deduplicate(
        &self,
        key: impl IntoIterator<Item = Expr>,
        keep: Keep,
        order: DedupOrder,
    ) -> Table {
        let key: Vec<Expr> = key.into_iter().collect();
        self.then("deduplicate", move |plan| {
            let key = column_indices(&plan.schema, &key, "deduplicate")?;
            plan.dedup(key, keep, order)
        })
    }

    /// This table's rows as writes merged per primary key `key` by the merge engine the table
    /// options `options` configure (Fluss's `table.merge-engine`, Paimon's `merge-engine`:
    /// [`RelExpr::merge_engine`] says what the output is and what it refuses, and
    /// [`merge_options`](crate::merge_options) lists the options). Writes an engine ignores by
    /// definition are in [`TableResult::refused`] with kind `Ignored`.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// let (env, _dir) = doc_env();
    /// // Paimon's aggregation engine: the sum of `b` per `a`.
    /// let totals = env.from("Orders").merge_engine(
    ///     ["a"],
    ///     [("merge-engine", "aggregation"), ("fields.b.aggregate-function", "sum")],
    /// );
    /// assert_eq!(totals.execute().unwrap().rows_as_text(), vec!["x,3", "y,3"]);
    /// ```
    pub fn merge_engine<'a>(
        &self,
        key: impl IntoIterator<Item = &'a str>,
        options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Table {
        let key: Vec<String> = key.into_iter().map(str::to_string).collect();
        let options: Vec<(String, String)> = options
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.then("merge_engine", move |plan| {
            plan.merge_engine(&key, &options)
        })
    }

    /// This versioned table (a primary key and a rowtime attribute) read as of the event time
    /// `at`: per key, the row of its latest version at or before `at`, none if that version is
    /// a delete (rules A1-A5; see [`RelExpr::as_of`]). The seed's "products as of 10:00".
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::plan::{DedupOrder, Keep};
    /// use differential_temporal::repr::Ts;
    /// let (env, _dir) = doc_env();
    /// let rates = env.from("Rates").deduplicate([col("currency")], Keep::Last, DedupOrder::EventTime);
    /// let ten = Ts::from_millis(1_704_103_200_000); // 2024-01-01 10:00:00
    /// let at_ten = rates.as_of(ten).execute().unwrap();
    /// assert_eq!(at_ten.rows_as_text(), vec!["Euro,114,2024-01-01 09:00:00.000"]);
    /// ```
    pub fn as_of(&self, at: crate::repr::Ts) -> Table {
        self.then("as_of", move |plan| plan.as_of(at))
    }

    /// The history of this versioned table (a primary key and a rowtime attribute): every
    /// version that is a row, with the event time it stops being valid appended as `valid_to`
    /// (NULL while current; rule A2, see [`RelExpr::history`]).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::plan::{DedupOrder, Keep};
    /// let (env, _dir) = doc_env();
    /// let rates = env.from("Rates").deduplicate([col("currency")], Keep::Last, DedupOrder::EventTime);
    /// let history = rates.history().execute().unwrap();
    /// assert_eq!(
    ///     history.rows_as_text(),
    ///     vec![
    ///         "Euro,114,2024-01-01 09:00:00.000,2024-01-01 10:30:00.000",
    ///         "Euro,116,2024-01-01 10:30:00.000,", // NULL: current
    ///     ]
    /// );
    /// ```
    pub fn history(&self) -> Table {
        self.then("history", |plan| plan.history())
    }

    /// `SELECT DISTINCT *` (Flink's `distinct`).
    pub fn distinct(&self) -> Table {
        self.then("distinct", |plan| Ok(plan.distinct()))
    }
}

/// A small environment for the documentation's examples: `Orders(a STRING, b BIGINT)` with
/// rows `(x, 2), (y, 3), (x, 1)` and the seed's `Rates` changelog (currency, rate, update_time:
/// Euro 114 at 09:00, Euro 116 at 10:30). The directory holding the files is returned too; keep
/// it alive while the environment is used.
#[doc(hidden)]
pub fn doc_env() -> (TableEnv, tempfile_dir::Dir) {
    let dir = tempfile_dir::Dir::new();
    let orders = dir.write("orders.csv", "a,b\nx,2\ny,3\nx,1\n");
    let rates = dir.write(
        "rates.csv",
        "currency,rate,update_time\nEuro,114,2024-01-01 09:00:00\nEuro,116,2024-01-01 10:30:00\n",
    );
    let env = TableEnv::new();
    let orders_schema = Schema::builder()
        .column("a", crate::repr::DataType::STRING.nullable())
        .column("b", crate::repr::DataType::BigInt.nullable())
        .build()
        .expect("a valid schema");
    let rates_schema = Schema::builder()
        .column("currency", crate::repr::DataType::STRING.not_null())
        .column("rate", crate::repr::DataType::BigInt.nullable())
        .column(
            "update_time",
            crate::repr::DataType::Timestamp(3).not_null(),
        )
        .rowtime("update_time", 0)
        .build()
        .expect("a valid schema");
    env.register_csv("Orders", &orders, Some(orders_schema))
        .expect("the doc files exist");
    env.register_csv("Rates", &rates, Some(rates_schema))
        .expect("the doc files exist");
    (env, dir)
}

/// A temporary directory for [`doc_env`], removed on drop.
#[doc(hidden)]
pub mod tempfile_dir {
    use std::path::PathBuf;

    /// A directory under the system's temporary directory, removed on drop.
    pub struct Dir(PathBuf);

    impl Dir {
        /// A fresh directory.
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "dtemporal-doc-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).expect("a writable temporary directory");
            Dir(path)
        }

        /// Writes `text` to `name` in the directory and returns its path.
        pub fn write(&self, name: &str, text: &str) -> String {
            let path = self.0.join(name);
            std::fs::write(&path, text).expect("a writable temporary directory");
            path.to_string_lossy().into_owned()
        }

        /// The path of `name` in the directory (nothing is created).
        pub fn path(&self, name: &str) -> String {
            self.0.join(name).to_string_lossy().into_owned()
        }
    }

    impl Default for Dir {
        fn default() -> Self {
            Dir::new()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Table {
    /// Runs the table on the environment's workers and gathers its changelog, final rows and
    /// refused rows at worker 0 (Flink's `execute()`; `.print()` on the result is Flink's
    /// `execute().print()`).
    ///
    /// Errors: the first error met building the plan, a source that cannot be read, bad timely
    /// arguments, a worker failure. Rows that fail are not errors: see
    /// [`TableResult::refused`] and [`TableResult::malformed`].
    pub fn execute(&self) -> Result<TableResult, TableError> {
        let plan = self.plan.as_ref().map_err(TableError::clone)?;
        execute::execute(&self.env, plan)
    }

    /// Runs the table and appends it as CSV to `path` (Flink's `executeInsert` into a
    /// filesystem sink): the changelog with an `op` column if the table is updating, else its
    /// rows; a directory gets a new part file, a file holding rows gets them at its end, a
    /// path that does not exist is created ([`crate::io`]'s `append` module). Returns the
    /// result and the file written to.
    ///
    /// Errors: as [`execute`](Table::execute); the file cannot be written; a file whose header
    /// is not the rows' (nothing is written then).
    pub fn execute_insert(&self, path: &str) -> Result<(TableResult, String), TableError> {
        let result = self.execute()?;
        if !result.is_complete() {
            return Ok((result, path.to_string()));
        }
        let updating = !self
            .plan
            .as_ref()
            .map_err(TableError::clone)?
            .mode
            .is_append_only();
        let written = crate::io::append::append(path, true, |staged| {
            result.write_csv(Some(staged), updating)
        })?;
        Ok((result, written))
    }

    /// Renders the table into a dataflow of the caller's (for use inside a user's own timely
    /// program): `ctx` holds the scope and the changelog collection of every table the plan
    /// scans, by name; refused rows are collected in `ctx.refused`. The rows of those
    /// collections are checked against their tables' schemas first: a row that does not fit
    /// (a NULL in a NOT NULL column, a datum of another type, a retraction in a table
    /// registered append-only) is refused with its `seq`, never read as its schema's type.
    pub fn render<'s>(
        &self,
        ctx: &mut crate::render::RenderContext<'s>,
    ) -> Result<crate::render::Collection<'s>, TableError> {
        let plan = self.plan.as_ref().map_err(TableError::clone)?;
        ctx.check_sources(plan);
        ctx.render(plan).map_err(TableError::plan("render"))
    }
}
