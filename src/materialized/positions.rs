//! The input positions of a CONTINUOUS refresh ([`super::continuous`]): what its rounds
//! have read, as a snapshot's manifest records them (`rounds`: their number;
//! `file:<table>:<path>`: the round that read a file; per generated table `rows:<table>` the
//! rows made and `round-rows:<table>` the rows a round takes; per postgres-cdc table `lsn:<table>`
//! the LSN its rounds read to), the input of a published round
//! read again, and the input of the next round. In the keys a table name's `%` and `:` are
//! written `%25` and `%3A`, so that the first `:` after the table ends it, whatever a quoted
//! name holds.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use super::continuous::{open, Feed};
use crate::io::directory::{files_arrived, files_now};
use crate::sql::SqlError;
use crate::table::live::RoundInput;
use crate::table::TableError;

/// What the rounds have read so far (see the [module docs](self)), as a manifest records it.
pub(crate) struct Positions {
    /// Rounds read.
    pub(super) rounds: u64,
    /// Per table, each file read and its round.
    files: BTreeMap<String, BTreeMap<String, u64>>,
    /// Per generated table, rows made and rows a round takes.
    rows: BTreeMap<String, (u64, u64)>,
    /// Per postgres-cdc table, the LSN its rounds read to.
    lsn: BTreeMap<String, u64>,
}

impl Positions {
    /// The positions a manifest recorded; for a generated table not in them, a round takes
    /// `rows-per-second * interval` rows (at least one).
    pub(crate) fn read(
        recorded: &BTreeMap<String, u64>,
        feeds: &BTreeMap<String, Feed>,
        interval: Duration,
    ) -> Positions {
        let mut positions = Positions {
            rounds: recorded.get("rounds").copied().unwrap_or(0),
            files: BTreeMap::new(),
            rows: BTreeMap::new(),
            lsn: BTreeMap::new(),
        };
        for (key, &value) in recorded {
            if let Some((table, path)) = key.strip_prefix("file:").and_then(|k| k.split_once(':')) {
                let files = positions.files.entry(unescape(table)).or_default();
                files.insert(path.to_string(), value);
            }
            if let Some(table) = key.strip_prefix("lsn:") {
                positions.lsn.insert(unescape(table), value);
            }
        }
        for (name, feed) in feeds {
            if let Feed::Rows(source) = feed {
                let per_round = (source.rows_per_second() as f64 * interval.as_secs_f64()) as u64;
                let made = recorded.get(&rows_key("rows", name)).copied().unwrap_or(0);
                let per_round = recorded
                    .get(&rows_key("round-rows", name))
                    .copied()
                    .unwrap_or(per_round.max(1));
                positions.rows.insert(name.clone(), (made, per_round));
            }
        }
        positions
    }

    /// As a manifest records them.
    pub(super) fn record(&self) -> BTreeMap<String, u64> {
        let mut recorded = BTreeMap::from([("rounds".to_string(), self.rounds)]);
        for (table, files) in &self.files {
            for (path, round) in files {
                recorded.insert(format!("file:{}:{path}", escape(table)), *round);
            }
        }
        for (table, (made, per_round)) in &self.rows {
            recorded.insert(rows_key("rows", table), *made);
            recorded.insert(rows_key("round-rows", table), *per_round);
        }
        for (table, lsn) in &self.lsn {
            recorded.insert(rows_key("lsn", table), *lsn);
        }
        recorded
    }

    /// The input of published round `round`, read again.
    pub(super) fn replay(
        &self,
        round: u64,
        feeds: &BTreeMap<String, Feed>,
    ) -> Result<Vec<RoundInput>, SqlError> {
        let mut inputs = Vec::new();
        for (table, feed) in feeds {
            if let Feed::Rows(source) = feed {
                let (made, per_round) = self.rows[table];
                let from = round.saturating_mul(per_round);
                if from < made {
                    let to = (from + per_round).min(made);
                    inputs.push(RoundInput::Rows(table.clone(), source.clone(), from..to));
                }
                continue;
            }
            let files: Vec<String> = self
                .files
                .get(table)
                .into_iter()
                .flatten()
                .filter(|(_, &r)| r == round)
                .map(|(path, _)| path.clone())
                .collect();
            if let Some(missing) = files.iter().find(|f| !std::path::Path::new(f).is_file()) {
                return Err(TableError::Invalid(format!(
                    "the file {missing} of table '{table}', read by the published snapshot, is gone: the table's state cannot be rebuilt (refresh it from scratch: drop and create it)"
                ))
                .into());
            }
            match feed {
                _ if files.is_empty() => {}
                Feed::Once(spec) | Feed::Monitored(spec) => inputs.push(open(table, spec, &files)?),
                Feed::Postgres(postgres) => {
                    for file in &files {
                        inputs.push(postgres.replay(table, file)?);
                    }
                }
                Feed::Rows(_) => {} // replayed above
            }
        }
        Ok(inputs)
    }

