//! User-defined functions, registered by name with a signature.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::repr::{ColumnType, DataType, Datum};

use super::aggregate::AggregateUdf;
use super::arena::RowArena;
use super::bind::is_builtin;
use super::error::{EvalError, ExprError};
use super::table_function::TableFunction;

/// The body of a scalar UDF: the result on the argument datums (of the declared types; NULLs
/// included, the function decides), with computed strings put in the arena, or an error message.
pub type ScalarUdfFn =
    dyn for<'a> Fn(&[Datum<'a>], &'a RowArena) -> Result<Datum<'a>, String> + Send + Sync;

/// A scalar user-defined function (Flink's `ScalarFunction` with one `eval`): arguments are
/// cast implicitly to `args` when binding, as Flink does.
#[derive(Clone)]
pub struct ScalarUdf {
    /// Its name (called case-insensitively).
    pub name: String,
    /// The argument types.
    pub args: Vec<DataType>,
    /// The result type.
    pub ret: ColumnType,
    /// The body.
    pub func: Arc<ScalarUdfFn>,
}

impl ScalarUdf {
    /// A UDF.
    pub fn new(
        name: impl Into<String>,
        args: Vec<DataType>,
        ret: ColumnType,
        func: impl for<'a> Fn(&[Datum<'a>], &'a RowArena) -> Result<Datum<'a>, String>
            + Send
            + Sync
            + 'static,
    ) -> ScalarUdf {
        ScalarUdf {
            name: name.into(),
            args,
            ret,
            func: Arc::new(func),
        }
    }

    /// Calls the body; its error names the function.
    pub fn invoke<'a>(
        &self,
        args: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, EvalError> {
        (self.func)(args, arena).map_err(|message| EvalError::Udf {
            name: self.name.clone(),
            message,
        })
    }
}

impl fmt::Debug for ScalarUdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{arg}")?;
        }
        write!(f, ") -> {}", self.ret)
    }
}

/// Two UDFs are equal when they are the same registration (name, signature and body).
impl PartialEq for ScalarUdf {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.args == other.args
            && self.ret == other.ret
            && Arc::ptr_eq(&self.func, &other.func)
    }
}

/// The functions a binder knows beyond the built-ins: scalar UDFs, aggregate UDFs (UDAFs)
/// and table functions (UDTFs), by lower-cased name.
#[derive(Clone, Default)]
pub struct FunctionRegistry {
    scalars: BTreeMap<String, Arc<ScalarUdf>>,
    aggregates: BTreeMap<String, Arc<dyn AggregateUdf>>,
    tables: BTreeMap<String, Arc<dyn TableFunction>>,
}

impl fmt::Debug for FunctionRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionRegistry")
            .field("scalars", &self.scalars.keys().collect::<Vec<_>>())
            .field("aggregates", &self.aggregates.keys().collect::<Vec<_>>())
            .field("tables", &self.tables.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl FunctionRegistry {
    /// The built-ins only.
    pub fn new() -> FunctionRegistry {
        FunctionRegistry::default()
    }

    fn check_free(&self, name: &str) -> Result<String, ExprError> {
        let key = name.to_ascii_lowercase();
        if is_builtin(&key)
            || self.scalars.contains_key(&key)
            || self.aggregates.contains_key(&key)
            || self.tables.contains_key(&key)
        {
            return Err(ExprError::DuplicateFunction { name: name.into() });
        }
        Ok(key)
    }

    /// Registers a scalar UDF; its name must not be a built-in's or already registered.
    pub fn register_scalar(&mut self, udf: ScalarUdf) -> Result<(), ExprError> {
        let key = self.check_free(&udf.name)?;
        self.scalars.insert(key, Arc::new(udf));
        Ok(())
    }

    /// Registers an aggregate UDF under its [`AggregateUdf::name`].
    pub fn register_aggregate(&mut self, udaf: Arc<dyn AggregateUdf>) -> Result<(), ExprError> {
        let key = self.check_free(udaf.name())?;
        self.aggregates.insert(key, udaf);
        Ok(())
    }

    /// Registers a table function (UDTF) under its [`TableFunction::name`].
    pub fn register_table(&mut self, udtf: Arc<dyn TableFunction>) -> Result<(), ExprError> {
        let key = self.check_free(udtf.name())?;
        self.tables.insert(key, udtf);
        Ok(())
    }

    /// The table function named `name` (case-insensitive).
    pub fn table(&self, name: &str) -> Option<&Arc<dyn TableFunction>> {
        self.tables.get(&name.to_ascii_lowercase())
    }

    /// The scalar UDF named `name` (case-insensitive).
    pub fn scalar(&self, name: &str) -> Option<&Arc<ScalarUdf>> {
        self.scalars.get(&name.to_ascii_lowercase())
    }

    /// The aggregate UDF named `name` (case-insensitive).
    pub fn aggregate(&self, name: &str) -> Option<&Arc<dyn AggregateUdf>> {
        self.aggregates.get(&name.to_ascii_lowercase())
    }

    /// The registered names, for "did you mean" hints.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.scalars
            .keys()
            .chain(self.aggregates.keys())
            .map(String::as_str)
    }
}
