//! `EXPLAIN`: the plan as an indented tree, one node a line, with each node's arguments, output
//! columns and types, changelog mode and time attributes.

use std::fmt::Write as _;

use crate::expr::{AggregateExpr, AggregateFunc, ScalarExpr, ScalarKind};
use crate::repr::Schema;

use super::{Join, Mode, Node, RelExpr};

impl RelExpr {
    /// The plan as text: one line per node, inputs indented below the node that reads them.
    ///
    /// A line reads `Node(arguments) -> [column TYPE, ...] mode`, where the mode is
    /// `append-only` or `updating` with its upsert key, followed by `rowtime=column` /
    /// `proctime=column` where the output has time attributes.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        self.explain_into(&mut out, 0);
        out
    }

    fn explain_into(&self, out: &mut String, depth: usize) {
        let input_schema = self.inputs().first().map(|i| i.schema.clone());
        let names = |columns: &[usize], schema: &Schema| -> String {
            let names: Vec<&str> = columns
                .iter()
                .map(|&c| schema.fields.get(c).map_or("?", |f| f.name.as_str()))
                .collect();
            names.join(", ")
        };
        let args = match &self.node {
            Node::Scan { name } => format!("table=[{name}]"),
            Node::Values { rows } => format!("rows={}", rows.len()),
            Node::Map { exprs, .. } => {
                let width = input_schema.as_ref().map_or(0, Schema::len);
                let exprs: Vec<String> = exprs
                    .iter()
                    .zip(&self.schema.fields[width..])
                    .map(|(e, f)| format!("{} AS {}", expr_text(e, &self.schema), f.name))
                    .collect();
                format!("exprs=[{}]", exprs.join(", "))
            }
            Node::ProcTime { column, clock, .. } => {
                format!("column=[{}], {clock}", self.schema.fields[*column].name)
            }
            Node::Filter { predicate, .. } => {
                format!("condition=[{}]", expr_text(predicate, &self.schema))
            }
            Node::Project { columns, input } => {
                format!("columns=[{}]", names(columns, &input.schema))
            }
            Node::Reduce {
                group,
                aggregates,
                input,
            } => {
                let aggs: Vec<String> = aggregates
                    .iter()
                    .zip(&self.schema.fields[group.len()..])
                    .map(|(a, f)| format!("{} AS {}", aggregate_text(a, &input.schema), f.name))
                    .collect();
                format!(
                    "group=[{}], aggs=[{}]",
                    names(group, &input.schema),
                    aggs.join(", ")
                )
            }
            Node::Distinct { .. } => String::new(),
            Node::Dedup {
                key,
                keep,
                order,
                input,
                state_ttl,
            } => {
                let ttl = state_ttl.map(|ms| format!(", state_ttl={ms}ms"));
                format!(
                    "key=[{}], keep={keep:?}, order={order:?}{}",
                    names(key, &input.schema),
                    ttl.unwrap_or_default()
                )
            }
            Node::AsOf { at, .. } => format!("at={at:?}"),
            Node::History { .. } => String::new(),
            Node::CheckChangelog(c) => format!(
                "key=[{}], uncompared=[{}], upsert={}",
                names(&c.key, &c.input.schema),
                names(&c.uncompared, &c.input.schema),
                c.upsert
            ),
            Node::MergeEngine {
                key,
                input,
                normalize: true,
                ..
            } => format!("key=[{}]", names(key, &input.schema)),
            Node::MergeEngine {
                key, engine, input, ..
            } => format!(
                "engine={}, key=[{}]",
                engine.name(),
                names(key, &input.schema)
            ),
            Node::TemporalJoin(Join {
                probe,
                build,
                probe_key,
                build_key,
                kind,
                residual,
                state_ttl,
            })
            | Node::LookupJoin(Join {
                probe,
                build,
                probe_key,
                build_key,
                kind,
                residual,
                state_ttl,
            }) => {
                let keys: Vec<String> = probe_key
                    .iter()
                    .zip(build_key)
                    .map(|(&p, &b)| {
                        format!(
                            "{}={}",
                            probe.schema.fields[p].name, build.schema.fields[b].name
                        )
                    })
                    .collect();
                let mut args = format!("kind={}, keys=[{}]", kind_name(*kind), keys.join(", "));
                if let Some(r) = residual {
                    write!(args, ", residual=[{}]", expr_text(r, &self.schema)).expect("a String");
                }
                match (state_ttl, &self.node) {
                    (Some(ms), Node::TemporalJoin(_)) => write!(args, ", state_ttl={ms}ms"),
                    (Some(ttl), _) => write!(args, ", stateTtl={ttl} system times"),
                    (None, _) => Ok(()),
                }
                .expect("a String");
                args
            }
            Node::Join(join) => {
                // Key columns by their output names (a right column may be renamed, `k0`).
                let width = join.left.schema.len();
                let keys: Vec<String> = join
                    .left_key
                    .iter()
                    .zip(&join.right_key)
                    .map(|(&l, &r)| {
                        let name = |c: usize| self.schema.fields[c].name.as_str();
                        format!("{}={}", name(l), name(width + r))
                    })
                    .collect();
                let mut args = format!("kind={}, keys=[{}]", join.join_type.sql(), keys.join(", "));
                if let Some(b) = &join.interval {
                    let name = |c: usize| self.schema.fields[c].name.as_str();
                    let (l, r) = (name(b.left_time), name(width + b.right_time));
                    write!(
                        args,
                        ", interval=[{l} - {r} BETWEEN {} ms AND {} ms]",
                        b.lower_ms, b.upper_ms
                    )
                    .expect("a String");
                }
                if let Some(r) = &join.residual {
                    write!(args, ", residual=[{}]", expr_text(r, &self.schema)).expect("a String");
                }
                if let Some(ttl) = join.state_ttl {
                    write!(args, ", stateTtl={ttl} system times").expect("a String");
                }
                args
            }
            Node::AsofJoin(join) => join.explain_args(&self.schema),
            Node::Correlate(c) => c.explain_args(&self.schema),
            Node::SetOp { op, all, .. } => format!("op=[{}]", op.sql(*all)),
            Node::Sort {
                input,
                order,
                offset,
                fetch,
            } => {
                let fetch = fetch.map_or("ALL".to_string(), |f| f.to_string());
                format!(
                    "order=[{}], offset={offset}, fetch={fetch}",
                    sort_keys(order, &input.schema)
                )
            }
            Node::TopN(t) => format!(
                "partition=[{}], order=[{}], limit={}, rank={}",
                names(&t.partition, &t.input.schema),
                sort_keys(&t.order, &t.input.schema),
                t.limit,
                t.rank
            ),
            Node::Over(o) => {
                let aggs: Vec<String> = (o.aggregates.iter())
                    .zip(&self.schema.fields[o.input.schema.len()..])
                    .map(|(a, f)| format!("{} AS {}", aggregate_text(a, &o.input.schema), f.name))
                    .collect();
                format!(
                    "partition=[{}], order=[{}], frame=[{}], aggs=[{}]",
                    names(&o.partition, &o.input.schema),
                    o.input.schema.fields[o.time].name,
                    o.frame,
                    aggs.join(", ")
                )
            }
            Node::WindowAssign(a) => format!(
                "window=[{} ON {}]",
                a.window, a.input.schema.fields[a.time].name
            ),
            Node::WindowAgg(w) => {
                let aggs: Vec<String> = (w.aggregates.iter())
                    .zip(&self.schema.fields[w.group.len() + 3..])
                    .map(|(a, f)| format!("{} AS {}", aggregate_text(a, &w.input.schema), f.name))
                    .collect();
                format!(
                    "window=[{} ON {}], group=[{}], aggs=[{}], lateness={}ms",
                    w.window,
                    w.input.schema.fields[w.time].name,
                    names(&w.group, &w.input.schema),
                    aggs.join(", "),
                    w.lateness_ms
                )
            }
            Node::CountWindowAgg(c) => {
                let aggs: Vec<String> = (c.aggregates.iter())
                    .zip(&self.schema.fields[c.group.len()..])
                    .map(|(a, f)| format!("{} AS {}", aggregate_text(a, &c.input.schema), f.name))
                    .collect();
                format!(
                    "window=[{c} ON {}], group=[{}], aggs=[{}]",
                    c.input.schema.fields[c.time].name,
                    names(&c.group, &c.input.schema),
                    aggs.join(", ")
                )
            }
            Node::Sink { name, .. } => format!("table=[{name}]"),
        };
        let columns: Vec<String> = self
            .schema
            .fields
            .iter()
            .map(|f| format!("{} {}", f.name, f.ty))
            .collect();
        let mode = match &self.mode {
            Mode::AppendOnly => "append-only".to_string(),
            Mode::Updating { upsert_key: None } => "updating".to_string(),
            Mode::Updating {
                upsert_key: Some(key),
            } => format!("updating(key=[{}])", names(key, &self.schema)),
        };
        let _ = write!(
            out,
            "{:indent$}{}({args}) -> [{}] {mode}",
            "",
            self.kind_name(),
            columns.join(", "),
            indent = depth * 2
        );
        if let Some(rowtime) = &self.schema.rowtime {
            let _ = write!(out, " rowtime={}", self.schema.fields[rowtime.column].name);
        }
        if let Some(proctime) = self.schema.proctime {
            let _ = write!(out, " proctime={}", self.schema.fields[proctime].name);
        }
        out.push('\n');
        for input in self.inputs() {
            input.explain_into(out, depth + 1);
        }
    }
}

