//! The table environment: registered tables, functions, temporal table functions and how to
//! run (Flink's `TableEnvironment`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::expr::{AggregateUdf, Expr, FunctionRegistry, ScalarUdf};
use crate::io::{Format, TypedSource};
use crate::materialized::{Clock, MaterializedTableConfig, SystemClock};
use crate::plan::RelExpr;
use crate::render::ExecutionMode;
use crate::repr::Schema;
use crate::warehouse::{self, Warehouse};

use super::execute::{ExecuteOptions, ResultForm};
use super::{Table, TableError};

/// A registered table: a CSV file (or a directory of them) read into rows of its schema.
#[derive(Clone, Debug)]
pub struct TableSource {
    /// The file, or the directory of files.
    pub path: String,
    /// The resolved schema (declared, or every header column as STRING).
    pub schema: Schema,
    /// Whether the file is a changelog (it has an `op` column, or its format is one).
    pub changelog: bool,
    /// The files' format.
    pub format: Format,
}

/// A temporal table function (Flink's `Table.createTemporalTableFunction(time, key)`): an
/// append-only history table with a time attribute and a key, called with a probe time in
/// [`Table::join_lateral`] to give each key's row valid at that time.
#[derive(Clone, Debug)]
pub struct TemporalTableFunction {
    /// The history, as a versioned table (keep-last by its time per key).
    pub history: RelExpr,
    /// The key column of the history.
    pub key: usize,
}

/// The environment. Cheap to clone (a shared handle): tables keep a handle to the environment
/// that made them.
#[derive(Clone, Default)]
pub struct TableEnv {
    state: Rc<RefCell<State>>,
}

struct State {
    tables: BTreeMap<String, Registered>,
    functions: FunctionRegistry,
    temporal_functions: BTreeMap<String, TemporalTableFunction>,
    sinks: BTreeMap<String, TableSource>,
    options: ExecuteOptions,
    warehouse: Option<Warehouse>,
    clock: Arc<dyn Clock>,
    materialized_config: MaterializedTableConfig,
}

impl Default for State {
    fn default() -> State {
        State {
            tables: BTreeMap::new(),
            functions: FunctionRegistry::default(),
            temporal_functions: BTreeMap::new(),
            sinks: BTreeMap::new(),
            options: ExecuteOptions::default(),
            warehouse: None,
            clock: Arc::new(SystemClock),
            materialized_config: MaterializedTableConfig::default(),
        }
    }
}

#[derive(Clone)]
enum Registered {
    /// A file, and the plan [`TableEnv::from`] gives: its scan, or computed columns over it.
    Source(TableSource, RelExpr),
    View(RelExpr),
    /// A table whose changelog the caller's dataflow supplies: its schema, and whether it is
    /// a changelog (`false`: append-only).
    Collection(Schema, bool),
    /// A materialized table of the warehouse: read from its latest published snapshot.
    Materialized(Schema),
}

impl TableEnv {
    /// An environment that runs on one worker thread, in incremental mode.
    pub fn new() -> TableEnv {
        TableEnv::default()
    }

    /// Runs on `workers` threads of this process.
    pub fn with_workers(self, workers: usize) -> TableEnv {
        self.state.borrow_mut().options.timely_args = vec!["-w".into(), workers.to_string()];
        self
    }

    /// Runs with timely's arguments (`-w N`, `-n N`, `-p I`, `-h FILE`, as the command line
    /// takes them, without the program name): several processes form one cluster.
    pub fn with_timely_args(self, args: Vec<String>) -> TableEnv {
        self.state.borrow_mut().options.timely_args = args;
        self
    }

    /// Runs in `mode` (incremental by default; final gives Flink's watermark-driven output).
    pub fn with_mode(self, mode: ExecutionMode) -> TableEnv {
        self.state.borrow_mut().options.mode = mode;
        self
    }

