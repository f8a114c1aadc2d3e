//! `EXPLAIN`: the plan as an indented tree, one node a line, with each node's arguments, output
//! columns and types, changelog mode and time attributes.

use std::fmt::Write as _;

use crate::repr::Schema;

use super::{Mode, Node, RelExpr};

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
                    .map(|(e, f)| format!("{} AS {}", e.display(&self.schema), f.name))
                    .collect();
                format!("exprs=[{}]", exprs.join(", "))
            }
            Node::Filter { predicate, .. } => {
                format!("condition=[{}]", predicate.display(&self.schema))
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
                    .map(|(a, f)| format!("{} AS {}", a.display(&input.schema), f.name))
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
            } => format!(
                "key=[{}], keep={keep:?}, order={order:?}",
                names(key, &input.schema)
            ),
            Node::TemporalJoin {
                probe,
                build,
                probe_key,
                build_key,
                kind,
                residual,
            }
            | Node::LookupJoin {
                probe,
                build,
                probe_key,
                build_key,
                kind,
                residual,
            } => {
                let keys: Vec<String> = probe_key
                    .iter()
                    .zip(build_key)
                    .map(|(&p, &b)| {
                        format!("{}={}", probe.schema.fields[p].name, build.schema.fields[b].name)
                    })
                    .collect();
                let mut args = format!("kind={}, keys=[{}]", kind_name(*kind), keys.join(", "));
                if let Some(r) = residual {
                    write!(args, ", residual=[{}]", r.display(&self.schema)).expect("a String");
                }
                args
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

fn kind_name(kind: super::JoinKind) -> &'static str {
    match kind {
        super::JoinKind::Inner => "INNER",
        super::JoinKind::Left => "LEFT",
    }
}