pub(super) fn kind_name(kind: super::JoinKind) -> &'static str {
    match kind {
        super::JoinKind::Inner => "INNER",
        super::JoinKind::Left => "LEFT",
    }
}

/// A bound expression as text: a call as it was written, a column by its name in `schema`.
pub(super) fn expr_text(expr: &ScalarExpr, schema: &Schema) -> String {
    match &expr.kind {
        ScalarKind::Column(c) => schema
            .fields
            .get(*c)
            .map_or_else(|| format!("${c}"), |f| f.name.clone()),
        ScalarKind::Literal(row) => match row.get(0) {
            Some(datum) => {
                let mut text = String::new();
                let _ = crate::repr::cast::print_datum(datum, &expr.ty.data_type, &mut text);
                if datum.is_null() {
                    "NULL".to_string()
                } else {
                    text
                }
            }
            None => "NULL".to_string(),
        },
        ScalarKind::Call { text, .. } => text.to_string(),
        ScalarKind::If {
            cond,
            then,
            otherwise,
        } => format!(
            "CASE WHEN {} THEN {} ELSE {} END",
            expr_text(cond, schema),
            expr_text(then, schema),
            expr_text(otherwise, schema)
        ),
        ScalarKind::Udf { udf, args } => {
            let args: Vec<String> = args.iter().map(|a| expr_text(a, schema)).collect();
            format!("{}({})", udf.name, args.join(", "))
        }
    }
}

