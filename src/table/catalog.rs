//! The environment as the SQL binder reads it: [`TableEnv`] is a [`Catalog`].

use crate::expr::FunctionRegistry;
use crate::plan::RelExpr;
use crate::sql::{Catalog, PlanOptions};

use super::{TableEnv, TableError};

impl Catalog for TableEnv {
    fn table(&self, name: &str) -> Result<RelExpr, TableError> {
        self.from(name).plan().cloned().map_err(TableError::clone)
    }

    fn temporal_table_function(&self, name: &str) -> Result<RelExpr, TableError> {
        Ok(self.temporal_function(name)?.history)
    }

    fn functions(&self) -> FunctionRegistry {
        TableEnv::functions(self)
    }

    fn plan_options(&self) -> PlanOptions {
        let options = self.options();
        PlanOptions {
            state_ttl: options.state_ttl,
            allow_lateness_ms: options.allow_lateness_ms,
            processing_clock: options.processing_clock,
        }
    }
}