    /// Lets rows up to `lateness` behind a window's end update it in final mode (Flink's
    /// `table.exec.emit.allow-lateness`), for the windows planned from now on; rows later than
    /// that are refused and reported. Whole milliseconds; 0 by default.
    pub fn with_allowed_lateness(self, lateness: std::time::Duration) -> TableEnv {
        let ms = i64::try_from(lateness.as_millis()).unwrap_or(i64::MAX);
        self.state.borrow_mut().options.allow_lateness_ms = ms;
        self
    }

    /// Clears a row from a regular join's state once it has not been written for `system_times`
    /// system times (Flink's `table.exec.state.ttl` for its streaming join, with
    /// `OnCreateAndWrite` and `NeverReturnExpired`), for the joins planned from now on; 0, the
    /// default, keeps state forever. A row written at system time `s` (its input block: with
    /// [`with_block_bytes`](TableEnv::with_block_bytes), block `i` of each input enters at
    /// system time `i`) no longer matches rows of the other side from `s + system_times` on;
    /// joined rows already emitted are not retracted when it expires. The exact rules, padding
    /// of LEFT / RIGHT / FULL joins included, are [`RelExpr::with_state_ttl`]'s.
    ///
    /// The unit is the engine's processing-time clock, system time, not milliseconds: Flink
    /// measures the TTL on the wall clock, which would make results depend on timing and
    /// worker count; system time keeps them deterministic. SQL's `SET
    /// 'table.exec.state.ttl' = '3'` sets the same. It applies to regular joins only (not to
    /// interval joins, whose state the watermark bounds, nor to aggregations, deduplication or
    /// the temporal and lookup joins).
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::table::TableEnv;
    ///
    /// let dir = Dir::new();
    /// // One record a system time: `1,a` at 0; on the right, `1,y` at 1 and `1,x` at 3.
    /// let l = dir.write("l.csv", "k,v\n1,a\n");
    /// let r = dir.write("r.csv", "k,w\n\n1,y\n\n1,x\n");
    /// let env = TableEnv::new().with_block_bytes(1).with_state_ttl(2);
    /// env.register_csv("L", &l, None).unwrap();
    /// env.register_csv("R", &r, None).unwrap();
    /// let joined = env.from("L").join(&env.from("R"), col("k").eq(col("k0")));
    /// // `1,a` is gone from the join's state at system time 2: `1,x` finds no partner.
    /// assert_eq!(joined.execute().unwrap().rows_as_text(), vec!["1,a,1,y"]);
    /// ```
    pub fn with_state_ttl(self, system_times: u64) -> TableEnv {
        self.state.borrow_mut().options.state_ttl = system_times;
        self
    }

    /// Cuts each input into blocks of about `bytes` (whole records): block `i` enters the
    /// dataflow at system time `i`. Smaller blocks show more intermediate updates in a
    /// changelog; the final table is the same. Default 64 KiB.
    pub fn with_block_bytes(self, bytes: usize) -> TableEnv {
        self.state.borrow_mut().options.block_bytes = bytes.max(1);
        self
    }

    /// Draws a progress line on standard error while reading large sources, when it is a
    /// terminal ([`Progress`](crate::progress::Progress)). Off by default; `dtemporal sql`
    /// turns it on unless `--quiet`.
    pub fn with_progress(self, show: bool) -> TableEnv {
        self.state.borrow_mut().options.progress = show;
        self
    }

    /// What runs started after this call keep of their output at worker 0 (see
    /// [`ResultForm`]; [`ResultForm::Changelog`] by default). Unlike the `with_` builders
    /// this takes `&self`, so that a script can switch forms between statements.
    ///
    /// ```
    /// use differential_temporal::table::{ResultForm, TableEnv};
    ///
    /// let env = TableEnv::new();
    /// env.set_result_form(ResultForm::FinalTable);
    /// assert_eq!(env.options().result, ResultForm::FinalTable);
    /// ```
    pub fn set_result_form(&self, form: ResultForm) {
        self.state.borrow_mut().options.result = form;
    }

