//! ASOF joins in the Table API (`asof_join`), lowered onto the plan's
//! [`AsofJoin`](crate::plan::AsofJoin) node; the SQL binder lowers `ASOF [LEFT] JOIN` through the
//! same lowering, so both forms agree.
//!
//! The condition is split as [`plan::lower`](crate::plan::lower)'s ASOF lowering documents:
//! equality keys, exactly one match condition (`>=`, `>`, `<=`, `<` or `NEAREST`), and
//! conditions on the build side alone, applied before the match is chosen.

use crate::expr::Expr;
use crate::plan::lower::plan_asof_join;
use crate::plan::{JoinKind, Tolerance};

use super::Table;

impl Table {
    /// `self ASOF [LEFT] JOIN build ON condition`: each row of `self` joined with the one row of
    /// `build` of equal keys whose ordering value is the closest to its own in the direction of
    /// the match condition: `col("t").ge(col("t0"))` takes the latest build row at or before
    /// `t` (`gt`: strictly before, `le`/`lt`: the earliest at or after / strictly after),
    /// `call("NEAREST", [col("t"), col("t0")])` the nearest either side (the earlier at equal
    /// distance). `tolerance` is the largest distance a match may have. `kind`: INNER drops a
    /// row without a match, LEFT pads it with NULLs. See [`AsofJoin`](crate::plan::AsofJoin) for
    /// ties (the latest arrival wins), NULLs (never match) and updating inputs (exact at every
    /// system time: a late build row retracts and re-emits the rows whose match it changes).
    ///
    /// Errors (deferred to the plan's `Result`): no match condition or more than one, a
    /// condition that is neither a key, the match condition nor a build-side filter, ordering
    /// columns that are not integers, DATE, TIME or TIMESTAMP or not of one kind, a tolerance
    /// that does not fit them.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::plan::{JoinKind, Tolerance};
    /// use differential_temporal::repr::{DataType, Schema};
    /// let (env, dir) = doc_env();
    /// let schema = |key: &str, time: &str, value: Option<&str>| {
    ///     let builder = Schema::builder()
    ///         .column(key, DataType::STRING.not_null())
    ///         .column(time, DataType::BigInt.not_null());
    ///     let builder = match value {
    ///         Some(v) => builder.column(v, DataType::BigInt.not_null()),
    ///         None => builder,
    ///     };
    ///     builder.build().unwrap()
    /// };
    /// let trades = dir.write("t.csv", "sym,t\nA,10\nA,20\nB,5\n");
    /// let quotes = dir.write("q.csv", "qsym,qt,px\nA,8,100\nA,19,101\nB,9,7\n");
    /// env.register_csv("Trades", &trades, Some(schema("sym", "t", None))).unwrap();
    /// env.register_csv("Quotes", &quotes, Some(schema("qsym", "qt", Some("px")))).unwrap();
    /// let latest = env.from("Trades").asof_join(
    ///     &env.from("Quotes"),
    ///     col("sym").eq(col("qsym")).and(col("t").ge(col("qt"))),
    ///     JoinKind::Left,
    ///     Some(Tolerance::Number(5)),
    /// );
    /// // A at 10 takes the quote of 8, A at 20 the quote of 19; B at 5 has none before it.
    /// assert_eq!(
    ///     latest.execute().unwrap().rows_as_text(),
    ///     vec!["A,10,A,8,100", "A,20,A,19,101", "B,5,,,"]
    /// );
    /// ```
    pub fn asof_join(
        &self,
        build: &Table,
        condition: Expr,
        kind: JoinKind,
        tolerance: Option<Tolerance>,
    ) -> Table {
        let registry = self.env.functions();
        match build.plan.clone() {
            Err(e) => Table::new(&self.env, Err(e)),
            Ok(build) => self.then("asof_join", move |probe| {
                plan_asof_join(probe, build, &condition, kind, tolerance, &registry)
            }),
        }
    }
}
