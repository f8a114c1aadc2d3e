//! A table's changes from a logical-replication slot ([`ChangeStream`]).

use postgres::Client;

use super::pgoutput::{decode, Message, Value};
use super::{source_text, PostgresSource, PostgresType, Snapshot, StartupMode, Visible};
use crate::csv::RowError;
use crate::error::Error;
use crate::operators::{Change, RowKind, Seq};
use crate::repr::Row;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 00:00:00 UTC).
const POSTGRES_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// One committed transaction's changes to the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// The LSN after its commit: [`ChangeStream::confirm`] it once handled.
    pub end_lsn: u64,
    /// Its commit time, epoch milliseconds (the `op_ts` metadata of its changes).
    pub commit_millis: i64,
    /// Its changes in order, each with the next `seq` of the stream (after the snapshot's rows),
    /// or the row error of a value the declared type cannot hold.
    pub changes: Vec<Result<Change<Row>, RowError>>,
}

/// The change stream of a postgres-cdc table: its changes from a logical-replication slot,
/// the `'initial'` and `'latest-offset'` startup modes' stream.
///
/// The slot (`slot.name`) decodes with `pgoutput` over a publication of the same name holding
/// the table (both created when missing). Changes are read with
/// `pg_logical_slot_peek_binary_changes`, which leaves them in the slot, whole transactions at a
/// time; [`ChangeStream::confirm`] advances the slot (`pg_replication_slot_advance`) once the
/// caller has durably handled what it read, so a reader that stops before confirming reads the
/// same transactions again, never loses one. A peek starts at the slot's confirmed point, so
/// each read decodes again what was read since the last confirmation: confirm often.
///
/// `'initial'`: the slot is created first, then the snapshot is read, and the stream skips the
/// transactions the snapshot already sees ([`Visible`]): every committed transaction is in
/// exactly one of them, as with Flink CDC's consistent snapshot.
///
/// Changes: an INSERT is `+I`; an UPDATE `-U` (the old row) then `+U`; a DELETE `-D` (the old
/// row). The old rows come from `REPLICA IDENTITY FULL`, which the table must have (with the
/// default identity an UPDATE or DELETE carries only the key). A transaction's changes are one
/// [`Transaction`], with its commit time (the `op_ts` metadata) and LSN. A TRUNCATE is an error:
/// it carries no rows to retract.
///
/// ```no_run
/// # fn handle(_: &differential_temporal::io::postgres::Transaction) {}
/// use differential_temporal::io::postgres::{ColumnSource, PostgresOptions, PostgresSource, Slot};
/// use differential_temporal::repr::{DataType, Schema};
///
/// let options: Vec<(String, String)> = [
///     ("connector", "postgres-cdc"), ("hostname", "localhost"), ("username", "app"),
///     ("password", "secret"), ("database-name", "shop"), ("table-name", "rates"),
///     ("slot.name", "rates_slot"),
/// ]
/// .iter()
/// .map(|(k, v)| (k.to_string(), v.to_string()))
/// .collect();
/// let source = PostgresSource {
///     name: "rates".into(),
///     options: PostgresOptions::from_options(&options).unwrap(),
///     schema: Schema::builder().column("currency", DataType::STRING.not_null()).build().unwrap(),
///     columns: vec![ColumnSource::Physical],
/// };
/// let (snapshot, mut stream) = source.open_stream(None, Slot::Kept)?;
/// println!("{} rows in the snapshot", snapshot.map_or(0, |s| s.len()));
/// loop {
///     for transaction in stream.next_batch(10_000)? {
///         handle(&transaction);
///     }
///     // Durably handled: the slot may let the changes go.
///     stream.confirm(stream.read_to())?;
///     # break;
/// }
/// # Ok::<(), differential_temporal::error::Error>(())
/// ```
pub struct ChangeStream {
    source: PostgresSource,
    client: Client,
    slot: String,
    columns: Vec<(String, PostgresType)>,
    /// The table's OID and, per declared physical column, its position in the table's tuples,
    /// from the last Relation message.
    relation: Option<(u32, Vec<usize>)>,
    /// The transactions the snapshot saw (`'initial'`), skipped.
    seen: Option<Visible>,
    /// The end LSN of the last transaction read (returned or skipped).
    read_to: u64,
    /// Rows of the slot's output read since its confirmed point: a peek starts there again,
    /// so the next one skips them.
    peeked: i64,
    /// The slot's confirmed point.
    confirmed: u64,
    /// The `seq` of the next change.
    seq: Seq,
    /// Whether the last peek stopped at its limit: the slot may hold more.
    behind: bool,
    header: Vec<String>,
}

/// The slot's changes as the stream reads them: whole transactions, at least `$2` changes if
/// there are that many.
const PEEK: &str = "SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, $2, \
                    'proto_version', '1', 'publication_names', $3)";