    /// The options the environment runs with.
    pub fn options(&self) -> ExecuteOptions {
        self.state.borrow().options.clone()
    }

    /// Registers the CSV file `path` as table `name` (or every file under the directory `path`,
    /// in path order: [`TypedSource::open_table`]). With a `schema`, each of its columns is
    /// read from the header column of the same name and parsed as its type (a cell that does
    /// not parse is a row error `FILE:LINE:COLUMN: column "x": reason`); without one, every
    /// column is a nullable STRING. A file with an `op` column (`+I -U +U -D`) is a changelog.
    ///
    /// Errors: the name is taken, the file cannot be read, a schema column is not in the file.
    pub fn register_csv(
        &self,
        name: &str,
        path: &str,
        schema: Option<Schema>,
    ) -> Result<(), TableError> {
        self.register_file(name, path, &Format::Csv, schema, Ok)
    }

    /// Registers the file (or directory) `path` in `format` as table `name` whose rows are
    /// `table(scan)`: `scan` reads the file's columns of `physical` as
    /// [`register_csv`](TableEnv::register_csv) does (for `debezium-json`:
    /// [`TypedSource::open_format`]), and
    /// `table` builds on it, typically a [`RelExpr::map`] of computed columns and a
    /// [`RelExpr::project`] into the declared order (Flink's computed columns, `c AS expr` in
    /// `CREATE TABLE`, evaluated per row from the physical columns). Queries over `name` start
    /// from `table(scan)`; executing one reads the file with `physical`.
    ///
    /// Errors: those of [`register_csv`](TableEnv::register_csv) (`debezium-json` needs
    /// `physical`), or `table`'s.
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use differential_temporal::expr::{bind_scalar, col};
    /// use differential_temporal::io::Format;
    /// use differential_temporal::repr::{DataType, Schema};
    /// use differential_temporal::table::{TableEnv, TableError};
    ///
    /// let dir = Dir::new();
    /// let path = dir.write("o.csv", "price,qty\n3,2\n5,4\n");
    /// let physical = Schema::builder()
    ///     .column("price", DataType::Int.nullable())
    ///     .column("qty", DataType::Int.nullable())
    ///     .build()
    ///     .unwrap();
    /// let env = TableEnv::new();
    /// env.register_file("o", &path, &Format::Csv, Some(physical), |scan| {
    ///     let cost = bind_scalar(&col("price").mul(col("qty")), &scan.schema, &Default::default())
    ///         .map_err(|e| TableError::Invalid(e.to_string()))?;
    ///     scan.map(vec![(cost, "cost".into())]).map_err(|e| TableError::Invalid(e.to_string()))
    /// })
    /// .unwrap();
    /// assert_eq!(env.from("o").execute().unwrap().rows_as_text(), vec!["3,2,6", "5,4,20"]);
    /// ```
    pub fn register_file<E: From<TableError>>(
        &self,
        name: &str,
        path: &str,
        format: &Format,
        physical: Option<Schema>,
        table: impl FnOnce(RelExpr) -> Result<RelExpr, E>,
    ) -> Result<(), E> {
        let (files, schema) =
            TypedSource::open_table(path, physical, format).map_err(TableError::from)?;
        let source = TableSource {
            path: path.to_string(),
            schema,
            changelog: files[0].is_changelog(),
            format: format.clone(),
        };
        let plan = table(RelExpr::scan(name, source.schema.clone(), source.changelog))?;
        Ok(self.register(name, Registered::Source(source, plan))?)
    }

