//! Regular joins in the Table API: `join`, `left_outer_join`, `right_outer_join`,
//! `full_outer_join` (Flink's `join`, `leftOuterJoin`, `rightOuterJoin`, `fullOuterJoin`),
//! lowered onto the plan's [`Join`](crate::plan::Node::Join) node.
//!
//! The predicate is split as the temporal joins split theirs: each `left_column =
//! right_column` conjunct is an equality key, the rest is the residual, part of the ON clause
//! (an outer join pads a row whose partners all fail it). At least one equality is required
//! (Flink's Table API rule). Columns are named as in the join's output: the left's, then the
//! right's, a right column whose name is taken getting the suffix `0` (`k0`).

use crate::expr::Expr;
use crate::plan::lower::plan_equi_join;
use crate::plan::JoinType;

use super::Table;

impl Table {
    /// `self JOIN right ON predicate`: the pairs of rows that match (equal keys, free of NULLs,
    /// and the rest of the predicate TRUE), on inputs that may be updating.
    ///
    /// Errors (deferred to the plan's `Result`): no equality between a left and a right column
    /// ("Invalid join condition: ... At least one equi-join predicate is required."), an unknown
    /// column, a predicate that is not BOOLEAN.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("Names", &dir.write("n.csv", "k,name\nx,ex\nz,zed\n"), None).unwrap();
    /// let joined = env.from("Orders").join(&env.from("Names"), col("a").eq(col("k")));
    /// assert_eq!(joined.execute().unwrap().rows_as_text(), vec!["x,1,x,ex", "x,2,x,ex"]);
    /// ```
    pub fn join(&self, right: &Table, predicate: Expr) -> Table {
        self.equi_join(right, predicate, JoinType::Inner, "join")
    }

    /// `self LEFT OUTER JOIN right ON predicate`: the matches, and each left row without one
    /// padded with NULLs; the padded row is retracted when a match arrives and comes back when
    /// the last one leaves. Errors as [`join`](Table::join).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("Names", &dir.write("n.csv", "k,name\nx,ex\nz,zed\n"), None).unwrap();
    /// let joined = env.from("Orders").left_outer_join(&env.from("Names"), col("a").eq(col("k")));
    /// assert_eq!(joined.execute().unwrap().rows_as_text(), vec!["x,1,x,ex", "x,2,x,ex", "y,3,,"]);
    /// ```
    pub fn left_outer_join(&self, right: &Table, predicate: Expr) -> Table {
        self.equi_join(right, predicate, JoinType::Left, "left_outer_join")
    }

    /// `self RIGHT OUTER JOIN right ON predicate`: the matches, and each right row without one
    /// padded with NULLs. Errors as [`join`](Table::join).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("Names", &dir.write("n.csv", "k,name\nx,ex\nz,zed\n"), None).unwrap();
    /// let joined = env.from("Orders").right_outer_join(&env.from("Names"), col("a").eq(col("k")));
    /// assert_eq!(joined.execute().unwrap().rows_as_text(), vec![",,z,zed", "x,1,x,ex", "x,2,x,ex"]);
    /// ```
    pub fn right_outer_join(&self, right: &Table, predicate: Expr) -> Table {
        self.equi_join(right, predicate, JoinType::Right, "right_outer_join")
    }

    /// `self FULL OUTER JOIN right ON predicate`: the matches, and every row of either side
    /// without one padded with NULLs. Errors as [`join`](Table::join).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("Names", &dir.write("n.csv", "k,name\nx,ex\nz,zed\n"), None).unwrap();
    /// let joined = env.from("Orders").full_outer_join(&env.from("Names"), col("a").eq(col("k")));
    /// assert_eq!(
    ///     joined.execute().unwrap().rows_as_text(),
    ///     vec![",,z,zed", "x,1,x,ex", "x,2,x,ex", "y,3,,"]
    /// );
    /// ```
    pub fn full_outer_join(&self, right: &Table, predicate: Expr) -> Table {
        self.equi_join(right, predicate, JoinType::Full, "full_outer_join")
    }

    fn equi_join(
        &self,
        right: &Table,
        predicate: Expr,
        join_type: JoinType,
        operation: &'static str,
    ) -> Table {
        let registry = self.env.functions();
        let state_ttl = self.env.options().state_ttl;
        match right.plan.clone() {
            Err(e) => Table::new(&self.env, Err(e)),
            Ok(right) => self.then(operation, move |left| {
                let shown = predicate.to_string();
                let join = (join_type, state_ttl);
                plan_equi_join(left, right, &predicate, &shown, join, &registry)
            }),
        }
    }
}
