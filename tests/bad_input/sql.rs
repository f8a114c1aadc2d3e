//! The bad-input rows of `dtemporal sql`: each a clear error with its position, exit code 2,
//! nothing on standard output.

use super::{Case, Via};

const O: &[u8] = b"id,cur,t\n1,EUR,2024-01-01 10:00:00\n";
const R: &[u8] = b"cur,rate,t\nEUR,114,2024-01-01 09:00:00\n";

macro_rules! ddl {
    () => {
        "CREATE TABLE o (id INT, cur STRING, t TIMESTAMP(3), WATERMARK FOR t AS t) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv'); CREATE TABLE r (cur STRING, rate INT, t TIMESTAMP(3), WATERMARK FOR t AS t) WITH ('connector' = 'filesystem', 'path' = 'r.csv', 'format' = 'csv');\n"
    };
}

const FILES: &[(&str, &[u8])] = &[("o.csv", O), ("r.csv", R)];

/// `CREATE TABLE t (id BIGINT, v STRING)` over `e.json` in `debezium-json`, with more options.
macro_rules! debezium {
    ($options:literal) => {
        concat!(
            "CREATE TABLE t (id BIGINT, v STRING) WITH ('connector' = 'filesystem', 'path' = 'e.json', 'format' = 'debezium-json'",
            $options,
            ")"
        )
    };
}

/// Debezium events, all but the first refused.
const DEBEZIUM_BAD: &[u8] = br#"{"before":null,"after":{"id":1,"v":"a"},"op":"c"}
{"before":null,"after":{"id":2,"v":"b"},"op":"x"}
{"after":{"id":3,"v":"c"},"op":"u"}
not json
{"before":null,"after":{"id":"four","v":"d"},"op":"c"}
{"schema":{},"payload":{"before":null,"after":{"id":5,"v":"e"},"op":"c"}}
{"before":null,"after":{"id":6,"v":["x"]},"op":"c"}
{"before":null,"after":null,"op":"c"}
"#;