    /// Registers `name` as a table whose rows come from the caller's own dataflow (Flink's
    /// `fromDataStream` / `fromChangelogStream` with a schema): plans over it are rendered with
    /// [`Table::render`], which takes its `Change<Row>` collection (rows packed in `schema`'s
    /// column order) from [`RenderContext::sources`](crate::render::RenderContext::sources)
    /// under `name`. `changelog = false` declares it append-only (every change a `+I`), which
    /// the planner relies on (deduplication, temporal-join probe sides); `true` admits `-U`,
    /// `+U` and `-D`. [`Table::execute`] refuses a plan that scans it.
    ///
    /// Errors: the name is taken.
    ///
    /// ```
    /// use differential_temporal::expr::col;
    /// use differential_temporal::repr::{DataType, Schema};
    /// use differential_temporal::table::TableEnv;
    ///
    /// let env = TableEnv::new();
    /// let schema = Schema::builder().column("k", DataType::BigInt.not_null()).build().unwrap();
    /// env.register_collection("events", schema, false).unwrap();
    /// let counts = env.from("events").group_by([col("k")]).select([col("k"), col("k").count().alias("n")]);
    /// assert_eq!(counts.schema().unwrap().names().collect::<Vec<_>>(), ["k", "n"]);
    /// ```
    pub fn register_collection(
        &self,
        name: &str,
        schema: Schema,
        changelog: bool,
    ) -> Result<(), TableError> {
        self.register(name, Registered::Collection(schema, changelog))
    }

    /// Registers `table` as the view `name` (Flink's `createTemporaryView`).
    pub fn create_temporary_view(&self, name: &str, table: &Table) -> Result<(), TableError> {
        let plan = table.plan.as_ref().map_err(TableError::clone)?;
        self.register(name, Registered::View(plan.clone()))
    }

    fn register(&self, name: &str, table: Registered) -> Result<(), TableError> {
        let mut state = self.state.borrow_mut();
        if state.tables.contains_key(name) {
            return Err(TableError::AlreadyRegistered(name.to_string()));
        }
        state.tables.insert(name.to_string(), table);
        Ok(())
    }

    /// The table (or view) `name` (Flink's `from`).
    pub fn from(&self, name: &str) -> Table {
        let state = self.state.borrow();
        let plan = match state.tables.get(name) {
            Some(Registered::Source(_, plan) | Registered::View(plan)) => Ok(plan.clone()),
            Some(Registered::Collection(schema, changelog)) => {
                Ok(RelExpr::scan(name, schema.clone(), *changelog))
            }
            Some(Registered::Materialized(schema)) => {
                Ok(RelExpr::scan(name, schema.clone(), false))
            }
            None => Err(TableError::UnknownTable {
                name: name.to_string(),
                registered: state.tables.keys().cloned().collect::<Vec<_>>().join(", "),
            }),
        };
        Table::new(self, plan)
    }

    /// Declares the CSV file `path` (written when something is inserted into it) with `schema`
    /// as the sink `name` (SQL's `CREATE TABLE name (..) WITH ('path' = ..)`: a table is a
    /// source if its file exists, and a sink in any case).
    ///
    /// Errors: a sink of that name is already declared.
    pub fn register_csv_sink(
        &self,
        name: &str,
        path: &str,
        schema: Schema,
    ) -> Result<(), TableError> {
        self.register_file_sink(name, path, &Format::Csv, schema)
    }

    /// [`register_csv_sink`](TableEnv::register_csv_sink) in `format`: `debezium-json` writes
    /// Debezium events ([`write_debezium_json`](crate::io::write_debezium_json)).
    ///
    /// Errors: a sink of that name is already declared.
    pub fn register_file_sink(
        &self,
        name: &str,
        path: &str,
        format: &Format,
        schema: Schema,
    ) -> Result<(), TableError> {
        let mut state = self.state.borrow_mut();
        if state.sinks.contains_key(name) {
            return Err(TableError::AlreadyRegistered(name.to_string()));
        }
        let sink = TableSource {
            path: path.to_string(),
            schema,
            changelog: false,
            format: format.clone(),
        };
        state.sinks.insert(name.to_string(), sink);
        Ok(())
    }