/// An aggregate as text: `SUM(DISTINCT b) FILTER (WHERE ...)`.
fn aggregate_text(agg: &AggregateExpr, schema: &Schema) -> String {
    let name = match &agg.func {
        AggregateFunc::Count | AggregateFunc::CountStar => "COUNT".to_string(),
        AggregateFunc::Sum(_) => "SUM".to_string(),
        AggregateFunc::Avg(_) => "AVG".to_string(),
        AggregateFunc::Min => "MIN".to_string(),
        AggregateFunc::Max => "MAX".to_string(),
        AggregateFunc::FirstValue => "FIRST_VALUE".to_string(),
        AggregateFunc::LastValue => "LAST_VALUE".to_string(),
        AggregateFunc::ListAgg(_) => "LISTAGG".to_string(),
        AggregateFunc::StddevPop => "STDDEV_POP".to_string(),
        AggregateFunc::StddevSamp => "STDDEV_SAMP".to_string(),
        AggregateFunc::VarPop => "VAR_POP".to_string(),
        AggregateFunc::VarSamp => "VAR_SAMP".to_string(),
        AggregateFunc::Udaf(udaf) => udaf.name().to_string(),
    };
    let mut args: Vec<String> = agg.args.iter().map(|a| expr_text(a, schema)).collect();
    if matches!(agg.func, AggregateFunc::CountStar) {
        args = vec!["*".to_string()];
    }
    let distinct = if agg.distinct { "DISTINCT " } else { "" };
    let mut text = format!("{name}({distinct}{})", args.join(", "));
    if let Some(filter) = &agg.filter {
        text.push_str(&format!(" FILTER (WHERE {})", expr_text(filter, schema)));
    }
    text
}

/// `ORDER BY` keys as `name ASC NULLS FIRST, ..`.
fn sort_keys(order: &[super::SortKey], schema: &crate::repr::Schema) -> String {
    let keys: Vec<String> = order
        .iter()
        .map(|k| {
            let direction = if k.descending { "DESC" } else { "ASC" };
            let nulls = if k.nulls_first { "FIRST" } else { "LAST" };
            let name = &schema.fields[k.column].name;
            format!("{name} {direction} NULLS {nulls}")
        })
        .collect();
    keys.join(", ")
}
