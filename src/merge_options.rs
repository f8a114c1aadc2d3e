//! Merge-engine options as users write them (Fluss / Paimon table options), validated against a
//! table's header and turned into a [`MergeEngine`].
//!
//! ```text
//! 'table.merge-engine' = 'versioned'                      Fluss: first_row | versioned | aggregation
//! 'table.merge-engine.versioned.ver-column' = 'ts'        required for versioned
//! 'table.delete.behavior' = 'ignore' | 'disable'          Fluss engines (default ignore)
//!                         | 'allow'                       Fluss aggregation only: -D removes the row
//! 'merge-engine' = 'partial-update'                       Paimon: deduplicate (default) | first-row
//!                                                         | partial-update | aggregation
//! 'sequence.field' = 'a,b'                                deduplicate, aggregation
//! 'ignore-delete' = 'true'                                Paimon engines
//! 'partial-update.remove-record-on-delete' = 'true'
//! 'fields.<seq>.sequence-group' = 'a,b'                   partial-update (<seq> may be 's1,s2')
//! 'partial-update.remove-record-on-sequence-group' = 's'
//! 'fields.<f>.aggregate-function' = 'sum'                 aggregation (Fluss spelling: fields.<f>.agg),
//!                                                         partial-update (in sequence groups)
//! 'fields.default-aggregate-function' = 'last_value'
//! 'fields.<f>.ignore-retract' = 'true'                   Paimon aggregation, partial-update
//! 'aggregation.remove-record-on-delete' = 'true'          Paimon aggregation: -D removes the row
//! 'fields.<f>.list-agg-delimiter' = ';'                   (Fluss spelling: fields.<f>.listagg.delimiter)
//! 'fields.<f>.type' = 'TIMESTAMP(3)'                      declares a column's type (any engine)
//! 'dtemporal.honor-deletes' = 'true'                      ours: first_row / versioned apply deletes
//! ```
//!
//! **Column types.** The table's [`Schema`] gives each column's type. A typed column (a
//! command's `--schema`) is read as its type: an ordering column (the version column,
//! `sequence.field` columns, sequence-group columns) must then be `INT`, `BIGINT`,
//! `TIMESTAMP(p)` or `TIMESTAMP_LTZ(p)` (Fluss's rule), and an aggregate function must take
//! the type (`sum`, `product`: numbers; `count`: integers; `listagg`: strings; `bool_and`,
//! `bool_or`: `BOOLEAN`; the others any type). A `STRING` column (every column of a CSV header
//! read without a schema) holds text: compared as an ordering column it is `BIGINT` unless
//! declared with `'fields.<f>.type'` (`INT`, `BIGINT`, `TIMESTAMP[(p)]`, `TIMESTAMP_LTZ[(p)]`;
//! other SQL type names such as `STRING` or `DOUBLE` are accepted as declarations but refused
//! for an ordering column), and aggregated by the text rules of
//! [`Aggregation`](crate::merge_engine::Aggregation). `'fields.<f>.type'` on a column the
//! schema types is a conflict.
//!
//! **Beyond the reference systems.** `'dtemporal.honor-deletes' = 'true'` makes `first_row` and
//! `versioned` apply `-D`/`-U` writes (Fluss only ignores or refuses them, and refuses
//! `'table.delete.behavior' = 'allow'` for these engines, as we do).

use std::collections::BTreeMap;

use crate::merge_engine::{
    Deduplicate, Deletes, FirstRow, MergeEngine, OrderField, OrderType, PartialDeletes,
    PartialUpdate, SequenceGroup, Versioned,
};
use crate::repr::{DataType, Schema};

mod aggregate;
mod error;

pub use error::MergeOptionsError;

type Result<T> = std::result::Result<T, MergeOptionsError>;

/// Parses one command-line option `KEY=VALUE`; quotes around key and value and spaces around
/// `=` are optional (`'fields.b.aggregate-function' = 'sum'`).
pub fn parse_option(text: &str) -> Result<(String, String)> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| MergeOptionsError::Malformed(text.to_string()))?;
    let unquote = |s: &str| {
        let s = s.trim();
        s.strip_prefix('\'')
            .and_then(|s| s.strip_suffix('\''))
            .unwrap_or(s)
            .to_string()
    };
    let key = unquote(key);
    if key.is_empty() {
        return Err(MergeOptionsError::Malformed(text.to_string()));
    }
    Ok((key, unquote(value)))
}

