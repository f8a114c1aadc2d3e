//! Running statements against a [`TableEnv`]: DDL registers tables, views and temporal table
//! functions; a query or `INSERT INTO` runs; `EXPLAIN` prints the plan (Flink's
//! `TableEnvironment.executeSql` / `sqlQuery`).

use std::time::Duration;

use sqlparser::ast::Spanned;

use crate::expr::col;
use crate::io::Format;
use crate::materialized;
use crate::plan::{ProcessingClock, RelExpr};
use crate::render::ExecutionMode;
use crate::repr::time::parse_timestamp;
use crate::sql::Binder;
use crate::sql::SqlError;
use crate::sql::{parse_with_text, Statement};
use crate::table::{RuntimeMode, Table, TableEnv, TableResult, BATCH_IN_FINAL_MODE};

/// What one statement gives.
#[derive(Debug)]
pub enum StatementResult {
    /// DDL or `SET`: done (Flink prints `[INFO] Execute statement succeeded.`).
    Ok,
    /// `EXPLAIN`: the plan as text.
    Explain(String),
    /// A query's result.
    Rows(TableResult),
    /// `INSERT INTO`: the rows written, and the file they were appended to (a new part file
    /// of a table over a directory).
    Inserted(TableResult, String),
    /// `SHOW MATERIALIZED TABLES`, `DESCRIBE`, `ALTER MATERIALIZED TABLE .. REFRESH`: text
    /// to show.
    Text(String),
}

/// Options `SET` takes.
const SET_OPTIONS: &[&str] = &[
    "parallelism.default",
    "execution.runtime-mode",
    "table.exec.emit.allow-lateness",
    "table.exec.state.ttl",
    "table.exec.source.idle-timeout",
    "dtemporal.proctime.start",
    "dtemporal.proctime.tick",
    "materialized-table.refresh-mode.freshness-threshold",
    "materialized-table.default-freshness.continuous",
    "materialized-table.default-freshness.full",
];

impl TableEnv {
    /// Runs the `;`-separated statements of `sql` in order and returns each one's result
    /// (Flink's `executeSql`, over a script).
    ///
    /// Errors: the first statement that does not parse, bind or run (syntax errors name line,
    /// column and what was expected; binding errors the line and column of the offending part).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::session::StatementResult;
    /// let (env, _dir) = doc_env();
    /// let results = env.execute_sql("SELECT a, COUNT(b) AS cnt FROM Orders GROUP BY a").unwrap();
    /// let StatementResult::Rows(rows) = &results[0] else { panic!() };
    /// assert_eq!(rows.rows_as_text(), vec!["x,2", "y,1"]);
    /// ```
    pub fn execute_sql(&self, sql: &str) -> Result<Vec<StatementResult>, SqlError> {
        parse_with_text(sql)?
            .iter()
            .map(|(statement, text)| self.execute_statement_sql(statement, text))
            .collect()
    }

    /// The [`Table`] of one SQL query, to go on with in the Table API (Flink's `sqlQuery`).
    ///
    /// Errors: `query` is not one query, or does not bind.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, _dir) = doc_env();
    /// let big = env.sql_query("SELECT a, b FROM Orders WHERE b > 1").unwrap();
    /// let upper = big.select([col("a").upper().alias("a")]);
    /// assert_eq!(upper.execute().unwrap().rows_as_text(), vec!["X", "Y"]);
    /// ```
    pub fn sql_query(&self, query: &str) -> Result<Table, SqlError> {
        Ok(Table::new(self, Ok(crate::sql::query_plan(self, query)?)))
    }

