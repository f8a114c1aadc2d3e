//! Sort keys for the Table API's `order_by`: `col("a").asc()`, `col("b").desc().nulls_last()`
//! (Flink's `$("a").asc()`, `$("b").desc()`).

use super::Expr;

/// An expression with a direction and a NULL placement, for `order_by`.
#[derive(Clone, Debug, PartialEq)]
pub struct SortExpr {
    /// What is sorted by (a column of the table).
    pub expr: Expr,
    /// `DESC` (or `ASC`).
    pub descending: bool,
    /// `NULLS FIRST` (`Some(true)`) or `NULLS LAST`; `None`: NULL is the smallest value.
    pub nulls_first: Option<bool>,
}

impl Expr {
    /// `self ASC` (NULLs first unless [`SortExpr::nulls_last`]).
    pub fn asc(self) -> SortExpr {
        SortExpr {
            expr: self,
            descending: false,
            nulls_first: None,
        }
    }

    /// `self DESC` (NULLs last unless [`SortExpr::nulls_first`]).
    pub fn desc(self) -> SortExpr {
        SortExpr {
            expr: self,
            descending: true,
            nulls_first: None,
        }
    }
}

impl SortExpr {
    /// `.. NULLS FIRST`.
    pub fn nulls_first(self) -> SortExpr {
        SortExpr {
            nulls_first: Some(true),
            ..self
        }
    }

    /// `.. NULLS LAST`.
    pub fn nulls_last(self) -> SortExpr {
        SortExpr {
            nulls_first: Some(false),
            ..self
        }
    }
}
