//! Set operations in the Table API: `union`, `union_all`, `intersect`, `intersect_all`,
//! `minus`, `minus_all` (Flink's names), lowered onto the plan's
//! [`SetOp`](crate::plan::Node::SetOp) node, with SQL's multiset semantics on updating inputs
//! (the table of multiplicities is in [`SetOpKind`]). Flink's Table API page marks all but
//! `unionAll` batch-only; here each is maintained incrementally on streams.

use crate::plan::SetOpKind;

use super::Table;

impl Table {
    /// `self UNION right`: each row of either table once. The two tables must have as many
    /// columns, of the same types; the output takes this table's column names.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("T2", &dir.write("t2.csv", "s\nx\nz\nz\n"), None).unwrap();
    /// let rows = env.from("Orders").select([col("a")]).union(&env.from("T2"));
    /// assert_eq!(rows.execute().unwrap().rows_as_text(), vec!["x", "y", "z"]);
    /// ```
    pub fn union(&self, right: &Table) -> Table {
        self.set_op(right, SetOpKind::Union, false, "union")
    }

    /// `self UNION ALL right`: the rows of both tables, multiplicities added. Append-only when
    /// both inputs are.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("T2", &dir.write("t2.csv", "s\nx\nz\nz\n"), None).unwrap();
    /// let rows = env.from("Orders").select([col("a")]).union_all(&env.from("T2"));
    /// assert_eq!(rows.execute().unwrap().rows_as_text(), vec!["x", "x", "x", "y", "z", "z"]);
    /// ```
    pub fn union_all(&self, right: &Table) -> Table {
        self.set_op(right, SetOpKind::Union, true, "union_all")
    }

    /// `self INTERSECT right`: each row that both tables hold, once.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("T2", &dir.write("t2.csv", "s\nx\nz\nz\n"), None).unwrap();
    /// let rows = env.from("Orders").select([col("a")]).intersect(&env.from("T2"));
    /// assert_eq!(rows.execute().unwrap().rows_as_text(), vec!["x"]);
    /// ```
    pub fn intersect(&self, right: &Table) -> Table {
        self.set_op(right, SetOpKind::Intersect, false, "intersect")
    }

    /// `self INTERSECT ALL right`: each row as many times as the table holding it fewer times.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("T2", &dir.write("t2.csv", "s\nx\nx\nx\n"), None).unwrap();
    /// let rows = env.from("Orders").select([col("a")]).intersect_all(&env.from("T2"));
    /// assert_eq!(rows.execute().unwrap().rows_as_text(), vec!["x", "x"]);
    /// ```
    pub fn intersect_all(&self, right: &Table) -> Table {
        self.set_op(right, SetOpKind::Intersect, true, "intersect_all")
    }

    /// `self EXCEPT right` (Flink's `minus`): each row of this table that `right` does not
    /// hold, once.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("T2", &dir.write("t2.csv", "s\nx\nz\n"), None).unwrap();
    /// let rows = env.from("Orders").select([col("a")]).minus(&env.from("T2"));
    /// assert_eq!(rows.execute().unwrap().rows_as_text(), vec!["y"]);
    /// ```
    pub fn minus(&self, right: &Table) -> Table {
        self.set_op(right, SetOpKind::Except, false, "minus")
    }

    /// `self EXCEPT ALL right` (Flink's `minusAll`): each row as many times as this table holds
    /// it more often than `right` does.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, dir) = doc_env();
    /// env.register_csv("T2", &dir.write("t2.csv", "s\nx\nz\n"), None).unwrap();
    /// let rows = env.from("Orders").select([col("a")]).minus_all(&env.from("T2"));
    /// assert_eq!(rows.execute().unwrap().rows_as_text(), vec!["x", "y"]);
    /// ```
    pub fn minus_all(&self, right: &Table) -> Table {
        self.set_op(right, SetOpKind::Except, true, "minus_all")
    }

    fn set_op(&self, right: &Table, op: SetOpKind, all: bool, operation: &'static str) -> Table {
        match right.plan.clone() {
            Err(e) => Table::new(&self.env, Err(e)),
            Ok(right) => self.then(operation, move |left| left.set_op(right, op, all)),
        }
    }
}
