#!/usr/bin/env bash
# Changes per second from a live PostgreSQL table into a CONTINUOUS materialized table (issue 16).
#
#   DTEMPORAL_POSTGRES="host=... port=... user=... password=... dbname=..." \
#     [DTEMPORAL=target/release/dtemporal] [WORKERS="1 2"] [KEYS=100000] [UPDATES=1000000] \
#     scripts/postgres-cdc-bench.sh
#
# For each worker count: a table of KEYS rows (REPLICA IDENTITY FULL) is copied by a
# CONTINUOUS materialized table run by `dtemporal serve`; once its snapshot is published, a load
# of UPDATES single-row-changing updates (transactions of 10,000 updates, each row updated
# UPDATES / KEYS times) is committed, and the time Postgres takes to commit them is printed
# beside the time until the materialized table holds their result (each update is a -U/+U
# pair through the slot, a round file and the dataflow). A server to run against:
# scripts/postgres.sh start DIR prints the connection line.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DTEMPORAL_POSTGRES:?set DTEMPORAL_POSTGRES to the connection line of a server (scripts/postgres.sh)}"
DTEMPORAL=${DTEMPORAL:-target/release/dtemporal}
WORKERS=${WORKERS:-"1 2"}
KEYS=${KEYS:-100000}
UPDATES=${UPDATES:-1000000}
value() { sed -E "s/.*(^| )$1=([^ ]*).*/\2/" <<<"$DTEMPORAL_POSTGRES"; }
export PGHOST=$(value host) PGPORT=$(value port) PGUSER=$(value user) PGPASSWORD=$(value password) PGDATABASE=$(value dbname)
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
now_ms() { date +%s%3N; }
[ -x "$DTEMPORAL" ] || cargo build --release --bin dtemporal

for w in $WORKERS; do
    work=$(mktemp -d)
    table=bench_cdc
    psql_q -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$table'" >/dev/null
    psql_q -c "DROP PUBLICATION IF EXISTS $table; DROP TABLE IF EXISTS $table;
               CREATE TABLE $table (id integer PRIMARY KEY, v bigint NOT NULL);
               ALTER TABLE $table REPLICA IDENTITY FULL;
               INSERT INTO $table SELECT i, 0 FROM generate_series(1, $KEYS) AS i;"
    "$DTEMPORAL" sql --quiet --warehouse "$work/wh" -e "
      CREATE TABLE src (id INT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)
        WITH ('connector' = 'postgres-cdc', 'hostname' = '$PGHOST', 'port' = '$PGPORT',
          'username' = '$PGUSER', 'password' = '$PGPASSWORD', 'database-name' = '$PGDATABASE',
          'table-name' = '$table', 'slot.name' = '$table');
      CREATE MATERIALIZED TABLE copy FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
        AS SELECT SUM(v) AS total, COUNT(*) AS n FROM src" >/dev/null
    "$DTEMPORAL" -w "$w" serve --warehouse "$work/wh" --poll-interval "100 ms" >"$work/serve.out" 2>"$work/serve.err" &
    serve=$!
    until grep -q "table=copy" "$work/serve.out" 2>/dev/null; do sleep 0.1; done
    per_txn=10000
    start=$(now_ms)
    for ((sent = 0; sent < UPDATES; sent += per_txn)); do
        from=$(( sent % KEYS + 1 ))
        echo "UPDATE $table SET v = v + 1 WHERE id BETWEEN $from AND $(( from + per_txn - 1 ));"
    done | psql_q
    committed=$(now_ms)
    expected=$UPDATES
    # The query writes a changelog: `+I,<total>`.
    until [ "$("$DTEMPORAL" sql --quiet --warehouse "$work/wh" -e "SELECT total FROM copy" | tail -1)" = "+I,$expected" ]; do
        if ! kill -0 "$serve" 2>/dev/null; then
            cat "$work/serve.err" >&2
            exit 1
        fi
        sleep 0.05
    done
    caught_up=$(now_ms)
    kill -TERM "$serve"; wait "$serve" || true
    pg_s=$(awk "BEGIN { printf \"%.2f\", ($committed - $start) / 1000 }")
    all_s=$(awk "BEGIN { printf \"%.2f\", ($caught_up - $start) / 1000 }")
    rate=$(awk "BEGIN { printf \"%.0f\", $UPDATES / (($caught_up - $start) / 1000) }")
    echo "workers=$w updates=$UPDATES keys=$KEYS postgres_commit_s=$pg_s materialized_s=$all_s updates_per_s=$rate"
    rm -rf "$work"
done