/// How a change stream treats its replication slot (`slot.name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Kept on the server across streams, so that a later stream resumes from it; created
    /// when missing.
    Kept,
    /// As `Kept`, but an existing slot is dropped and created again first: the reader
    /// created it before and never confirmed anything from it (it stopped before handling a
    /// first batch), so it starts from scratch.
    Renewed,
    /// A temporary slot, dropped by the server when the stream's connection ends (however
    /// the reader ends): a reader that reads the table from its start every time (a query).
    Temporary,
}

impl PostgresSource {
    /// Opens the table's change stream: creates the publication and the slot (as `slot`
    /// says) if missing, and for `'initial'` (when not resuming) reads the snapshot after
    /// creating the slot. `after` resumes a stream: the transactions ending at or before that
    /// LSN are skipped (they were handled), and no snapshot is read.
    ///
    /// Errors: no `slot.name`; the connection, table or column errors of
    /// [`snapshot`](Self::snapshot); a table whose replica identity is not FULL, unless read
    /// as an upsert changelog; one read as an upsert changelog whose primary key is not the
    /// declared one (or that has none, whatever its replica identity); an existing
    /// slot when `'initial'` must read the snapshot (the slot may hold older changes, or be
    /// another reader's), unless [`Slot::Renewed`]; no slot when resuming (the changes after
    /// `after` are gone); the server refuses the publication or the slot (`wal_level` not
    /// `logical`, no privilege, a slot in use by another connection).
    pub fn open_stream(
        &self,
        after: Option<u64>,
        slot_use: Slot,
    ) -> Result<(Option<Snapshot>, ChangeStream), Error> {
        let slot = (self.options.slot.clone())
            .ok_or_else(|| self.error("reading the table's changes needs 'slot.name'".into()))?;
        let mut client = self.connect()?;
        let columns = self.physical_columns(&mut client)?;
        let fail = |e: postgres::Error| self.error(source_text(&e));
        let o = &self.options;
        let identity: String = client
            .query_one(
                "SELECT c.relreplident::text FROM pg_class c JOIN pg_namespace n ON c.relnamespace = n.oid \
                 WHERE n.nspname = $1 AND c.relname = $2",
                &[&o.schema, &o.table],
            )
            .map_err(fail)?
            .get(0);
        if identity != "f" && !o.upsert {
            return Err(self.error(format!(
                "{} does not have REPLICA IDENTITY FULL, so its updates and deletes do not carry the old row: ALTER TABLE {} REPLICA IDENTITY FULL, or read it as an upsert changelog ('changelog-mode' = 'upsert')",
                o.qualified_name(),
                o.qualified_name()
            )));
        }
        if o.upsert {
            // An upsert changelog is normalized by the declared key, and the default identity
            // sends the Postgres primary key of an update or delete: the declared key must be
            // the table's, or deletes would remove other rows and rows the table holds apart
            // would collapse into one (a table without a primary key is refused whatever its
            // replica identity: FULL sends whole rows, but nothing keeps their keys unique).
            let key = self.primary_key(&mut client)?;
            let declared: Vec<String> = (self.schema.primary_key.iter().flatten())
                .map(|&c| super::quote_ident(&self.schema.fields[c].name))
                .collect();
            let same = key.len() == declared.len() && key.iter().all(|k| declared.contains(k));
            if !same {
                let names = |k: &[String]| match k {
                    [] => "none".to_string(),
                    k => k.join(", "),
                };
                return Err(self.error(format!(
                    "{} is read as an upsert changelog by its primary key, so the declared PRIMARY KEY must be the table's: declared {}, the table's {} (with no primary key, ALTER TABLE {} REPLICA IDENTITY FULL and read it with 'changelog-mode' = 'all')",
                    o.qualified_name(),
                    names(&declared),
                    names(&key),
                    o.qualified_name()
                )));
            }
        }
        let table = format!(
            "{}.{}",
            super::quote_ident(&o.schema),
            super::quote_ident(&o.table)
        );
        let published = client
            .query("SELECT 1 FROM pg_publication WHERE pubname = $1", &[&slot])
            .map_err(fail)?;
        if published.is_empty() {
            let create = format!(
                "CREATE PUBLICATION {} FOR TABLE {table}",
                super::quote_ident(&slot)
            );
            client.batch_execute(&create).map_err(fail)?;
        }
        let mut exists = !client
            .query(
                "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1",
                &[&slot],
            )
            .map_err(fail)?
            .is_empty();
        if let (Some(lsn), false) = (after, exists) {
            return Err(self.error(format!(
                "replication slot '{slot}' is gone, so the changes after {} cannot be read: refresh from scratch (drop and create the materialized table)",
                lsn_text(lsn)
            )));
        }
        if exists && after.is_none() && slot_use == Slot::Renewed {
            client
                .execute("SELECT pg_drop_replication_slot($1)", &[&slot])
                .map_err(fail)?;
            exists = false;
        }
        let read_snapshot = after.is_none() && o.startup == StartupMode::Initial;
        if read_snapshot && exists {
            return Err(self.error(format!(
                "replication slot '{slot}' exists, and reading the table from its snapshot ('initial') needs a new slot (an old one may hold changes the snapshot has): drop it with SELECT pg_drop_replication_slot('{slot}'), or name another 'slot.name'"
            )));
        }
        if !exists {
            let temporary = slot_use == Slot::Temporary;
            client
                .execute(
                    "SELECT pg_create_logical_replication_slot($1, 'pgoutput', $2)",
                    &[&slot, &temporary],
                )
                .map_err(fail)?;
        }
        let confirmed: String = client
            .query_one(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
                &[&slot],
            )
            .map_err(fail)?
            .get(0);
        let confirmed = parse_lsn(&confirmed)
            .ok_or_else(|| self.error(format!("slot '{slot}' is at {confirmed}, not an LSN")))?;
        let (snapshot, seen) = match read_snapshot {
            true => {
                let (snapshot, seen) = self.read_snapshot(&mut client, &columns)?;
                (Some(snapshot), Some(seen))
            }
            false => (None, None),
        };
        let stream = ChangeStream {
            source: self.clone(),
            client,
            slot,
            columns,
            relation: None,
            seen,
            read_to: after.unwrap_or(0),
            peeked: 0,
            confirmed,
            seq: snapshot.as_ref().map_or(0, Snapshot::len),
            behind: false,
            header: self.schema.names().map(str::to_string).collect(),
        };
        Ok((snapshot, stream))
    }
}

