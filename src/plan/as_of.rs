//! Reading a versioned table as of a constant event time: [`RelExpr::as_of`].

use crate::repr::Ts;

use super::{Mode, Node, PlanError, RelExpr};

impl RelExpr {
    /// The versioned table `self` read as of the event time `at` (semantics rules A1-A5): per
    /// primary key, the row of the version with the greatest `(rowtime, seq)` such that
    /// `rowtime <= at` (a version stamped exactly `at` is visible), none if there is no such
    /// version or it is a delete. `self` is a versioned table as the build side of a temporal
    /// join is one: a primary key and a rowtime attribute; of a changelog, `+I`/`+U` rows are
    /// versions, `-D` rows delete versions, `-U` rows none (rule A5); of an append-only table,
    /// every row is a version. The output has `self`'s schema and is updating by the primary
    /// key: a version that arrives late (an earlier rowtime, later in the input) revises it.
    /// Rows whose rowtime is NULL are refused.
    ///
    /// Errors: `self` has no primary key or no rowtime attribute.
    ///
    /// ```
    /// use differential_temporal::plan::RelExpr;
    /// use differential_temporal::repr::{DataType, Schema, Ts};
    ///
    /// let products = Schema::builder()
    ///     .column("product_id", DataType::STRING.not_null())
    ///     .column("price", DataType::decimal(10, 2).unwrap().nullable())
    ///     .column("update_time", DataType::Timestamp(3).not_null())
    ///     .primary_key(["product_id"])
    ///     .rowtime("update_time", 0)
    ///     .build()
    ///     .unwrap();
    /// let ten = Ts::from_millis(1_704_103_200_000); // 2024-01-01 10:00:00
    /// let at_ten = RelExpr::scan("products", products, true).as_of(ten)?;
    /// assert!(at_ten.explain().starts_with("AsOf(at=2024-01-01 10:00:00)"));
    /// # Ok::<(), differential_temporal::plan::PlanError>(())
    /// ```
    pub fn as_of(self, at: Ts) -> Result<RelExpr, PlanError> {
        let Some(key) = self.schema.primary_key.clone() else {
            return Err(PlanError::invalid(
                "AsOf",
                "reading a table as of an event time needs a versioned table, but it has no primary key",
            ));
        };
        if self.schema.rowtime.is_none() {
            return Err(PlanError::invalid(
                "AsOf",
                "reading a table as of an event time needs a versioned table, but it has no rowtime attribute",
            ));
        }
        let schema = self.schema.clone();
        Ok(RelExpr {
            node: Node::AsOf {
                input: Box::new(self),
                at,
            },
            schema,
            mode: Mode::Updating {
                upsert_key: Some(key),
            },
        })
    }
}