pub(super) const SQL_CASES: &[Case] = &[
    Case {
        name: "sql: syntax error with its position and expectation",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT id FROM o WHERE id = = 1")]),
        code: 2,
        stderr: &["dtemporal: error: SQL syntax error at line 2, column 29: Expected: an expression, found: ="],
        stdout: "",
    },
    Case {
        name: "sql: unknown table",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT * FROM nope")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 15: table 'nope' not found; registered tables: o, r"],
        stdout: "",
    },
    Case {
        name: "sql: unknown column",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT idd FROM o")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 8: Column 'idd' not found in any table; the columns are: o.id, o.cur, o.t"],
        stdout: "",
    },
    Case {
        name: "sql: ambiguous column",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(
            ddl!(),
            "CREATE TABLE v (cur STRING, rate INT, t TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR t AS t) WITH ('connector' = 'filesystem', 'path' = 'r.csv', 'format' = 'csv');\n",
            "SELECT cur FROM o JOIN v FOR SYSTEM_TIME AS OF o.t ON o.cur = v.cur"
        )]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 3, column 8: Column 'cur' is ambiguous: it is a column of o and v; qualify it"],
        stdout: "",
    },
    Case {
        name: "sql: type error",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT cur + 1 FROM o")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 8: "],
        stdout: "",
    },
    Case {
        name: "sql: FOR SYSTEM_TIME AS OF a table without a primary key",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT o.id FROM o JOIN r FOR SYSTEM_TIME AS OF o.t ON o.cur = r.cur")]),
        code: 2,
        stderr: &["Temporal Table Join requires primary key in versioned table, but no primary key can be found"],
        stdout: "",
    },
    Case {
        name: "sql: the final table of a query over an unbounded datagen table",
        files: FILES,
        via: Via::Cli(&["sql", "--emit", "final", "-e", "CREATE TABLE g (id INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10'); SELECT id FROM g"]),
        code: 2,
        stderr: &["dtemporal: error: the query reads a table that never ends, so its final table never comes: it writes its changes as they happen (--emit retract or upsert) until interrupted"],
        stdout: "",
    },
    Case {
        name: "sql: a datagen sequence without its end",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE g (id INT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 56: Could not find required property 'fields.id.end' for sequence generator."],
        stdout: "",
    },
    Case {
        name: "sql: INSERT INTO a file from an unbounded nexmark table",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid'); CREATE TABLE out (price BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out.csv', 'format' = 'csv'); INSERT INTO out SELECT price FROM b"]),
        code: 2,
        stderr: &["dtemporal: error: table 'b' is unbounded (the connector 'nexmark' without 'events.num' makes rows forever), so a batch query over it never ends: read it from a CONTINUOUS materialized table, or add 'events.num' = '<n>' to its WITH options"],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark table without 'nexmark.table'",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT) WITH ('connector' = 'nexmark', 'events.num' = '10')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 14: table 'b' needs the option 'nexmark.table' ('person', 'auction' or 'bid')"],
        stdout: "",
    },
    Case {
        name: "sql: an unknown nexmark table",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bids', 'events.num' = '10')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 62: 'nexmark.table' is 'person', 'auction' or 'bid', not 'bids'"],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark column that is not a field",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (auction BIGINT, amount BIGINT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '10')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 33: column 'amount' is not a field of the nexmark table 'bid'; its fields are auction, bidder, price, channel, url, dateTime, extra"],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark column of the wrong type",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price INT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '10')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 17: column 'price' is of type INT, but the nexmark field bid.price is a BIGINT"],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark option with a typo",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'event.num' = '10')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 87: Unsupported option 'event.num' for connector 'nexmark' (did you mean 'events.num'?); supported options: connector, nexmark.table, events.num, first-event.rate, next-event.rate"],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark event count that is not a number",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = 'many')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 87: Could not parse value 'many' for key 'events.num'."],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark event rate of 0",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '10', 'first-event.rate' = '0')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 108: 'first-event.rate' is 0, not a rate in [1, 1000000] events a second"],
        stdout: "",
    },
    Case {
        name: "sql: a nexmark METADATA column",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE b (price BIGINT, ts TIMESTAMP_LTZ(3) METADATA) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'events.num' = '10')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 31: the connector 'nexmark' provides no metadata, but 'ts' is a METADATA column"],
        stdout: "",
    },
    Case {
        name: "sql: a connector option with a typo",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE o (id INT) WITH ('connector' = 'filesystem', 'pth' = 'o.csv', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 59: Unsupported option 'pth' for connector 'filesystem' (did you mean 'path'?); supported options: connector, format, path, source.monitor-interval"],
        stdout: "",
    },
    Case {
        name: "sql: a primary key on a computed column",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE o (id INT, cur STRING, k AS id + 1, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 63: Could not create a PRIMARY KEY with column 'k': it is a computed column, and a primary key is declared on physical columns"],
        stdout: "",
    },
    Case {
        name: "sql: a computed column over an unknown or computed column",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE o (id INT, cur STRING, k AS id + 1, k2 AS k * 2) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 56: Column 'k' not found in any table; the columns are: o.id, o.cur"],
        stdout: "",
    },
    Case {
        name: "sql: two PROCTIME() columns",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE o (id INT, p1 AS PROCTIME(), p2 AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 43: a table has one proctime attribute, but 'p1' and 'p2' are both PROCTIME()"],
        stdout: "",
    },
    Case {
        name: "sql: a WATERMARK on the proctime column",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE o (id INT, p1 AS PROCTIME(), WATERMARK FOR p1 AS p1) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 57: the proctime attribute 'p1' cannot also be the rowtime attribute (WATERMARK FOR)"],
        stdout: "",
    },
    Case {
        name: "sql: a computed rowtime that is not a timestamp",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "CREATE TABLE o (id INT, cur STRING, ts AS UPPER(cur), WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 69: invalid time attribute: the rowtime attribute 'ts' must be of type TIMESTAMP or TIMESTAMP_LTZ, but is of type STRING"],
        stdout: "",
    },
    Case {
        name: "sql: a directory table with no file but hidden ones",
        files: &[("d/.part-0.crc", b"x"), ("d/_SUCCESS", b""), ("d/sub/_tmp.csv", b"id\n1\n")],
        via: Via::Cli(&["sql", "-e", "CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = 'd', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 14: d: the table's directory holds no file (names starting with '.' or '_' are skipped)"],
        stdout: "",
    },
    Case {
        name: "sql: a directory table of a changelog file and an append-only file",
        files: &[("d/a.csv", b"op,id\n+I,1\n"), ("d/b.csv", b"id\n2\n")],
        via: Via::Cli(&["sql", "-e", "CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = 'd', 'format' = 'csv')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 14: d: d/a.csv has an \"op\" column and d/b.csv has not: the files of a table are all changelogs or all append-only"],
        stdout: "",
    },
    Case {
        name: "sql: a bad cell in the second file of a directory table",
        files: &[("d/a.csv", b"id\n1\n"), ("d/b.csv", b"id\nx\n3\n")],
        via: Via::Cli(&["sql", "-e", "CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = 'd', 'format' = 'csv'); SELECT * FROM t"]),
        code: 1,
        stderr: &["d/b.csv:2:1: column \"id\": cannot parse \"x\" as INT: not an integer\ndtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n"],
        stdout: "op,id\n+I,1\n+I,3\n",
    },
    Case {
        name: "sql: debezium-json events that do not decode, each a row error with its line",
        files: &[("e.json", DEBEZIUM_BAD)],
        via: Via::Cli(&["sql", "-e", concat!(debezium!(""), "; SELECT * FROM t")]),
        code: 1,
        stderr: &["e.json:2: Unknown \"op\" value \"x\"
e.json:3: The \"before\" field of UPDATE message is null, if you are using Debezium Postgres Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level.
e.json:4: invalid JSON: expected ident at line 1 column 2
e.json:5: column \"id\": cannot parse \"four\" as BIGINT: not an integer
e.json:6: the message has Debezium's {\"schema\": .., \"payload\": ..} wrapper: set 'debezium-json.schema-include' = 'true'
e.json:7: column \"v\": a JSON array is not a value of type STRING
e.json:8: the \"after\" field of CREATE message is null
dtemporal: 7 row(s) rejected (reported to standard error); --max-errors 0: failing
"],
        stdout: "op,id,v\n+I,1,a\n",
    },
    Case {
        name: "sql: debezium-json with schema-include and an event without its payload",
        files: &[("e.json", b"{\"before\":null,\"after\":{\"id\":1,\"v\":\"a\"},\"op\":\"c\"}\n")],
        via: Via::Cli(&["sql", "-e", concat!(debezium!(", 'debezium-json.schema-include' = 'true'"), "; SELECT * FROM t")]),
        code: 1,
        stderr: &["e.json:1: no \"payload\" object: with 'debezium-json.schema-include' = 'true' a message is {\"schema\": .., \"payload\": ..}\n"],
        stdout: "op,id,v\n",
    },
    Case {
        name: "sql: a debezium-json option this connector does not have",
        files: &[("e.json", b"")],
        via: Via::Cli(&["sql", "-e", debezium!(", 'debezium-json.ignore-parse-errors' = 'true'")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 119: Unsupported option 'debezium-json.ignore-parse-errors' for connector 'filesystem'; supported options: connector, format, path, source.monitor-interval, debezium-json.schema-include\n"],
        stdout: "",
    },
    Case {
        name: "sql: debezium-json.schema-include neither true nor false",
        files: &[("e.json", b"")],
        via: Via::Cli(&["sql", "-e", debezium!(", 'debezium-json.schema-include' = 'yes'")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 119: 'debezium-json.schema-include' is 'true' or 'false', not 'yes'\n"],
        stdout: "",
    },
    Case {
        name: "sql: an unknown debezium-json metadata key",
        files: &[("e.json", b"")],
        via: Via::Cli(&["sql", "-e", "CREATE TABLE t (id BIGINT, m TIMESTAMP(3) METADATA FROM 'value.source.ts' VIRTUAL) WITH ('connector' = 'filesystem', 'path' = 'e.json', 'format' = 'debezium-json')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 28: Invalid metadata key 'value.source.ts' in column 'm' of a debezium-json table; the available keys are 'ingestion-timestamp', 'source.timestamp', 'source.database', 'source.schema', 'source.table' (or with the prefix 'value.')\n"],
        stdout: "",
    },
    Case {
        name: "sql: a debezium-json metadata column of the wrong type",
        files: &[("e.json", b"")],
        via: Via::Cli(&["sql", "-e", "CREATE TABLE t (id BIGINT, m INT METADATA FROM 'source.timestamp') WITH ('connector' = 'filesystem', 'path' = 'e.json', 'format' = 'debezium-json')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 28: the metadata 'source.timestamp' is a TIMESTAMP_LTZ(3), but the column is of type INT\n"],
        stdout: "",
    },
    Case {
        name: "sql: an unknown format",
        files: &[("e.json", b"")],
        via: Via::Cli(&["sql", "-e", "CREATE TABLE t (id BIGINT) WITH ('connector' = 'filesystem', 'path' = 'e.json', 'format' = 'json')"]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 1, column 81: Could not find any factory for identifier 'json' ('format'); the available ones are 'csv', 'debezium-json'\n"],
        stdout: "",
    },
    Case {
        name: "sql: INSERT INTO a debezium-json table with schema-include (Flink writes no schema)",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), debezium!(", 'debezium-json.schema-include' = 'true'"), "; INSERT INTO t SELECT id, cur FROM o")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 173: Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true.\n"],
        stdout: "",
    },
    Case {
        name: "sql: a regular join without an equality predicate",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT o.id, r.rate FROM o JOIN r ON o.t > r.t")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 38: Join: Invalid join condition: o.t > r.t. At least one equi-join predicate is required.\n"],
        stdout: "",
    },
    Case {
        name: "sql: a UNION of a different number of columns",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT id FROM o UNION ALL SELECT cur, rate FROM r")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 1: SetOp: UNION ALL: the inputs have 1 and 2 columns, a set operation needs as many on each side; the left side is [id INT], the right side is [cur STRING, rate INT]\n"],
        stdout: "",
    },
    Case {
        name: "sql: an INTERSECT of columns of different types",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT id, cur FROM o INTERSECT SELECT cur, rate FROM r")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 1: SetOp: INTERSECT: column 1 has type INT on the left ('id') and STRING on the right ('cur'); the left side is [id INT, cur STRING], the right side is [cur STRING, rate INT]\n"],
        stdout: "",
    },    Case {
        name: "sql: ORDER BY a column that is not the rowtime, without LIMIT",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT * FROM o ORDER BY cur")]),
        code: 2,
        stderr: &["dtemporal: error: SQL validation error at line 2, column 26: Sort: Sort on a non-time-attribute field is not supported: ORDER BY on an unbounded table needs FETCH / LIMIT (a Top-N) or an ascending time attribute as its first key, and the first key is 'cur', not a time attribute\n"],
        stdout: "",
    },
    Case {
        name: "sql: a HOP window that would put each row in 3,600,000 windows",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE o, DESCRIPTOR(t), INTERVAL '0.001' SECOND, INTERVAL '1' HOUR)) GROUP BY window_start, window_end")]),
        code: 2,
        stderr: &["WindowAggregate: a HOP window of size 3600000ms every 1ms puts each row in 3600000 windows; at most 1000 are supported"],
        stdout: "",
    },
    Case {
        name: "sql: a tumbling window over a column that is not a time attribute",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT cur, COUNT(*) FROM o GROUP BY cur, TUMBLE(id, INTERVAL '1' HOUR)")]),
        code: 2,
        stderr: &["WindowAggregate: Window aggregate can only be defined over a time attribute column, but 'id' (INT) is not one (declare a WATERMARK for it, or AS PROCTIME())"],
        stdout: "",
    },
    Case {
        name: "sql: OFFSET without FETCH or LIMIT",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT * FROM o ORDER BY t OFFSET 1")]),
        code: 2,
        stderr: &["Sort: OFFSET without FETCH / LIMIT on an unbounded table is not supported"],
        stdout: "",
    },
    Case {
        name: "sql: OVER windows that differ in one select",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT COUNT(*) OVER (ORDER BY t), COUNT(*) OVER (PARTITION BY cur ORDER BY t) FROM o")]),
        code: 2,
        stderr: &["SQL validation error at line 2, column 36: All aggregates must be computed on the same window"],
        stdout: "",
    },
    Case {
        name: "sql: an OVER window ending at a FOLLOWING row",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT SUM(id) OVER (ORDER BY t ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM o")]),
        code: 2,
        stderr: &["OVER windows end at CURRENT ROW in streaming mode; the bound 1 FOLLOWING is not supported"],
        stdout: "",
    },
    Case {
        name: "sql: an OVER window ordered by a column that is not a time attribute",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT SUM(id) OVER (PARTITION BY cur ORDER BY id) FROM o")]),
        code: 2,
        stderr: &["OverAggregate: OVER windows' ordering in stream mode must be defined on a time attribute, but 'id' (INT) is not one (declare a WATERMARK for it, or AS PROCTIME())"],
        stdout: "",
    },
    Case {
        name: "sql: a ROW_NUMBER filter that is neither Top-N nor deduplication",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SELECT id FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM o) WHERE rn > 2")]),
        code: 2,
        stderr: &["ROW_NUMBER() is supported in Flink's Top-N and deduplication patterns: the outer query must filter WHERE rn <= N (or rn < N, rn = 1)"],
        stdout: "",
    },
    Case {
        name: "sql: a state TTL given as a wall-clock duration",
        files: FILES,
        via: Via::Cli(&["sql", "-e", concat!(ddl!(), "SET 'table.exec.state.ttl' = '1 h'; SELECT * FROM o JOIN r ON o.cur = r.cur")]),
        code: 2,
        stderr: &["SQL validation error at line 2, column 1: 'table.exec.state.ttl' takes a whole number of system times (this engine's processing-time clock: one input block each, not wall-clock time), e.g. '3', or '0' for no TTL; not '1 h'"],
        stdout: "",
    },
    Case {
        name: "sql: a negative state TTL",
        files: FILES,
        via: Via::Cli(&["sql", "-e", "SET 'table.exec.state.ttl' = '-5'"]),
        code: 2,
        stderr: &["SQL validation error at line 1, column 1: 'table.exec.state.ttl' takes a whole number of system times (this engine's processing-time clock: one input block each, not wall-clock time), e.g. '3', or '0' for no TTL; not '-5'"],
        stdout: "",
    },
];