    /// The sink declared as `name`.
    pub fn sink(&self, name: &str) -> Option<TableSource> {
        self.state.borrow().sinks.get(name).cloned()
    }

    /// The file source registered as `name`, for execution.
    pub(super) fn source(&self, name: &str) -> Result<TableSource, TableError> {
        match self.state.borrow().tables.get(name) {
            Some(Registered::Source(t, _)) => Ok(t.clone()),
            Some(Registered::Materialized(schema)) => {
                let warehouse = self.warehouse().ok_or_else(|| {
                    TableError::Invalid(format!("materialized table '{name}' has no warehouse"))
                })?;
                let dir = warehouse.table_dir(name);
                let manifest = warehouse::current(&dir)?;
                Ok(TableSource {
                    path: manifest.dir(&dir).display().to_string(),
                    schema: schema.clone(),
                    changelog: false,
                    format: Format::Csv,
                })
            }
            Some(Registered::Collection(..)) => Err(TableError::Invalid(format!(
                "the plan scans '{name}', whose rows come from the caller's dataflow \
                 (register_collection): render it with Table::render"
            ))),
            _ => Err(TableError::Invalid(format!(
                "the plan scans '{name}', which is not a registered source"
            ))),
        }
    }

    /// Refreshes of materialized tables read the time from `clock` (the system clock by
    /// default; a [`ManualClock`](crate::materialized::ManualClock) in tests).
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> TableEnv {
        self.state.borrow_mut().clock = clock;
        self
    }

