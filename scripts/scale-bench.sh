#!/usr/bin/env bash
# dtemporal beside DuckDB on generated data of issue 48's shape, whole process, CSV in and CSV out:
#   facts(id BIGINT, k STRING, g BIGINT, ts TIMESTAMP(3), amount DECIMAL(10,2)): ROWS rows, k of
#     ROWS/3 distinct values scattered over the file (row i has key i * 48271 mod ROWS/3), g of
#     1000 values, ts 10 ms apart and out of order by up to 5 s, amount 0.00-999.99;
#   versions(k STRING, vts TIMESTAMP(3), rate DECIMAL(10,2)): 3 versions per key, the first of
#     each key a little after the facts begin (so early facts find none).
# The five jobs (`dtemporal sql --emit final`, incremental mode; DuckDB's equivalent):
#   group:    SELECT k, COUNT(*), SUM(amount), MAX(ts) FROM facts GROUP BY k
#   dedup:    the last fact of each k by ts (ROW_NUMBER() ... = 1; DuckDB: QUALIFY, ties by id)
#   temporal: facts LEFT JOIN versions FOR SYSTEM_TIME AS OF f.ts (DuckDB: ASOF LEFT JOIN)
#   tumble:   1-minute TUMBLE windows GROUP BY g, COUNT(*) and SUM(amount) (DuckDB: time_bucket)
#   join:     facts INNER JOIN (SELECT k, MAX(rate) FROM versions GROUP BY k) ON k
# Before timing, both engines' outputs of a job are checked equal: every row, each cell
# normalised (numbers as decimals, timestamps without a `T` or trailing zeros), as sorted
# multisets. Then the runs alternate, RUNS times each; per engine the median wall seconds, CPU
# seconds (user + system) and peak RSS, and dtemporal's ratio to DuckDB's, with the load average.
#
#   scripts/scale-bench.sh 1000000                  # 1M rows (data generated into data/scale/)
#   RUNS=5 WORKERS=2 JOBS="group dedup" scripts/scale-bench.sh 3000000
#   DTEMPORAL=target/release/dtemporal scripts/scale-bench.sh 1000000   # a binary already built
#   DTEMPORAL_ARGS="--epoch-bytes 1048576" scripts/scale-bench.sh 1000000   # extra `sql` options
#
# Needs python3 with venv; the duckdb package (pinned in scripts/duckdb-beside.sh) is installed into $VENV (default
# target/duckdb-venv) when missing. The data is kept in data/scale/ROWS/ for the next run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROWS="${1:?usage: scripts/scale-bench.sh ROWS}"
WORKERS="${WORKERS:-2}"
RUNS="${RUNS:-3}"
JOBS="${JOBS:-group dedup temporal tumble join}"
DATA="$ROOT/data/scale/$ROWS"

# shellcheck source=scripts/duckdb-beside.sh
source "$ROOT/scripts/duckdb-beside.sh"

if [[ ! -f "$DATA/versions.csv" ]]; then
  mkdir -p "$DATA"
  "$VENV/bin/python" - "$ROWS" "$DATA" <<'PY'