/// The options of one table, looked up by key; records which keys were used.
struct Options<'a> {
    map: BTreeMap<&'a str, &'a str>,
    header: &'a [String],
    /// The columns' types, in header order.
    types: &'a [DataType],
}

/// Per-column option suffixes (`fields.<column><suffix>`), longest first.
const FIELD_SUFFIXES: [&str; 7] = [
    ".listagg.delimiter",
    ".list-agg-delimiter",
    ".aggregate-function",
    ".ignore-retract",
    ".sequence-group",
    ".type",
    ".agg",
];

impl<'a> Options<'a> {
    fn get(&self, key: &str) -> Option<&'a str> {
        self.map.get(key).copied()
    }

    fn flag(&self, key: &str) -> Result<bool> {
        match self.get(key).map(str::to_ascii_lowercase).as_deref() {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(v) => Err(bad_value(key, v, "true, false")),
        }
    }

    fn columns(&self) -> String {
        self.header.join(", ")
    }

    fn column(&self, key: &str, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name.trim())
            .ok_or_else(|| MergeOptionsError::UnknownColumn {
                key: key.to_string(),
                column: name.trim().to_string(),
                columns: self.columns(),
            })
    }

    /// `fields.<column><suffix>` options: `(key, column, value)`.
    fn per_field(&self, suffix: &str) -> Vec<(&'a str, &'a str, &'a str)> {
        self.map
            .iter()
            .filter_map(|(k, v)| Some((*k, field_of(k)?, *v)))
            .filter(|(k, (_, s), _)| *s == suffix && !k.is_empty())
            .map(|(k, (c, _), v)| (k, c, v))
            .collect()
    }

    /// The type of a column in the schema.
    fn column_type(&self, column: &str) -> Option<&'a DataType> {
        let at = self.header.iter().position(|h| h == column)?;
        self.types.get(at)
    }

    /// The ordering type of a column: its schema type if it is typed, else the type declared
    /// by `fields.<f>.type`, `BIGINT` if undeclared; `Err(type)` for a type that cannot order.
    fn order_type(&self, column: &str) -> Result<std::result::Result<OrderType, String>> {
        let key = format!("fields.{column}.type");
        if let Some(ty) = self.column_type(column).filter(|t| !t.is_string()) {
            if self.get(&key).is_some() {
                return Err(MergeOptionsError::Conflict(format!(
                    "'{key}': column '{column}' has the type {ty} in the table's schema; 'fields.<f>.type' declares the type of a STRING column"
                )));
            }
            return Ok(OrderType::of(ty).ok_or_else(|| ty.to_string()));
        }
        match self.get(&key) {
            None => Ok(Ok(OrderType::BigInt)),
            Some(ty) => match ty.parse::<OrderType>() {
                Ok(t) => Ok(Ok(t)),
                Err(_) if is_sql_type(ty) => Ok(Err(ty.trim().to_ascii_uppercase())),
                Err(_) => Err(bad_value(&key, ty, SQL_TYPES)),
            },
        }
    }

    /// Ordering columns from a comma-separated list (e.g. `sequence.field`).
    fn order_fields(&self, key: &str, list: &str) -> Result<Vec<OrderField>> {
        list.split(',')
            .map(|name| {
                let name = name.trim();
                let column = self.column(key, name)?;
                let ty =
                    self.order_type(name)?
                        .map_err(|ty| MergeOptionsError::WrongSequenceType {
                            column: name.to_string(),
                            ty,
                        })?;
                Ok(OrderField {
                    column,
                    name: name.to_string(),
                    ty,
                })
            })
            .collect()
    }
}

/// Splits `fields.<column><suffix>` into `(column, suffix)`.
fn field_of(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix("fields.")?;
    FIELD_SUFFIXES
        .iter()
        .find_map(|s| rest.strip_suffix(s).map(|c| (c, *s)))
        .filter(|(c, _)| !c.is_empty())
}

const SQL_TYPES: &str = "INT, INTEGER, BIGINT, SMALLINT, TINYINT, TIMESTAMP[(p)], TIMESTAMP_LTZ[(p)], STRING, VARCHAR, CHAR, DOUBLE, FLOAT, DECIMAL, BOOLEAN, DATE, TIME, BYTES";

