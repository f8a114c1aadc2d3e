//! The lowering that SQL and the Table API share: a query's parts (select list, grouping,
//! joins and their conditions, lateral calls, windows, OVER) as expressions over column names,
//! onto [`RelExpr`](super::RelExpr) nodes. The SQL binder and the Table API both build plans
//! through these functions, so the two forms agree by construction.
//!
//! Each function binds the [`Expr`](crate::expr::Expr)s it is given against its input's
//! schema with the caller's [`FunctionRegistry`](crate::expr::FunctionRegistry), and refuses
//! what does not fit with a [`PlanError`](super::PlanError) naming the node.

mod asof_join;
mod equi_join;
mod lateral;
mod over;
mod select;
mod temporal_join;
mod window;

pub(crate) use asof_join::plan_asof_join;
pub(crate) use equi_join::plan_equi_join;
pub(crate) use lateral::{plan_table_function, plan_unnest};
pub(crate) use over::over_select;
pub(crate) use select::{
    aggregate, aggregate_with, column_indices, contains_aggregate, project, transform,
};
pub(crate) use temporal_join::{plan_temporal_function_join, plan_temporal_join, set_rowtime};
pub(crate) use window::{time_column, window_aggregate};