    /// The clock refreshes read.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.state.borrow().clock.clone()
    }

    /// The `materialized-table.*` options in force.
    pub fn materialized_config(&self) -> MaterializedTableConfig {
        self.state.borrow().materialized_config
    }

    /// Sets the `materialized-table.*` options (`SET` changes them one at a time).
    pub fn set_materialized_config(&self, config: MaterializedTableConfig) {
        self.state.borrow_mut().materialized_config = config;
    }

    /// The warehouse this environment keeps its catalog in, if opened with one
    /// ([`TableEnv::with_warehouse`]).
    pub fn warehouse(&self) -> Option<Warehouse> {
        self.state.borrow().warehouse.clone()
    }

    pub(crate) fn set_warehouse(&self, warehouse: Warehouse) {
        self.state.borrow_mut().warehouse = Some(warehouse);
    }

    /// Registers the materialized table `name` of the warehouse, read from its latest
    /// published snapshot by every query that runs after.
    ///
    /// Errors: the name is taken.
    pub(crate) fn register_materialized(
        &self,
        name: &str,
        schema: Schema,
    ) -> Result<(), TableError> {
        self.register(name, Registered::Materialized(schema))
    }

    /// Forgets the table `name` (a dropped or redefined materialized table).
    pub(crate) fn unregister(&self, name: &str) {
        self.state.borrow_mut().tables.remove(name);
    }

    /// Whether a table or view `name` is registered.
    pub fn is_registered(&self, name: &str) -> bool {
        self.state.borrow().tables.contains_key(name)
    }

    /// Registers a scalar function, callable as `call(name, args)` (Flink's
    /// `createTemporarySystemFunction`).
    pub fn register_function(&self, udf: ScalarUdf) -> Result<(), TableError> {
        self.register_with(|functions| functions.register_scalar(udf))
    }

    /// Registers an aggregate function (UDAF, Flink's `AggregateFunction`) under its
    /// [`AggregateUdf::name`](crate::expr::AggregateUdf::name), callable in a grouped select
    /// as [`call_aggregate`](crate::expr::call_aggregate)`(name, args)` and in SQL as
    /// `name(args)` (Flink's `createTemporarySystemFunction("WeightedAvg", WeightedAvg.class)`).
    /// A UDAF without retraction is refused over an updating input when the plan is built.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use differential_temporal::expr::{AggregateUdf, ExprError, UdafAccumulator};
    /// use differential_temporal::repr::{ColumnType, DataType, Datum, RowPacker};
    /// use differential_temporal::table::TableEnv;
    ///
    /// /// The number of rows (a COUNT(*) as a UDAF).
    /// #[derive(Debug)]
    /// struct Rows;
    /// #[derive(Debug, Default)]
    /// struct RowsAcc(i64);
    /// impl AggregateUdf for Rows {
    ///     fn name(&self) -> &str { "rows" }
    ///     fn return_type(&self, _: &[ColumnType]) -> Result<ColumnType, ExprError> {
    ///         Ok(DataType::BigInt.not_null())
    ///     }
    ///     fn create_accumulator(&self) -> Box<dyn UdafAccumulator> { Box::new(RowsAcc(0)) }
    ///     fn has_retract(&self) -> bool { true }
    /// }
    /// impl UdafAccumulator for RowsAcc {
    ///     fn accumulate(&mut self, _: &[Datum<'_>]) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn retract(&mut self, _: &[Datum<'_>]) -> Result<(), String> { self.0 -= 1; Ok(()) }
    ///     fn merge(&mut self, other: &dyn UdafAccumulator) -> Result<(), String> {
    ///         self.0 += other.as_any().downcast_ref::<RowsAcc>().ok_or("not rows")?.0;
    ///         Ok(())
    ///     }
    ///     fn get_value(&self, packer: &mut RowPacker<'_>) -> Result<(), String> {
    ///         packer.push(Datum::Int(self.0));
    ///         Ok(())
    ///     }
    ///     fn as_any(&self) -> &dyn std::any::Any { self }
    /// }
    /// let env = TableEnv::new();
    /// env.register_aggregate_function(Arc::new(Rows)).unwrap();
    /// ```
    pub fn register_aggregate_function(
        &self,
        udaf: Arc<dyn AggregateUdf>,
    ) -> Result<(), TableError> {
        self.register_with(|functions| functions.register_aggregate(udaf))
    }

    /// Registers a function through `register` on the environment's registry.
    pub(super) fn register_with(
        &self,
        register: impl FnOnce(&mut FunctionRegistry) -> Result<(), crate::expr::ExprError>,
    ) -> Result<(), TableError> {
        register(&mut self.state.borrow_mut().functions)
            .map_err(|e| TableError::Invalid(e.to_string()))
    }

    /// The functions expressions are bound with.
    pub fn functions(&self) -> FunctionRegistry {
        self.state.borrow().functions.clone()
    }

    /// Registers `function` under `name`, for [`Table::join_lateral`] (Flink's
    /// `createTemporarySystemFunction("rates", ratesHistory.createTemporalTableFunction(..))`).
    pub fn register_temporal_table_function(
        &self,
        name: &str,
        function: TemporalTableFunction,
    ) -> Result<(), TableError> {
        let mut state = self.state.borrow_mut();
        if state.temporal_functions.contains_key(name) {
            return Err(TableError::AlreadyRegistered(name.to_string()));
        }
        state.temporal_functions.insert(name.to_string(), function);
        Ok(())
    }

    /// The temporal table function `name`.
    pub(crate) fn temporal_function(
        &self,
        name: &str,
    ) -> Result<TemporalTableFunction, TableError> {
        let state = self.state.borrow();
        state.temporal_functions.get(name).cloned().ok_or_else(|| {
            TableError::Invalid(format!(
                "No match found for table function '{name}': it is neither a registered table function nor a temporal table function; temporal table functions: {}",
                state
                    .temporal_functions
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }
}

/// `Expr` arguments of a call such as `call("rates", [col("order_time")])`.
pub(super) fn call_parts(call: &Expr) -> Option<(&str, &[Expr])> {
    match call.unaliased() {
        Expr::Call { func, args } => Some((func.as_str(), args.as_slice())),
        _ => None,
    }
}