fn is_sql_type(ty: &str) -> bool {
    let upper = ty.trim().to_ascii_uppercase();
    let base = upper.split('(').next().unwrap_or("").trim();
    // A malformed TIMESTAMP(p) is not a type; valid ones parse as ordering types first.
    !base.starts_with("TIMESTAMP")
        && SQL_TYPES
            .split(", ")
            .any(|t| t.split('[').next() == Some(base))
}

fn bad_value(key: &str, value: &str, valid: &str) -> MergeOptionsError {
    MergeOptionsError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        valid: valid.to_string(),
    }
}

/// Builds the merge engine configured by `options` for a table with columns `schema` and
/// primary-key columns `key` (names from the schema).
///
/// The schema's types are the columns' types (module docs): [`Schema::strings`] for a table
/// of text columns (a CSV header read without declared types).
///
/// Validates every option up front: an unknown key, a missing required option, an unknown
/// column, an undeclarable or wrong type (an ordering column or an aggregate function that
/// cannot take its column's type) or a bad value is a [`MergeOptionsError`] listing the valid
/// choices. Without an engine key the table is Paimon `deduplicate` (which is also Fluss's
/// default last-row engine).
///
/// # Examples
///
/// ```
/// use differential_temporal::merge_options::{merge_engine_from_options, parse_option};
/// use differential_temporal::repr::Schema;
/// use differential_temporal::sql::parse_columns;
///
/// let header: Vec<String> = ["a", "b", "ts"].map(String::from).to_vec();
/// let text = Schema::strings(&header);
/// let options = vec![
///     parse_option("'table.merge-engine' = 'versioned'").unwrap(),
///     parse_option("table.merge-engine.versioned.ver-column=ts").unwrap(),
/// ];
/// let engine = merge_engine_from_options(&options, &text, &["a".to_string()]).unwrap();
/// assert_eq!(engine.name(), "versioned");
///
/// let missing = vec![parse_option("table.merge-engine=versioned").unwrap()];
/// let err = merge_engine_from_options(&missing, &text, &["a".to_string()]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "'table.merge-engine.versioned.ver-column' must be set for versioned merge engine."
/// );
///
/// // A typed version column must be INT, BIGINT, TIMESTAMP or TIMESTAMP_LTZ.
/// let typed = parse_columns("a BIGINT, b STRING, ts DOUBLE").unwrap();
/// let err = merge_engine_from_options(&options, &typed, &["a".to_string()]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "The version column 'ts' for versioned merge engine must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got DOUBLE."
/// );
/// ```
pub fn merge_engine_from_options(
    options: &[(String, String)],
    schema: &Schema,
    key: &[String],
) -> Result<MergeEngine> {
    let header: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
    let types: Vec<DataType> = schema
        .fields
        .iter()
        .map(|f| f.ty.data_type.clone())
        .collect();
    let mut map = BTreeMap::new();
    for (k, v) in options {
        if map.insert(k.as_str(), v.as_str()).is_some() {
            return Err(MergeOptionsError::Duplicate(k.clone()));
        }
    }
    let opts = Options {
        map,
        header: &header,
        types: &types,
    };
    let key_columns = key
        .iter()
        .map(|k| opts.column("primary key", k))
        .collect::<Result<Vec<_>>>()?;
    for (k, name, _) in opts.per_field(".type") {
        opts.column(k, name)?;
        let _declared_type_is_valid = opts.order_type(name)?;
    }
    let (engine, valid): (_, Vec<&str>) =
        match (opts.get("table.merge-engine"), opts.get("merge-engine")) {
            (Some(_), Some(_)) => return Err(MergeOptionsError::TwoEngineKeys),
            (Some(e), None) => match e {
                "versioned" => (versioned(&opts)?, VERSIONED_KEYS.to_vec()),
                "first_row" => (first_row(&opts, true)?, FLUSS_FIRST_ROW_KEYS.to_vec()),
                "aggregation" => (
                    aggregate::aggregation(&opts, &key_columns, true)?,
                    [AGGREGATION_KEYS, FLUSS_AGGREGATION_KEYS].concat(),
                ),
                _ => {
                    return Err(unknown_engine(
                        "table.merge-engine",
                        e,
                        "first_row, versioned, aggregation",
                    ))
                }
            },
            (None, e) => match e.unwrap_or("deduplicate") {
                "deduplicate" => (deduplicate(&opts)?, DEDUPLICATE_KEYS.to_vec()),
                "first-row" => (first_row(&opts, false)?, PAIMON_FIRST_ROW_KEYS.to_vec()),
                "partial-update" => (
                    partial_update(&opts, &key_columns)?,
                    PARTIAL_UPDATE_KEYS.to_vec(),
                ),
                "aggregation" => (
                    aggregate::aggregation(&opts, &key_columns, false)?,
                    [AGGREGATION_KEYS, PAIMON_AGGREGATION_KEYS].concat(),
                ),
                e => {
                    let valid = "deduplicate, first-row, partial-update, aggregation";
                    return Err(unknown_engine("merge-engine", e, valid));
                }
            },
        };
    for k in opts.map.keys() {
        let pattern = match field_of(k) {
            Some((_, suffix)) => format!("fields.<column>{suffix}"),
            None => k.to_string(),
        };
        let known = COMMON_KEYS.contains(&pattern.as_str()) || valid.contains(&pattern.as_str());
        if !known {
            let all: Vec<_> = COMMON_KEYS.iter().chain(&valid).copied().collect();
            return Err(MergeOptionsError::UnknownOption {
                key: k.to_string(),
                engine: engine.name().to_string(),
                valid: all.join(", "),
            });
        }
    }
    Ok(engine)
}