import sys, duckdb
rows, data = int(sys.argv[1]), sys.argv[2]
keys = max(rows // 3, 1)
con = duckdb.connect()
# Timestamps are written with their milliseconds, decimals with two places.
con.execute(f"""COPY (
  SELECT i AS id, 'key' || ((i * 48271) % {keys}) AS k, hash(i * 3) % 1000 AS g,
         strftime(TIMESTAMP '2024-01-01' + to_milliseconds(i * 10 + hash(i) % 5000), '%Y-%m-%d %H:%M:%S.%g') AS ts,
         CAST((hash(i * 7) % 100000) / 100 AS DECIMAL(10,2)) AS amount
  FROM range({rows}) t(i)) TO '{data}/facts.csv.part' (HEADER, DELIMITER ',')""")
span = rows * 10
con.execute(f"""COPY (
  SELECT 'key' || (i // 3) AS k,
         strftime(TIMESTAMP '2024-01-01' + to_milliseconds((i % 3) * {span // 3} + (i // 3) % 1000 * 1000), '%Y-%m-%d %H:%M:%S.%g') AS vts,
         CAST((hash(i * 11) % 10000) / 100 AS DECIMAL(10,2)) AS rate
  FROM range({keys * 3}) t(i)) TO '{data}/versions.csv.part' (HEADER, DELIMITER ',')""")
PY
  mv "$DATA/facts.csv.part" "$DATA/facts.csv"
  mv "$DATA/versions.csv.part" "$DATA/versions.csv"
fi
FACTS="$DATA/facts.csv"
VERSIONS="$DATA/versions.csv"

cat > "$TMP/tables.sql" <<SQL
CREATE TABLE facts (id BIGINT, k STRING, g BIGINT, ts TIMESTAMP(3), amount DECIMAL(10,2),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '$FACTS', 'format' = 'csv');
CREATE TABLE versions (k STRING, vts TIMESTAMP(3), rate DECIMAL(10,2),
  PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR vts AS vts)
  WITH ('connector' = 'filesystem', 'path' = '$VERSIONS', 'format' = 'csv');
SQL
query() { # job engine: the job's query in that engine's SQL
  local job="$1" engine="$2"
  case "$job/$engine" in
    group/*) echo "SELECT k, COUNT(*) AS n, SUM(amount) AS total, MAX(ts) AS last_ts FROM facts GROUP BY k" ;;
    dedup/sql) echo "SELECT id, k, g, ts, amount FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rownum FROM facts)
      WHERE rownum = 1" ;;
    dedup/duckdb) echo "SELECT id, k, g, ts, amount FROM facts
      QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC, id DESC) = 1" ;;
    temporal/sql) echo "SELECT f.id, f.k, f.amount, v.rate FROM facts AS f
      LEFT JOIN versions FOR SYSTEM_TIME AS OF f.ts AS v ON f.k = v.k" ;;
    temporal/duckdb) echo "SELECT f.id, f.k, f.amount, v.rate FROM facts f
      ASOF LEFT JOIN versions v ON f.k = v.k AND f.ts >= v.vts" ;;
    tumble/sql) echo "SELECT g, window_start, window_end, COUNT(*) AS n, SUM(amount) AS total
      FROM TABLE(TUMBLE(TABLE facts, DESCRIPTOR(ts), INTERVAL '1' MINUTES))
      GROUP BY g, window_start, window_end" ;;
    tumble/duckdb) echo "SELECT g, time_bucket(INTERVAL 1 minute, ts) AS window_start,
        time_bucket(INTERVAL 1 minute, ts) + INTERVAL 1 minute AS window_end, COUNT(*) AS n,
        SUM(amount) AS total
      FROM facts GROUP BY g, window_start, window_end" ;;
    join/*) echo "SELECT f.id, f.k, f.amount, t.top FROM facts AS f
      JOIN (SELECT k, MAX(rate) AS top FROM versions GROUP BY k) AS t ON f.k = t.k" ;;
  esac
}
cat > "$TMP/run_duckdb.py" <<'PY'
import sys, duckdb
query_file, facts, versions, out, threads = sys.argv[1:6]
con = duckdb.connect()
con.execute(f"SET threads = {int(threads)}")
con.execute(f"""CREATE VIEW facts AS SELECT * FROM read_csv('{facts}', header = true, columns = {{
  'id': 'BIGINT', 'k': 'VARCHAR', 'g': 'BIGINT', 'ts': 'TIMESTAMP', 'amount': 'DECIMAL(10,2)'}})""")
con.execute(f"""CREATE VIEW versions AS SELECT * FROM read_csv('{versions}', header = true, columns = {{
  'k': 'VARCHAR', 'vts': 'TIMESTAMP', 'rate': 'DECIMAL(10,2)'}})""")
query = open(query_file).read()
con.execute(f"COPY ({query}) TO '{out}' (HEADER, DELIMITER ',')")
PY
cat > "$TMP/check.py" <<'PY'
# Both outputs as sorted multisets of normalised rows, header skipped: equal or a diff's start.
import csv, sys
from decimal import Decimal, InvalidOperation
def cell(text):
    try:
        return str(Decimal(text).normalize())
    except InvalidOperation:
        pass
    text = text.replace("T", " ")
    if len(text) >= 19 and text[4] == "-" and text[13] == ":":
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return text
def rows(path):
    with open(path, newline="") as f:
        reader = csv.reader(f)
        next(reader)
        return sorted(tuple(cell(c) for c in row) for row in reader)
a, b = rows(sys.argv[1]), rows(sys.argv[2])
if a != b:
    missing = sorted(set(b) - set(a))[:3]
    extra = sorted(set(a) - set(b))[:3]
    sys.exit(f"{len(a)} rows against {len(b)}; only in dtemporal: {extra}; only in duckdb: {missing}")
print(f"{len(a)} rows")
PY

run() { # job engine out: the command line of one engine on one job
  local job="$1" engine="$2" out="$3"
  case "$engine" in
    # shellcheck disable=SC2086 # DTEMPORAL_ARGS is split on purpose
    sql) echo "$BIN" sql -w "$WORKERS" ${DTEMPORAL_ARGS:-} -f "$TMP/$job.sql" --emit final --output "$out" ;;
    duckdb) echo "$VENV/bin/python" "$TMP/run_duckdb.py" "$TMP/$job.duckdb" "$FACTS" "$VERSIONS" "$out" "$WORKERS" ;;
  esac
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "# $ROWS rows, $WORKERS workers/threads, medians of $RUNS, $(date -u '+%Y-%m-%d %H:%M UTC'), load$(uptime | sed 's/.*load average//')"
printf "%-9s %-7s %9s %9s %9s   %s\n" job engine wall_s cpu_s rss_mb "dtemporal/duckdb: wall cpu rss"
for job in $JOBS; do
  { cat "$TMP/tables.sql"; query "$job" sql; echo ";"; } > "$TMP/$job.sql"
  query "$job" duckdb > "$TMP/$job.duckdb"
  for engine in sql duckdb; do
    # shellcheck disable=SC2046 # the command line is split on purpose (no spaces in its words)
    $(run "$job" "$engine" "$TMP/$engine.csv") >/dev/null
  done
  rows="$("$VENV/bin/python" "$TMP/check.py" "$TMP/sql.csv" "$TMP/duckdb.csv")" || { echo "$job: the answers differ" >&2; exit 1; }
  : > "$TMP/times"
  for _ in $(seq "$RUNS"); do
    for engine in sql duckdb; do
      # shellcheck disable=SC2046
      /usr/bin/time -f "$engine %e %U %S %M" -a -o "$TMP/times" $(run "$job" "$engine" "$TMP/out.csv") >/dev/null
    done
  done
  declare -A m=()
  for engine in sql duckdb; do
    m[$engine.wall]=$(awk -v e="$engine" '$1 == e { print $2 }' "$TMP/times" | median)
    m[$engine.cpu]=$(awk -v e="$engine" '$1 == e { print $3 + $4 }' "$TMP/times" | median)
    m[$engine.rss]=$(awk -v e="$engine" '$1 == e { print $5 / 1024 }' "$TMP/times" | median)
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
  printf "%-9s %-7s %9.2f %9.2f %9.0f   (%s)\n" "$job" dtemporal "${m[sql.wall]}" "${m[sql.cpu]}" "${m[sql.rss]}" "$rows"
  printf "%-9s %-7s %9.2f %9.2f %9.0f   %s %s %s\n" "$job" duckdb "${m[duckdb.wall]}" "${m[duckdb.cpu]}" "${m[duckdb.rss]}" \
    "$(ratio "${m[sql.wall]}" "${m[duckdb.wall]}")" "$(ratio "${m[sql.cpu]}" "${m[duckdb.cpu]}")" "$(ratio "${m[sql.rss]}" "${m[duckdb.rss]}")"
done
