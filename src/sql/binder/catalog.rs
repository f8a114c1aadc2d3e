//! What the binder reads of the environment it binds in: the registered tables and views, the
//! temporal table functions, the functions, and the options a plan is built with (as
//! DataFusion's `SqlToRel` reads a `ContextProvider`). The Table API's `TableEnv` implements
//! it; the binder knows nothing else of it, so SQL sits below the Table API.

use differential_temporal_operators::SysTime;

use crate::error::TableError;
use crate::expr::FunctionRegistry;
use crate::plan::{ProcessingClock, RelExpr};

/// The tables, functions and options a query binds against.
pub trait Catalog {
    /// The plan of the registered table or view `name` (a quoted identifier by what it holds:
    /// `` `a b` `` is `a b`). Errors: no table or view is registered as `name` (the message
    /// names the registered ones).
    fn table(&self, name: &str) -> Result<RelExpr, TableError>;

    /// The history of the temporal table function `name`: a versioned table (its key the
    /// primary key, its time the rowtime) that `LATERAL TABLE (name(t))` joins as of `t`.
    /// Errors: no temporal table function is registered as `name`.
    fn temporal_table_function(&self, name: &str) -> Result<RelExpr, TableError>;

    /// The scalar, aggregate and table functions a query may call, built-ins and registered.
    fn functions(&self) -> FunctionRegistry;

    /// The options of the session that shape a plan.
    fn plan_options(&self) -> PlanOptions;
}

/// The session options a plan is built with.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    /// `'table.exec.state.ttl'`: a regular join's state TTL in system times (0: off).
    pub state_ttl: SysTime,
    /// `'table.exec.emit.allow-lateness'`: the allowed lateness of window aggregations in final
    /// mode, in milliseconds.
    pub allow_lateness_ms: i64,
    /// The processing-time clock the `PROCTIME()` columns of a declared table are stamped with
    /// (`None`: [`ProcessingClock::wall_clock`], read at the declaration).
    pub processing_clock: Option<ProcessingClock>,
}