impl ChangeStream {
    /// The next committed transactions not read yet (at least `max_changes` changes' worth
    /// if the slot has them; none when it has nothing new), those the snapshot saw skipped.
    ///
    /// Errors: the server fails, a message does not decode, the table was truncated, an
    /// UPDATE or DELETE without its old row, a declared column missing from the table.
    pub fn next_batch(&mut self, max_changes: i32) -> Result<Vec<Transaction>, Error> {
        let publication = self.slot.clone();
        let upto = i32::try_from(self.peeked + i64::from(max_changes.max(1))).unwrap_or(i32::MAX);
        let rows = self
            .client
            .query(PEEK, &[&self.slot, &upto, &publication])
            .map_err(|e| self.source.error(source_text(&e)))?;
        let skip = usize::try_from(self.peeked).unwrap_or(usize::MAX);
        self.peeked = rows.len() as i64;
        self.behind = rows.len() as i64 >= i64::from(upto);
        let mut done = Vec::new();
        let mut open: Option<(u32, Vec<(RowKind, Vec<Value>)>)> = None;
        for row in rows.into_iter().skip(skip) {
            let data: Vec<u8> = row.get(0);
            let message = decode(&data).map_err(|e| self.source.error(e.to_string()))?;
            match message {
                Message::Begin { xid, .. } => open = Some((xid, Vec::new())),
                Message::Relation { id, columns, .. } => {
                    let mut positions = Vec::new();
                    for (name, _) in &self.columns {
                        let at = columns.iter().position(|(c, _, _)| c == name);
                        positions.push(at.ok_or_else(|| {
                            self.source.error(format!(
                                "column '{name}' is no longer a column of the table"
                            ))
                        })?);
                    }
                    self.relation = Some((id, positions));
                }
                Message::Commit {
                    end_lsn,
                    commit_micros,
                    ..
                } => {
                    let Some((xid, changes)) = open.take() else {
                        continue;
                    };
                    let seen = self.seen.as_ref().is_some_and(|s| s.sees(xid));
                    if end_lsn <= self.read_to || seen {
                        self.read_to = self.read_to.max(end_lsn);
                        continue;
                    }
                    self.read_to = end_lsn;
                    let commit_millis = (commit_micros + POSTGRES_EPOCH_MICROS).div_euclid(1000);
                    let changes = self.number(changes, commit_millis);
                    if !changes.is_empty() {
                        done.push(Transaction {
                            end_lsn,
                            commit_millis,
                            changes,
                        });
                    }
                }
                Message::Truncate { .. } => {
                    return Err(self.source.error(format!(
                        "{} was truncated: a TRUNCATE carries no rows to retract",
                        self.source.options.qualified_name()
                    )))
                }
                Message::Other(_) => {}
                change => {
                    let Some((_, rows)) = open.as_mut() else {
                        return Err(self.source.error("a change outside a transaction".into()));
                    };
                    self.rows(change, rows)?;
                }
            }
        }
        Ok(done)
    }