    /// The input of the next round (none: nothing new), recorded as read.
    pub(crate) fn next_round(
        &mut self,
        feeds: &BTreeMap<String, Feed>,
    ) -> Result<Vec<RoundInput>, SqlError> {
        let round = self.rounds;
        let mut inputs = Vec::new();
        for (table, feed) in feeds {
            match feed {
                Feed::Once(spec) | Feed::Monitored(spec) => {
                    let read = self.files.entry(table.clone()).or_default();
                    let once_done = matches!(feed, Feed::Once(_)) && !read.is_empty();
                    if once_done {
                        continue;
                    }
                    // A monitored directory's round takes the files that arrived before it.
                    let listed = match feed {
                        Feed::Monitored(_) => files_arrived(&spec.path, SystemTime::now()),
                        _ => files_now(&spec.path),
                    };
                    let new: Vec<String> = listed
                        .map_err(TableError::from)?
                        .into_iter()
                        .filter(|f| !read.contains_key(f))
                        .collect();
                    if new.is_empty() {
                        continue;
                    }
                    inputs.push(open(table, spec, &new)?);
                    read.extend(new.into_iter().map(|f| (f, round)));
                }
                Feed::Postgres(postgres) => {
                    let read = self.files.entry(table.clone()).or_default();
                    let resume = self.lsn.get(table).copied();
                    let (changes, read_to) = postgres.next(round, resume, !read.is_empty())?;
                    if let Some(lsn) = read_to {
                        self.lsn.insert(table.clone(), lsn);
                    }
                    if let Some(changes) = changes {
                        if let Some(file) = changes.file {
                            read.insert(file, round);
                        }
                        inputs.push(RoundInput::Changes(table.clone(), changes.changes));
                    }
                }
                Feed::Rows(source) => {
                    let (made, per_round) = self.rows.get_mut(table).expect("read() saw it");
                    let to = made.saturating_add(*per_round).min(source.rows());
                    if to > *made {
                        inputs.push(RoundInput::Rows(table.clone(), source.clone(), *made..to));
                        *made = to;
                    }
                }
            }
        }
        if !inputs.is_empty() {
            self.rounds += 1;
        }
        Ok(inputs)
    }

    /// Advances each postgres-cdc table's replication slot to the LSN its rounds read to, once
    /// a snapshot recording it is published.
    ///
    /// Errors: a server refuses.
    pub(crate) fn confirm(&self, feeds: &BTreeMap<String, Feed>) -> Result<(), SqlError> {
        for (table, feed) in feeds {
            if let (Feed::Postgres(postgres), Some(&lsn)) = (feed, self.lsn.get(table)) {
                postgres.confirm(lsn)?;
            }
        }
        Ok(())
    }
}

/// The position key `<what>:<table>` of a generated or postgres-cdc table.
fn rows_key(what: &str, table: &str) -> String {
    format!("{what}:{}", escape(table))
}

/// `table` with `%` and `:` written `%25` and `%3A`: it holds no `:`.
pub(super) fn escape(table: &str) -> String {
    table.replace('%', "%25").replace(':', "%3A")
}

/// The table name [`escape`] wrote.
fn unescape(escaped: &str) -> String {
    escaped.replace("%3A", ":").replace("%25", "%")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table name holding `:` or `%` (a quoted identifier) and a path holding `:` are read
    /// back from a manifest's keys as they were written, a postgres-cdc table's LSN too.
    #[test]
    fn positions_keys_read_back_whatever_the_table_name_holds() {
        let read = |paths: &[(&str, u64)]| -> BTreeMap<String, u64> {
            paths.iter().map(|(p, r)| (p.to_string(), *r)).collect()
        };
        let positions = Positions {
            rounds: 2,
            files: BTreeMap::from([
                (
                    "my:orders%3A".to_string(),
                    read(&[("/d:x/a.csv", 0), ("/d:x/b.csv", 1)]),
                ),
                ("my".to_string(), read(&[("orders:/d:x/c.csv", 1)])),
            ]),
            rows: BTreeMap::new(),
            lsn: BTreeMap::from([("my:orders%3A".to_string(), 0x0152_9118)]),
        };
        let recorded = positions.record();
        let keys: Vec<&str> = recorded.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "file:my%3Aorders%253A:/d:x/a.csv",
                "file:my%3Aorders%253A:/d:x/b.csv",
                "file:my:orders:/d:x/c.csv",
                "lsn:my%3Aorders%253A",
                "rounds"
            ]
        );
        let back = Positions::read(&recorded, &BTreeMap::new(), Duration::from_secs(1));
        assert_eq!(back.rounds, 2);
        assert_eq!(back.files, positions.files);
        assert_eq!(back.lsn, positions.lsn);
    }
}