    fn binder(&self) -> Binder<'_> {
        Binder::new(self)
    }

    /// Runs one parsed statement (see [`parse`](crate::sql::parse)) and returns its result, so that a caller can
    /// show each statement's result before the next one runs (as Flink's SQL client does).
    ///
    /// Errors: the statement does not bind or run.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::sql::parse;
    /// use differential_temporal::session::StatementResult;
    /// let (env, _dir) = doc_env();
    /// let statements = parse("SELECT a FROM Orders WHERE b > 2; SELECT nope FROM Orders").unwrap();
    /// let StatementResult::Rows(rows) = env.execute_statement(&statements[0]).unwrap() else { panic!() };
    /// assert_eq!(rows.rows_as_text(), vec!["y"]);
    /// assert!(env.execute_statement(&statements[1]).is_err());
    /// ```
    pub fn execute_statement(&self, statement: &Statement) -> Result<StatementResult, SqlError> {
        self.run_statement(statement, None)
    }

    /// [`execute_statement`](TableEnv::execute_statement) of a statement whose text (as
    /// [`parse_with_text`] gives it) a warehouse's catalog records when the statement defines
    /// something ([`TableEnv::with_warehouse`]).
    ///
    /// Errors: those of [`execute_statement`](TableEnv::execute_statement); the name is
    /// already defined in the warehouse (by any process).
    pub fn execute_statement_sql(
        &self,
        statement: &Statement,
        text: &str,
    ) -> Result<StatementResult, SqlError> {
        self.run_statement(statement, Some(text))
    }

    fn run_statement(
        &self,
        statement: &Statement,
        text: Option<&str>,
    ) -> Result<StatementResult, SqlError> {
        crate::sql::on_statement_stack(|| self.run_on_this_stack(statement, text))
    }

    fn run_on_this_stack(
        &self,
        statement: &Statement,
        text: Option<&str>,
    ) -> Result<StatementResult, SqlError> {
        match statement {
            Statement::CreateTable(t) => {
                self.define(&t.name, text, || crate::catalog::create_table(self, t))
            }
            Statement::CreateView { name, query } => self.define(name, text, || {
                let plan = self.binder().query(query)?;
                self.create_temporary_view(&name.value, &Table::new(self, Ok(plan)))
                    .map_err(|e| SqlError::at(name.span, e.to_string()))
            }),
            Statement::CreateTemporalTableFunction {
                name,
                history,
                time,
                key,
            } => self.define(name, text, || {
                let function = self
                    .from(&history.value)
                    .temporal_table_function(col(&time.value), col(&key.value))
                    .map_err(|e| SqlError::at(history.span, e.to_string()))?;
                self.register_temporal_table_function(&name.value, function)
                    .map_err(|e| SqlError::at(name.span, e.to_string()))
            }),
            Statement::CreateMaterializedTable(t) => {
                materialized::create(self, t, text)?;
                Ok(StatementResult::Ok)
            }
            Statement::AlterMaterializedTable { name, action } => {
                Ok(match materialized::alter(self, name, action)? {
                    Some(text) => StatementResult::Text(text),
                    None => StatementResult::Ok,
                })
            }
            Statement::DropMaterializedTable { name, if_exists } => {
                materialized::drop(self, name, *if_exists)?;
                Ok(StatementResult::Ok)
            }
            Statement::ShowMaterializedTables => {
                Ok(StatementResult::Text(materialized::show(self)?))
            }
            Statement::Describe(name) => {
                let columns = crate::catalog::describe(self, name)?;
                let materialized = materialized::describe(self, name)?;
                Ok(StatementResult::Text(columns + &materialized))
            }
            Statement::Set { key, value, span } => {
                self.set(key, value).map_err(|m| SqlError::at(*span, m))?;
                Ok(StatementResult::Ok)
            }
            Statement::Explain(inner) => {
                Ok(StatementResult::Explain(self.plan_of(inner)?.explain()))
            }
            Statement::Query(_) => {
                let plan = self.plan_of(statement)?;
                Ok(StatementResult::Rows(Table::new(self, Ok(plan)).execute()?))
            }
            Statement::Insert { table, .. } => {
                let plan = self.plan_of(statement)?;
                let sink = self.sink(&table.value);
                let path = sink.as_ref().map(|s| s.path.clone()).unwrap_or_default();
                let plan = Table::new(self, Ok(plan));
                let (result, written) = match sink.map(|s| s.format) {
                    Some(Format::DebeziumJson(options)) => {
                        if options.schema_include {
                            // Flink's message (DebeziumJsonFormatFactory).
                            return Err(SqlError::at(table.span, "Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true."));
                        }
                        let result = plan.execute()?;
                        let written = match result.is_complete() {
                            true => crate::io::append::append(&path, false, |staged| {
                                result.write_debezium_json(staged)
                            })
                            .map_err(crate::table::TableError::from)?,
                            false => path,
                        };
                        (result, written)
                    }
                    _ => plan.execute_insert(&path)?,
                };
                Ok(StatementResult::Inserted(result, written))
            }
        }
    }

    /// Runs `register`, a statement defining `name`; with a warehouse, under its lock and
    /// only if no process defined `name` there, recording `text` in its catalog.
    fn define(
        &self,
        name: &sqlparser::ast::Ident,
        text: Option<&str>,
        register: impl FnOnce() -> Result<(), SqlError>,
    ) -> Result<StatementResult, SqlError> {
        let Some(warehouse) = self.warehouse() else {
            register()?;
            return Ok(StatementResult::Ok);
        };
        let text = text.ok_or_else(|| {
            SqlError::at(name.span, "a warehouse records the statement's SQL text: run it with execute_sql or execute_statement_sql")
        })?;
        warehouse.update(|catalog| {
            if catalog.defines(&name.value) {
                return Err(SqlError::at(
                    name.span,
                    format!(
                        "'{}' is already defined in the warehouse catalog {}",
                        name.value,
                        warehouse.catalog_path().display()
                    ),
                ));
            }
            register()?;
            catalog.statements.push(crate::warehouse::CatalogStatement {
                name: name.value.clone(),
                sql: text.to_string(),
            });
            Ok(StatementResult::Ok)
        })
    }

    /// The plan a query or `INSERT` runs: an `INSERT` renames the query's columns to the
    /// sink's (by position, as Flink matches them) and casts each to the sink's type, but for a
    /// declared length (Flink's default type-length enforcer, IGNORE).
    fn plan_of(&self, statement: &Statement) -> Result<RelExpr, SqlError> {
        match statement {
            Statement::Query(q) => self.in_mode(self.binder().query(q)?, q.span()),
            Statement::Insert { table, query } => {
                let sink = self.sink(&table.value).ok_or_else(|| {
                    SqlError::at(table.span, format!("Table '{}' is not a sink: declare it with CREATE TABLE .. WITH ('connector' = 'filesystem', 'path' = ..)", table.value))
                })?;
                let plan = self.binder().query(query)?;
                if plan.schema.len() != sink.schema.len() {
                    return Err(SqlError::at(
                        query.span(),
                        format!(
                            "Column types of query result and sink for '{}' do not match: the query has {} columns, the sink {}",
                            table.value,
                            plan.schema.len(),
                            sink.schema.len()
                        ),
                    ));
                }
                let items: Vec<_> = plan
                    .schema
                    .fields
                    .iter()
                    .zip(&sink.schema.fields)
                    .map(|(from, to)| {
                        let column = col(&from.name);
                        // Flink's default `table.exec.sink.type-length-enforcer` IGNORE:
                        // a string or binary string is written whole, never cut or padded to
                        // the sink column's declared length.
                        let (from_ty, to_ty) = (&from.ty.data_type, &to.ty.data_type);
                        let length_only = (from_ty.is_string() && to_ty.is_string())
                            || (from_ty.is_binary_string() && to_ty.is_binary_string());
                        let column = if from_ty == to_ty || length_only {
                            column
                        } else {
                            column.cast(to.ty.data_type.clone())
                        };
                        column.alias(&to.name)
                    })
                    .collect();
                let table_plan = Table::new(self, Ok(plan)).select(items);
                table_plan
                    .plan()
                    .map(|p| p.clone().sink(&table.value))
                    .map_err(|e| SqlError::at(query.span(), e.to_string()))
                    .and_then(|plan| self.in_mode(plan, query.span()))
            }
            other => Err(SqlError::Validation {
                line: 1,
                column: 1,
                message: format!("EXPLAIN takes a query or INSERT, not {other:?}"),
            }),
        }
    }

    /// `plan` with its changelog modes exact in the session's execution mode
    /// ([`RelExpr::in_execution`]); its refusal at `span`, the query's position.
    fn in_mode(
        &self,
        plan: RelExpr,
        span: sqlparser::tokenizer::Span,
    ) -> Result<RelExpr, SqlError> {
        (plan.in_execution(self.options().mode)).map_err(|e| SqlError::at(span, e.to_string()))
    }

    /// `SET key = value`.
    fn set(&self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "parallelism.default" => {
                let workers: usize = value.parse().ok().filter(|&w| w > 0).ok_or_else(|| {
                    format!("'{key}' takes a positive number of workers, not '{value}'")
                })?;
                self.clone().with_workers(workers);
                Ok(())
            }
            "table.exec.emit.allow-lateness" => {
                let ms = crate::sql::parse_duration(value)
                    .map_err(|m| format!("'{key}' takes a duration: {m}"))?;
                let lateness = std::time::Duration::from_millis(ms.max(0) as u64);
                self.clone().with_allowed_lateness(lateness);
                Ok(())
            }
            "table.exec.source.idle-timeout" => {
                let ms = crate::sql::parse_duration(value)
                    .ok()
                    .filter(|&ms| ms >= 0)
                    .ok_or_else(|| {
                        format!("'{key}' takes a duration ('0' for off), not '{value}'")
                    })?;
                self.clone()
                    .with_idle_timeout(Duration::from_millis(ms as u64));
                Ok(())
            }
            "table.exec.state.ttl" => {
                self.clone().with_state_ttl(state_ttl(value)?);
                Ok(())
            }
            "dtemporal.proctime.start" | "dtemporal.proctime.tick" => {
                let clock = self.options().processing_clock;
                let clock = clock.unwrap_or_else(ProcessingClock::wall_clock);
                let clock = if key.ends_with("start") {
                    let start = parse_timestamp(value.trim(), 3).map_err(|e| {
                        format!("'{key}' takes a UTC timestamp like '2024-01-01 00:00:00': {e}")
                    })?;
                    ProcessingClock::new(start, Duration::from_millis(clock.tick_ms as u64))?
                } else {
                    let ms = crate::sql::parse_duration(value)
                        .map_err(|m| format!("'{key}' takes a duration: {m}"))?;
                    let tick = Duration::from_millis(u64::try_from(ms).unwrap_or(0));
                    clock.with_tick(tick)?
                };
                self.clone().with_processing_clock(clock);
                Ok(())
            }
            "materialized-table.refresh-mode.freshness-threshold"
            | "materialized-table.default-freshness.continuous"
            | "materialized-table.default-freshness.full" => {
                let ms = crate::sql::parse_duration(value)
                    .ok()
                    .filter(|&ms| ms > 0)
                    .ok_or_else(|| format!("'{key}' takes a positive duration, not '{value}'"))?;
                let duration = std::time::Duration::from_millis(ms as u64);
                let mut config = self.materialized_config();
                match key {
                    "materialized-table.refresh-mode.freshness-threshold" => {
                        config.freshness_threshold = duration
                    }
                    "materialized-table.default-freshness.continuous" => {
                        config.default_continuous_freshness = duration
                    }
                    _ => config.default_full_freshness = duration,
                }
                self.set_materialized_config(config);
                Ok(())
            }
            "execution.runtime-mode" => {
                let mode = match value.to_ascii_lowercase().as_str() {
                    "streaming" => RuntimeMode::Streaming,
                    "batch" if self.options().mode == ExecutionMode::Final => {
                        return Err(BATCH_IN_FINAL_MODE.to_string())
                    }
                    "batch" => RuntimeMode::Batch,
                    "automatic" => RuntimeMode::Automatic,
                    _ => {
                        return Err(format!(
                            "'{key}' takes 'streaming', 'batch' or 'automatic', not '{value}'"
                        ))
                    }
                };
                self.set_runtime_mode(mode);
                Ok(())
            }
            _ => Err(format!(
                "Unsupported option '{key}'; SET takes: {}",
                SET_OPTIONS.join(", ")
            )),
        }
    }
}

/// The value of `SET 'table.exec.state.ttl'`: a whole number of system times (0: off), the
/// unit of this engine's processing-time clock (see [`TableEnv::with_state_ttl`]). Flink takes
/// a wall-clock duration (`'1 h'`, `'3600000'` ms); a duration with a time unit is refused
/// here rather than read in a unit it does not have.
fn state_ttl(value: &str) -> Result<u64, String> {
    let text = value.trim();
    text.parse::<u64>().map_err(|_| {
        format!(
            "'table.exec.state.ttl' takes a whole number of system times (this engine's processing-time clock: one input block each, not wall-clock time), e.g. '3', or '0' for no TTL; not '{value}'"
        )
    })
}
