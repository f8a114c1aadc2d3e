//! The change stream of a postgres-cdc table (`PostgresSource::open_stream`): the snapshot and
//! the stream together hold every committed transaction exactly once, even with writers running
//! while the stream opens; a transaction's changes come together, with its commit time; a
//! stream resumes after what was confirmed, and re-reads what was not.

use std::collections::BTreeMap;

use differential_temporal::io::postgres::{
    ChangeStream, ColumnSource, PostgresOptions, PostgresSource, Slot, Transaction,
};
use differential_temporal::repr::{DataType, Row, Schema};
use postgres::{Client, NoTls};

use super::{server, setup, value};

/// The source reading `table` (id, name, amount, at, and `op_ts`) through `slot`.
fn source(line: &str, table: &str, slot: &str, mode: &str) -> PostgresSource {
    let options: Vec<(String, String)> = [
        ("connector", "postgres-cdc".to_string()),
        ("hostname", value(line, "host")),
        ("port", value(line, "port")),
        ("username", value(line, "user")),
        ("password", value(line, "password")),
        ("database-name", value(line, "dbname")),
        ("table-name", table.to_string()),
        ("slot.name", slot.to_string()),
        ("scan.startup.mode", mode.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let schema = Schema::builder()
        .column("id", DataType::Int.not_null())
        .column("name", DataType::STRING.nullable())
        .column("amount", DataType::decimal(10, 2).unwrap().nullable())
        .column("op_ts", DataType::TimestampLtz(3).nullable())
        .build()
        .unwrap();
    let physical = ColumnSource::Physical;
    PostgresSource {
        name: table.to_string(),
        options: PostgresOptions::from_options(&options).unwrap(),
        schema,
        columns: vec![
            physical.clone(),
            physical.clone(),
            physical,
            ColumnSource::Metadata("op_ts".into()),
        ],
    }
}

/// A fresh table `name` (id, name, amount) with REPLICA IDENTITY FULL (unless `full` is
/// false), and no slot or publication of that name left from an earlier run.
fn fresh_table(line: &str, name: &str, full: bool) {
    let columns = "id integer PRIMARY KEY, name text, amount numeric(10, 2)";
    super::fresh_table(line, name, columns, full);
}

/// The error of `r`.
fn error<T>(r: Result<T, differential_temporal::error::Error>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// Every transaction the stream has, read until a read brings nothing new.
fn drain(stream: &mut ChangeStream) -> Vec<Transaction> {
    let mut all = Vec::new();
    loop {
        let batch = stream.next_batch(100).unwrap();
        if batch.is_empty() {
            return all;
        }
        all.extend(batch);
    }
}

/// A transaction's changes as `KIND id name amount` text.
fn text(t: &Transaction) -> Vec<String> {
    t.changes
        .iter()
        .map(|c| {
            let c = c.as_ref().unwrap();
            let cells: Vec<String> = c.row.iter().take(3).map(|d| format!("{d:?}")).collect();
            format!("{} {}", c.kind, cells.join(" "))
        })
        .collect()
}

/// Adds `row`'s first three columns to `table` with `sign`.
fn count(table: &mut BTreeMap<String, i64>, row: &Row, sign: i64) {
    let cells: Vec<String> = row.iter().take(3).map(|d| format!("{d:?}")).collect();
    *table.entry(cells.join(" ")).or_default() += sign;
}

#[test]
fn snapshot_and_stream_hold_each_transaction_once() {
    let Some(line) = server() else { return };
    let table = "pgcdc_stream";
    fresh_table(&line, table, true);
    setup(
        &line,
        &format!("INSERT INTO {table} SELECT i, 'n' || i, i FROM generate_series(1, 20) AS i;"),
    );
    // A writer commits 60 small transactions while the stream opens (its slot, then its
    // snapshot): each is in the snapshot or in the stream, never both, never neither.
    let writer_line = line.clone();
    let writer = std::thread::spawn(move || {
        let mut client = Client::connect(&writer_line, NoTls).unwrap();
        for i in 0..60 {
            let sql = match i % 3 {
                0 => format!("INSERT INTO {table} VALUES ({}, 'w', {i})", 100 + i),
                1 => format!(
                    "UPDATE {table} SET amount = amount + 1 WHERE id = {}",
                    1 + i % 20
                ),
                _ => format!("DELETE FROM {table} WHERE id = {}", 100 + i - 2),
            };
            client.batch_execute(&sql).unwrap();
        }
    });
    let source = source(&line, table, table, "initial");
    let (snapshot, mut stream) = source.open_stream(None, Slot::Kept).unwrap();
    writer.join().unwrap();
    let snapshot = snapshot.expect("'initial' reads the snapshot");
    let mut accumulated = BTreeMap::new();
    let mut sink = |row: Result<differential_temporal::operators::Change<Row>, _>| {
        let change = row.unwrap();
        count(&mut accumulated, &change.row, change.kind.sign() as i64);
    };
    let mut blocks = snapshot.blocks();
    while let Some(b) = blocks.next_block() {
        snapshot.block_rows(&b, (0, 1), &mut sink);
    }
    for t in drain(&mut stream) {
        for change in t.changes {
            sink(change);
        }
    }
    accumulated.retain(|_, n| *n != 0);
    // The table now, read afresh.
    let now = source.snapshot().unwrap();
    let mut expected = BTreeMap::new();
    let mut blocks = now.blocks();
    while let Some(b) = blocks.next_block() {
        now.block_rows(&b, (0, 1), &mut |row| {
            count(&mut expected, &row.unwrap().row, 1)
        });
    }
    assert_eq!(accumulated, expected);
    assert!(accumulated.values().all(|&n| n == 1), "no row twice");
    // Each of the writer's inserts is deleted two writes later: the 20 rows stay.
    assert_eq!(expected.len(), 20);
}

#[test]
fn a_transaction_comes_whole_and_a_stream_resumes_after_what_it_confirmed() {
    let Some(line) = server() else { return };
    let table = "pgcdc_resume";
    fresh_table(&line, table, true);
    setup(
        &line,
        &format!("INSERT INTO {table} VALUES (1, 'a', 1.50);"),
    );
    let source = source(&line, table, table, "initial");
    let (snapshot, mut stream) = source.open_stream(None, Slot::Kept).unwrap();
    assert_eq!(snapshot.unwrap().len(), 1);
    assert!(drain(&mut stream).is_empty(), "the snapshot has the insert");
    setup(
        &line,
        &format!(
            "BEGIN; INSERT INTO {table} VALUES (2, 'b', 2.00);
               UPDATE {table} SET amount = 2.25, name = 'a2' WHERE id = 1;
               DELETE FROM {table} WHERE id = 2; COMMIT;
             UPDATE {table} SET amount = NULL WHERE id = 1;"
        ),
    );
    let transactions = drain(&mut stream);
    let kinds: Vec<Vec<String>> = transactions.iter().map(text).collect();
    assert_eq!(
        kinds,
        [
            vec![
                "+I Int(2) Str(\"b\") Decimal(200)",
                "-U Int(1) Str(\"a\") Decimal(150)",
                "+U Int(1) Str(\"a2\") Decimal(225)",
                "-D Int(2) Str(\"b\") Decimal(200)",
            ],
            vec![
                "-U Int(1) Str(\"a2\") Decimal(225)",
                "+U Int(1) Str(\"a2\") Null",
            ],
        ]
    );
    // `seq` goes on after the snapshot's row; `op_ts` is each transaction's commit time.
    let seqs: Vec<u64> = transactions[0]
        .changes
        .iter()
        .map(|c| c.as_ref().unwrap().seq)
        .collect();
    assert_eq!(seqs, [2, 3, 4, 5]);
    let now_millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for t in &transactions {
        assert!(
            (now_millis - t.commit_millis).abs() < 600_000,
            "{}",
            t.commit_millis
        );
        let op_ts = t.changes[0].as_ref().unwrap().row.iter().nth(3).unwrap();
        assert_eq!(
            format!("{op_ts:?}"),
            format!(
                "{:?}",
                differential_temporal::repr::Datum::Timestamp(
                    differential_temporal::repr::Ts::from_millis(t.commit_millis)
                )
            )
        );
    }
    // Confirm the first transaction only: a stream opened again (resuming after it) reads the
    // second one again, and nothing else; after confirming it, nothing.
    let first_end = transactions[0].end_lsn;
    stream.confirm(first_end).unwrap();
    drop(stream);
    let (snapshot, mut resumed) = source.open_stream(Some(first_end), Slot::Kept).unwrap();
    assert!(snapshot.is_none(), "a resumed stream reads no snapshot");
    let again = drain(&mut resumed);
    assert_eq!(
        again.iter().map(text).collect::<Vec<_>>(),
        [kinds[1].clone()]
    );
    resumed.confirm(resumed.read_to()).unwrap();
    let (_, mut after) = source
        .open_stream(Some(resumed.read_to()), Slot::Kept)
        .unwrap();
    drop(resumed);
    assert!(drain(&mut after).is_empty());
}

#[test]
fn what_the_stream_cannot_read_is_a_clear_error() {
    let Some(line) = server() else { return };
    let table = "pgcdc_stream_bad";
    fresh_table(&line, table, false);
    let source = source(&line, table, table, "initial");
    assert_eq!(
        error(source.open_stream(None, Slot::Kept)),
        "table 'pgcdc_stream_bad' (postgres-cdc): public.pgcdc_stream_bad does not have REPLICA IDENTITY FULL, so its updates and deletes do not carry the old row: ALTER TABLE public.pgcdc_stream_bad REPLICA IDENTITY FULL, or read it as an upsert changelog ('changelog-mode' = 'upsert')"
    );
    setup(
        &line,
        &format!("ALTER TABLE {table} REPLICA IDENTITY FULL;"),
    );
    let (_, mut stream) = source.open_stream(None, Slot::Kept).unwrap();
    // The slot exists now: reading from a snapshot again would need a new one.
    assert_eq!(
        error(source.open_stream(None, Slot::Kept)),
        "table 'pgcdc_stream_bad' (postgres-cdc): replication slot 'pgcdc_stream_bad' exists, and reading the table from its snapshot ('initial') needs a new slot (an old one may hold changes the snapshot has): drop it with SELECT pg_drop_replication_slot('pgcdc_stream_bad'), or name another 'slot.name'"
    );
    // Resuming needs the slot: without it the changes after the position are gone.
    setup(&line, &format!("INSERT INTO {table} VALUES (1, 'a', 1)"));
    let read_to = {
        let (_, mut other) = source.open_stream(Some(1), Slot::Kept).unwrap();
        assert_eq!(other.next_batch(10).unwrap().len(), 1);
        other.read_to()
    };
    setup(&line, &format!("TRUNCATE {table};"));
    assert_eq!(
        error(stream.next_batch(10)),
        "table 'pgcdc_stream_bad' (postgres-cdc): public.pgcdc_stream_bad was truncated: a TRUNCATE carries no rows to retract"
    );
    setup(
        &line,
        &format!("SELECT pg_drop_replication_slot('{table}') FROM pg_replication_slots WHERE slot_name = '{table}' AND NOT active"),
    );
    let gone = error(source.open_stream(Some(read_to), Slot::Kept));
    assert!(
        gone.starts_with("table 'pgcdc_stream_bad' (postgres-cdc): replication slot 'pgcdc_stream_bad' is gone, so the changes after "),
        "{gone}"
    );
}

/// An upsert changelog (`'changelog-mode' = 'upsert'`) reads a table of the default replica
/// identity: an UPDATE is a `+U` of the new row alone, a DELETE a `-D` of the key, its other
/// values NULL (even in a NOT NULL column: the delete is by key).
#[test]
fn an_upsert_changelog_reads_the_default_identity() {
    let Some(line) = server() else { return };
    let table = "pgcdc_upsert";
    fresh_table(&line, table, false);
    setup(
        &line,
        &format!("INSERT INTO {table} VALUES (1, 'a', 1.50);"),
    );
    let mut source = source(&line, table, table, "initial");
    source.options.upsert = true;
    source.schema.fields[1].ty.nullable = false;
    // Deletes come by the table's primary key: the declared key must be it.
    source.schema.primary_key = Some(vec![1]);
    assert_eq!(
        error(source.open_stream(None, Slot::Kept)),
        "table 'pgcdc_upsert' (postgres-cdc): public.pgcdc_upsert is read as an upsert changelog by its primary key, so the declared PRIMARY KEY must be the table's: declared \"name\", the table's \"id\" (with no primary key, ALTER TABLE public.pgcdc_upsert REPLICA IDENTITY FULL and read it with 'changelog-mode' = 'all')"
    );
    let no_key = "pgcdc_upsert_no_key";
    super::fresh_table(
        &line,
        no_key,
        "id integer, name text, amount numeric(10, 2)",
        false,
    );
    let mut keyless = self::source(&line, no_key, no_key, "initial");
    keyless.options.upsert = true;
    keyless.schema.primary_key = Some(vec![0]);
    assert_eq!(
        error(keyless.open_stream(None, Slot::Kept)),
        "table 'pgcdc_upsert_no_key' (postgres-cdc): public.pgcdc_upsert_no_key is read as an upsert changelog by its primary key, so the declared PRIMARY KEY must be the table's: declared \"id\", the table's none (with no primary key, ALTER TABLE public.pgcdc_upsert_no_key REPLICA IDENTITY FULL and read it with 'changelog-mode' = 'all')"
    );
    source.schema.primary_key = Some(vec![0]);
    let (snapshot, mut stream) = source.open_stream(None, Slot::Kept).unwrap();
    assert_eq!(snapshot.unwrap().len(), 1);
    setup(
        &line,
        &format!(
            "UPDATE {table} SET amount = 2.25 WHERE id = 1;
             DELETE FROM {table} WHERE id = 1;"
        ),
    );
    let kinds: Vec<Vec<String>> = drain(&mut stream).iter().map(text).collect();
    assert_eq!(
        kinds,
        // One transaction: a multi-statement query runs in one.
        [vec![
            "+U Int(1) Str(\"a\") Decimal(225)",
            "-D Int(1) Null Null"
        ]]
    );
}

/// An upsert changelog of a table without a primary key is refused also when its replica
/// identity is FULL (it was read: duplicate keys collapsed and a delete lost a row): nothing
/// keeps the declared key unique in the table.
#[test]
fn an_upsert_changelog_of_a_keyless_table_is_refused_whatever_its_identity() {
    let Some(line) = server() else { return };
    let table = "pgcdc_upsert_no_key_full";
    super::fresh_table(
        &line,
        table,
        "id integer, name text, amount numeric(10, 2)",
        true,
    );
    let mut source = source(&line, table, table, "initial");
    source.options.upsert = true;
    source.schema.primary_key = Some(vec![0]);
    assert_eq!(
        error(source.open_stream(None, Slot::Kept)),
        "table 'pgcdc_upsert_no_key_full' (postgres-cdc): public.pgcdc_upsert_no_key_full is read as an upsert changelog by its primary key, so the declared PRIMARY KEY must be the table's: declared \"id\", the table's none (with no primary key, ALTER TABLE public.pgcdc_upsert_no_key_full REPLICA IDENTITY FULL and read it with 'changelog-mode' = 'all')"
    );
}