    /// The rows of a change message of the table, in order (`-U` before `+U`; in an upsert
    /// changelog a `+U` alone, and a `-D` of what the table's identity sends).
    fn rows(&self, change: Message, out: &mut Vec<(RowKind, Vec<Value>)>) -> Result<(), Error> {
        let name = self.source.options.qualified_name();
        match change {
            Message::Insert { new, .. } => out.push((RowKind::Insert, new)),
            Message::Update {
                old,
                old_is_key,
                mut new,
                ..
            } => {
                // A TOASTed value the update did not change is not sent: it is the old one.
                let old = old.unwrap_or_default();
                let whole_old: &[Value] = if old_is_key { &[] } else { &old };
                for (i, n) in new.iter_mut().enumerate() {
                    if *n == Value::Unchanged {
                        let kept = whole_old.get(i).filter(|o| **o != Value::Unchanged);
                        *n = kept.cloned().ok_or_else(|| {
                            self.source.error(format!(
                                "an UPDATE of {name} left a large (TOASTed) value unchanged, which the table's replica identity does not send: ALTER TABLE {name} REPLICA IDENTITY FULL"
                            ))
                        })?;
                    }
                }
                if !self.source.options.upsert {
                    if old.is_empty() || old_is_key {
                        return Err(self.source.error(format!(
                            "an UPDATE of {name} came without its whole old row (is its REPLICA IDENTITY still FULL?)"
                        )));
                    }
                    out.push((RowKind::UpdateBefore, old));
                }
                out.push((RowKind::UpdateAfter, new));
            }
            Message::Delete {
                old, old_is_key, ..
            } => {
                if old_is_key && !self.source.options.upsert {
                    return Err(self.source.error(format!(
                        "a DELETE of {name} came with its key only (is its REPLICA IDENTITY still FULL?)"
                    )));
                }
                out.push((RowKind::Delete, old));
            }
            _ => {}
        }
        Ok(())
    }

    /// Numbers a transaction's rows and types them.
    fn number(
        &mut self,
        rows: Vec<(RowKind, Vec<Value>)>,
        commit_millis: i64,
    ) -> Vec<Result<Change<Row>, RowError>> {
        let Some((_, positions)) = &self.relation else {
            return Vec::new();
        };
        let path = self.source.options.qualified_name();
        let mut scratch = Vec::new();
        let mut out = Vec::with_capacity(rows.len());
        for (kind, values) in rows {
            self.seq += 1;
            let text = |k: usize| match &values[positions[k]] {
                Value::Text(t) => Some(t.as_str()),
                Value::Null | Value::Unchanged => None,
            };
            // An upsert changelog's delete is by key: its other values may be missing.
            let by_key = kind == RowKind::Delete && self.source.options.upsert;
            let row = self
                .source
                .pack(text, (&self.columns, by_key), commit_millis, &mut scratch)
                .map_err(|(column, reason)| {
                    RowError::at(0, &path, &self.header, self.seq, Some(column), reason)
                });
            out.push(row.map(|row| Change::new(self.seq, kind, row)));
        }
        out
    }

    /// Whether the last [`next_batch`](Self::next_batch) stopped at its limit: the slot may
    /// hold more changes already, to read at once.
    pub fn is_behind(&self) -> bool {
        self.behind
    }

    /// The end LSN of the last transaction read: [`confirm`](Self::confirm) it once everything
    /// read is handled (skipped and empty transactions included).
    pub fn read_to(&self) -> u64 {
        self.read_to
    }

    /// Advances the slot to `lsn`: the server may forget the changes before it, and a stream
    /// opened later starts there. An LSN at or before the slot's confirmed point changes
    /// nothing.
    ///
    /// Errors: the server refuses (an LSN beyond what was written).
    pub fn confirm(&mut self, lsn: u64) -> Result<(), Error> {
        if lsn <= self.confirmed {
            return Ok(());
        }
        let text = lsn_text(lsn);
        self.client
            .execute(
                "SELECT pg_replication_slot_advance($1, $2::text::pg_lsn)",
                &[&self.slot, &text],
            )
            .map_err(|e| self.source.error(source_text(&e)))?;
        self.confirmed = lsn;
        // The next peek starts at the new confirmed point.
        self.peeked = 0;
        Ok(())
    }
}

/// An LSN as Postgres writes it: `X/Y`, its two halves in hexadecimal.
fn lsn_text(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xffff_ffff)
}

/// An LSN's text form `X/Y` (two hexadecimal halves) as a number.
fn parse_lsn(text: &str) -> Option<u64> {
    let (high, low) = text.split_once('/')?;
    let high = u64::from_str_radix(high, 16).ok()?;
    let low = u64::from_str_radix(low, 16).ok()?;
    Some(high << 32 | low)
}