const COMMON_KEYS: &[&str] = &["table.merge-engine", "merge-engine", "fields.<column>.type"];
const VERSIONED_KEYS: &[&str] = &[
    "table.merge-engine.versioned.ver-column",
    "table.delete.behavior",
    "dtemporal.honor-deletes",
];
const FLUSS_FIRST_ROW_KEYS: &[&str] = &["table.delete.behavior", "dtemporal.honor-deletes"];
const PAIMON_FIRST_ROW_KEYS: &[&str] = &["ignore-delete", "dtemporal.honor-deletes"];
const DEDUPLICATE_KEYS: &[&str] = &["sequence.field", "ignore-delete"];
const PARTIAL_UPDATE_KEYS: &[&str] = &[
    "ignore-delete",
    "partial-update.remove-record-on-delete",
    "partial-update.remove-record-on-sequence-group",
    "fields.<column>.sequence-group",
    "fields.default-aggregate-function",
    "fields.<column>.aggregate-function",
    "fields.<column>.ignore-retract",
    "fields.<column>.list-agg-delimiter",
];
/// The key of the default aggregate function (`aggregation`, `partial-update`).
const DEFAULT_AGGREGATE_FUNCTION: &str = "fields.default-aggregate-function";
const AGGREGATION_KEYS: &[&str] = &[
    "sequence.field",
    DEFAULT_AGGREGATE_FUNCTION,
    "fields.<column>.aggregate-function",
    "fields.<column>.agg",
    "fields.<column>.list-agg-delimiter",
    "fields.<column>.listagg.delimiter",
];
/// Fluss aggregates are never retracted: no `ignore-retract`.
const FLUSS_AGGREGATION_KEYS: &[&str] = &["table.delete.behavior"];
const PAIMON_AGGREGATION_KEYS: &[&str] = &[
    "fields.<column>.ignore-retract",
    "aggregation.remove-record-on-delete",
];

fn unknown_engine(key: &str, value: &str, valid: &str) -> MergeOptionsError {
    MergeOptionsError::UnknownEngine {
        key: key.to_string(),
        value: value.to_string(),
        valid: valid.to_string(),
    }
}

/// Fluss delete handling: `table.delete.behavior` and our `dtemporal.honor-deletes`. `allow`
/// ([`Deletes::Apply`]) is valid for `aggregation` only; Fluss refuses it for `first_row` and
/// `versioned` at table creation (rule C4).
fn fluss_deletes(opts: &Options, engine: &str) -> Result<Deletes> {
    if opts.flag("dtemporal.honor-deletes")? {
        return Ok(Deletes::Apply);
    }
    let key = "table.delete.behavior";
    match opts.get(key).map(str::to_ascii_lowercase).as_deref() {
        None | Some("ignore") => Ok(Deletes::Ignore),
        Some("disable") => Ok(Deletes::Reject(format!(
            "deletion is disabled for this {engine} table ('table.delete.behavior' = 'disable')"
        ))),
        Some("allow") if engine == "aggregation" => Ok(Deletes::Apply),
        Some("allow") => Err(MergeOptionsError::DeletesNotSupported {
            engine: engine.to_string(),
        }),
        Some(v) if engine == "aggregation" => Err(bad_value(key, v, "ignore, disable, allow")),
        Some(v) => Err(bad_value(key, v, "ignore, disable")),
    }
}

