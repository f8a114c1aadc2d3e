//! Reading a versioned table: as of a constant event time ([`RelExpr::as_of`]) or as the
//! history of its versions ([`RelExpr::history`]).

use crate::repr::{Field, Schema, Ts};

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
        // An upsert source's rows are its versions: not normalized (rule A12).
        let this = self.as_versions();
        let key = this.versioned_key("AsOf", "reading a table as of an event time")?;
        let schema = this.schema.clone();
        Ok(RelExpr {
            node: Node::AsOf {
                input: Box::new(this),
                at,
            },
            schema,
            mode: Mode::Updating {
                upsert_key: Some(key),
            },
        })
    }

    /// The history of the versioned table `self` (semantics rule A2): every version that is a
    /// row (not a delete), once, with the event time at which it stops being valid appended as
    /// a column `valid_to` (the key's next version's rowtime, a delete included, exclusive;
    /// NULL while it is current). The version's own rowtime column is its `valid_from`. Versions
    /// are made as [`as_of`](Self::as_of) makes them (`-U` none, a NULL rowtime refused). The
    /// output is updating, without a key: a later version closes the row before it (`-U` of
    /// the open row, `+U` of it closed), an earlier one arriving late splits an interval.
    ///
    /// Errors: `self` has no primary key or no rowtime attribute.
    ///
    /// ```
    /// use differential_temporal::plan::RelExpr;
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let rates = Schema::builder()
    ///     .column("currency", DataType::STRING.not_null())
    ///     .column("rate", DataType::BigInt.nullable())
    ///     .column("update_time", DataType::Timestamp(3).not_null())
    ///     .primary_key(["currency"])
    ///     .rowtime("update_time", 0)
    ///     .build()
    ///     .unwrap();
    /// let history = RelExpr::scan("rates", rates, true).history()?;
    /// assert_eq!(history.schema.fields[3].name, "valid_to");
    /// assert!(history.schema.fields[3].ty.nullable);
    /// # Ok::<(), differential_temporal::plan::PlanError>(())
    /// ```
    pub fn history(self) -> Result<RelExpr, PlanError> {
        // An upsert source's rows are its versions: not normalized (rule A12).
        let this = self.as_versions();
        this.versioned_key("History", "the history of a table")?;
        let rowtime = this.schema.rowtime.as_ref().expect("checked").column;
        let mut fields = this.schema.fields.clone();
        let mut name = "valid_to".to_string();
        while fields.iter().any(|f| f.name == name) {
            name.insert(0, '$');
        }
        let ty = fields[rowtime].ty.data_type.clone().nullable();
        fields.push(Field::new(name, ty));
        let schema = Schema::new(fields).expect("the appended name is unused");
        Ok(RelExpr {
            node: Node::History {
                input: Box::new(this),
            },
            schema,
            mode: Mode::Updating { upsert_key: None },
        })
    }

    /// The primary key of `self` as a versioned table (a primary key and a rowtime attribute),
    /// for the `node` doing `what`.
    fn versioned_key(&self, node: &'static str, what: &str) -> Result<Vec<usize>, PlanError> {
        let Some(key) = self.schema.primary_key.clone() else {
            return Err(PlanError::invalid(
                node,
                format!("{what} needs a versioned table, but it has no primary key"),
            ));
        };
        if self.schema.rowtime.is_none() {
            return Err(PlanError::invalid(
                node,
                format!("{what} needs a versioned table, but it has no rowtime attribute"),
            ));
        }
        Ok(key)
    }
}
