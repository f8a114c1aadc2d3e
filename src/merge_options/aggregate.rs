//! The aggregate functions of the `aggregation` engines (Paimon `'fields.<f>.aggregate-function'`,
//! Fluss `'fields.<f>.agg'`) and of Paimon `partial-update` ("Aggregation For Partial Update").

use super::{
    bad_value, fluss_deletes, MergeOptionsError, Options, Result, DEFAULT_AGGREGATE_FUNCTION,
};
use crate::merge_engine::{
    AggDeletes, AggFunction, Aggregation, FieldAgg, MergeEngine, OrderField, SequenceGroup,
};
use crate::repr::DataType;

/// Parses an aggregate function name, accepting Fluss's spellings too.
fn agg_function(key: &str, name: &str) -> Result<AggFunction> {
    let paimon = match name.trim().to_ascii_lowercase().as_str() {
        "last_value_ignore_nulls" => "last_non_null_value".to_string(),
        "first_value_ignore_nulls" => "first_non_null_value".to_string(),
        "string_agg" => "listagg".to_string(),
        other => other.to_string(),
    };
    paimon
        .parse()
        .map_err(|valid: String| bad_value(key, name, &valid))
}

/// `fields.default-aggregate-function`, if given.
fn default_function(opts: &Options) -> Result<Option<AggFunction>> {
    let key = DEFAULT_AGGREGATE_FUNCTION;
    opts.get(key)
        .map(|name| agg_function(key, name))
        .transpose()
}

/// The columns an option may not give a function: sequence columns, and why.
struct Fixed<'a> {
    columns: Vec<usize>,
    why: &'a str,
}

/// Per column, its aggregation: `base(c)` for each non-key column, then the per-field options
/// (`.aggregate-function` or Fluss's `.agg`, `.ignore-retract`, the `listagg` delimiter). A key
/// column or a `fixed` one cannot be configured; `ignore-retract` or a delimiter on a column
/// without a function is a conflict.
fn field_aggs(
    opts: &Options,
    key: &[usize],
    fixed: &Fixed,
    base: impl Fn(usize) -> Option<AggFunction>,
) -> Result<Vec<Option<FieldAgg>>> {
    let agg =
        |c: usize, function| FieldAgg::new(opts.header[c].clone(), function, opts.types[c].clone());
    let mut fields: Vec<Option<FieldAgg>> = (0..opts.header.len())
        .map(|c| base(c).filter(|_| !key.contains(&c)).map(|f| agg(c, f)))
        .collect();
    let column = |k: &str, name: &str| {
        let c = opts.column(k, name)?;
        let conflict = |why: &str| {
            let message = format!("'{k}': column '{name}' is {why}");
            Err(MergeOptionsError::Conflict(message))
        };
        if key.contains(&c) {
            return conflict("a primary-key column and cannot be aggregated");
        }
        if fixed.columns.contains(&c) {
            return conflict(fixed.why);
        }
        Ok(c)
    };
    for suffix in [".aggregate-function", ".agg"] {
        for (k, name, value) in opts.per_field(suffix) {
            let c = column(k, name)?;
            fields[c] = Some(agg(c, agg_function(k, value)?));
        }
    }
    let mut configured = Vec::new();
    for (k, name, _) in opts.per_field(".ignore-retract") {
        configured.push((column(k, name)?, k, name, Some(opts.flag(k)?), None));
    }
    for suffix in [".list-agg-delimiter", ".listagg.delimiter"] {
        for (k, name, value) in opts.per_field(suffix) {
            configured.push((column(k, name)?, k, name, None, Some(value)));
        }
    }
    for (c, k, name, ignore_retract, delimiter) in configured {
        let Some(f) = fields[c].as_mut() else {
            let message = format!("'{k}': column '{name}' has no aggregate function");
            return Err(MergeOptionsError::Conflict(message));
        };
        f.ignore_retract = ignore_retract.unwrap_or(f.ignore_retract);
        f.delimiter = delimiter.map_or(f.delimiter.clone(), str::to_string);
    }
    for f in fields.iter().flatten() {
        check_type(f)?;
    }
    Ok(fields)
}

/// Refuses a function over a typed column whose type it cannot take (module docs of
/// [`merge_options`](super)); a STRING column takes every function (the text rules).
fn check_type(f: &FieldAgg) -> Result<()> {
    use AggFunction::*;
    let ty = &f.ty;
    let (takes, valid) = match f.function {
        Sum | Product => (ty.is_numeric(), "numeric types"),
        Count => (ty.is_integer(), "integer types"),
        ListAgg => (false, "string types"),
        BoolAnd | BoolOr => (*ty == DataType::Boolean, "BOOLEAN"),
        Max | Min | LastValue | LastNonNullValue | FirstValue | FirstNonNullValue => {
            (true, "every type")
        }
    };
    if takes || ty.is_string() {
        return Ok(());
    }
    Err(MergeOptionsError::Conflict(format!(
        "aggregate function '{}' of column '{}' does not take its type {ty}; it takes {valid}",
        f.function, f.name
    )))
}

/// `aggregation`, Paimon's or (`fluss`) Fluss's: they differ in delete handling only
/// ([`AggDeletes`]). Every non-key column is aggregated (default `last_non_null_value`), the
/// `sequence.field` columns by `last_value`.
pub(super) fn aggregation(opts: &Options, key: &[usize], fluss: bool) -> Result<MergeEngine> {
    let sequence = match opts.get("sequence.field") {
        Some(list) => opts.order_fields("sequence.field", list)?,
        None => Vec::new(),
    };
    let default = default_function(opts)?.unwrap_or(AggFunction::LastNonNullValue);
    let fixed = Fixed {
        columns: sequence.iter().map(|s: &OrderField| s.column).collect(),
        why: "a sequence.field, always merged as last_value",
    };
    let fields = field_aggs(opts, key, &fixed, |c| {
        Some(match fixed.columns.contains(&c) {
            true => AggFunction::LastValue,
            false => default,
        })
    })?;
    let deletes = if fluss {
        AggDeletes::Fluss(fluss_deletes(opts, "aggregation")?)
    } else if opts.flag("aggregation.remove-record-on-delete")? {
        AggDeletes::RemoveRecordOnDelete
    } else {
        AggDeletes::Retract
    };
    Ok(MergeEngine::Aggregation(Aggregation {
        fields,
        sequence,
        deletes,
    }))
}

/// The aggregate functions of a `partial-update` table (Paimon "Aggregation For Partial
/// Update"): per field, or `fields.default-aggregate-function` for every column that is neither
/// key nor a sequence column. Paimon refuses them without sequence groups ("Must use sequence
/// group for aggregation functions."), and so do we.
pub(super) fn partial_update_aggs(
    opts: &Options,
    key: &[usize],
    groups: &[SequenceGroup],
) -> Result<Vec<Option<FieldAgg>>> {
    let default = default_function(opts)?;
    let fixed = Fixed {
        columns: groups
            .iter()
            .flat_map(|g| g.sequence.iter().map(|s| s.column))
            .collect(),
        why: "a sequence-group's sequence field and cannot be aggregated",
    };
    let fields = field_aggs(opts, key, &fixed, |c| {
        default.filter(|_| !fixed.columns.contains(&c))
    })?;
    if groups.is_empty() && fields.iter().any(Option::is_some) {
        return Err(MergeOptionsError::Conflict(
            "Must use sequence group for aggregation functions.".to_string(),
        ));
    }
    Ok(fields)
}