fn versioned(opts: &Options) -> Result<MergeEngine> {
    let column = opts
        .get("table.merge-engine.versioned.ver-column")
        .ok_or(MergeOptionsError::MissingVersionColumn)?
        .trim();
    let index = opts
        .header
        .iter()
        .position(|h| h == column)
        .ok_or_else(|| MergeOptionsError::UnknownVersionColumn {
            column: column.to_string(),
            columns: opts.columns(),
        })?;
    let ty = opts
        .order_type(column)?
        .map_err(|ty| MergeOptionsError::WrongVersionType {
            column: column.to_string(),
            ty,
        })?;
    Ok(MergeEngine::Versioned(Versioned {
        version: OrderField {
            column: index,
            name: column.to_string(),
            ty,
        },
        deletes: fluss_deletes(opts, "versioned")?,
    }))
}

fn first_row(opts: &Options, fluss: bool) -> Result<MergeEngine> {
    let deletes = if fluss {
        fluss_deletes(opts, "first_row")?
    } else if opts.flag("dtemporal.honor-deletes")? {
        Deletes::Apply
    } else if opts.flag("ignore-delete")? {
        Deletes::Ignore
    } else {
        Deletes::Reject(
            "the first-row merge engine cannot accept -D/-U records; set 'ignore-delete' = 'true' to ignore them"
                .to_string(),
        )
    };
    Ok(MergeEngine::FirstRow(FirstRow { deletes }))
}

fn deduplicate(opts: &Options) -> Result<MergeEngine> {
    let sequence = match opts.get("sequence.field") {
        Some(list) => opts.order_fields("sequence.field", list)?,
        None => Vec::new(),
    };
    let deletes = if opts.flag("ignore-delete")? {
        Deletes::Ignore
    } else {
        Deletes::Apply
    };
    Ok(MergeEngine::Deduplicate(Deduplicate { sequence, deletes }))
}

fn partial_update(opts: &Options, key: &[usize]) -> Result<MergeEngine> {
    let removing = "partial-update.remove-record-on-sequence-group";
    let remove_on: Vec<&str> = opts
        .get(removing)
        .map(|l| l.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let mut groups = Vec::new();
    let mut taken: Vec<usize> = key.to_vec();
    for (k, seq, list) in opts.per_field(".sequence-group") {
        let sequence = opts.order_fields(k, seq)?;
        let mut fields = Vec::new();
        for name in list.split(',') {
            fields.push(opts.column(k, name)?);
        }
        for c in sequence
            .iter()
            .map(|s| s.column)
            .chain(fields.iter().copied())
        {
            if taken.contains(&c) {
                let name = &opts.header[c];
                return Err(MergeOptionsError::Conflict(format!(
                    "column '{name}' (in '{k}') is a primary-key column or already in another sequence group"
                )));
            }
            taken.push(c);
        }
        let remove_record_on_retract = sequence
            .iter()
            .any(|s| remove_on.contains(&s.name.as_str()));
        groups.push(SequenceGroup {
            sequence,
            fields,
            remove_record_on_retract,
        });
    }
    for name in &remove_on {
        let known = groups
            .iter()
            .flat_map(|g| &g.sequence)
            .any(|s| s.name == *name);
        if !known {
            let seqs: Vec<_> = groups
                .iter()
                .flat_map(|g| &g.sequence)
                .map(|s| s.name.as_str())
                .collect();
            return Err(bad_value(removing, name, &seqs.join(", ")));
        }
    }
    let deletes = if opts.flag("ignore-delete")? {
        PartialDeletes::Ignore
    } else if opts.flag("partial-update.remove-record-on-delete")? {
        PartialDeletes::RemoveRecordOnDelete
    } else {
        PartialDeletes::Reject
    };
    let aggs = aggregate::partial_update_aggs(opts, key, &groups)?;
    let width = opts.header.len();
    let engine = PartialUpdate::new(width, key.to_vec(), groups, deletes);
    Ok(MergeEngine::PartialUpdate(engine.with_aggregates(aggs)))
}

#[cfg(test)]
mod tests;
