#!/usr/bin/env bash
# dtemporal beside DuckDB on the same files, whole process, CSV in and CSV out:
#   join:  each flight LEFT JOINed with the weather at its origin as of its scheduled departure
#          (`temporal-join --left --mode final --lateness 0`, `dtemporal sql` FOR SYSTEM_TIME AS OF
#          with `WATERMARK FOR ts AS ts`, the same watermark, DuckDB's
#          ASOF LEFT JOIN ... ON f.origin = w.origin AND f.ts >= w.ts);
#   dedup: the last flight of each tailnum by scheduled departure, ties by position in the file
#          (`dedup --keep last`, the ROW_NUMBER() deduplication in `dtemporal sql`, DuckDB's
#          QUALIFY row_number() OVER (PARTITION BY tailnum ORDER BY ts DESC, id DESC) = 1).
# Before timing, every engine's output of a job is checked to agree on the row count and on the
# sum of one numeric column (`temp` for the join, `id` for dedup). Then the runs alternate, RUNS
# times each, one line per run: wall seconds, CPU seconds (user + system) and peak RSS.
#
#   scripts/compare-duckdb.sh                  # full year (fetched into data/full/ if missing)
#   WORKERS=2 RUNS=5 scripts/compare-duckdb.sh
#   DTEMPORAL=target/release/dtemporal scripts/compare-duckdb.sh   # a binary already built
#   VENV=/path/to/venv scripts/compare-duckdb.sh                   # where duckdb is installed
#
# Needs python3 with venv; the duckdb package (pinned in scripts/duckdb-beside.sh) is installed into $VENV (default
# target/duckdb-venv) when missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$ROOT/data/full"
FLIGHTS="$DATA/flights.csv"
WEATHER="$DATA/weather.csv"
WORKERS="${WORKERS:-2}"
RUNS="${RUNS:-3}"

[[ -f "$FLIGHTS" && -f "$WEATHER" ]] || "$ROOT/scripts/fetch-data.sh"
# shellcheck source=scripts/duckdb-beside.sh
source "$ROOT/scripts/duckdb-beside.sh"

# Every column as in the file; `ts` typed (the event time), the rest text as the commands read them.
columns() { head -n 1 "$1" | tr ',' '\n' | sed -e 's/^ts$/ts TIMESTAMP(3)/' -e '/ TIMESTAMP/!s/$/ STRING/' | paste -sd, -; }
tables() {
  cat <<SQL
CREATE TABLE flights ($(columns "$FLIGHTS"), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$FLIGHTS', 'format' = 'csv');
CREATE TABLE weather ($(columns "$WEATHER"), PRIMARY KEY (origin) NOT ENFORCED, WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$WEATHER', 'format' = 'csv');
SQL
}
{ tables; echo "SELECT * FROM flights AS f LEFT JOIN weather FOR SYSTEM_TIME AS OF f.ts AS w ON f.origin = w.origin;"; } > "$TMP/join.sql"
{ tables; cat <<SQL; } > "$TMP/dedup.sql"
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY tailnum ORDER BY ts DESC) AS rownum FROM flights)
WHERE rownum = 1;
SQL
cat > "$TMP/run_duckdb.py" <<'PY'
import sys, duckdb
job, flights, weather, out, threads = sys.argv[1:6]
con = duckdb.connect()
con.execute(f"SET threads = {int(threads)}")
queries = {
    "join": f"""SELECT f.*, w.* FROM read_csv('{flights}') f
                ASOF LEFT JOIN read_csv('{weather}') w ON f.origin = w.origin AND f.ts >= w.ts""",
    "dedup": f"""SELECT * FROM read_csv('{flights}')
                 QUALIFY row_number() OVER (PARTITION BY tailnum ORDER BY ts DESC, id DESC) = 1""",
}
con.execute(f"COPY ({queries[job]}) TO '{out}' (HEADER, DELIMITER ',')")
PY
cat > "$TMP/check.py" <<'PY'
import csv, sys
column, path = sys.argv[1:3]
with open(path, newline="") as f:
    rows = csv.reader(f)
    header = next(rows)
    at = max(i for i, name in enumerate(header) if name == column)  # the last one: the build side's
    n, total = 0, 0.0
    for row in rows:
        n += 1
        total += float(row[at]) if row[at] else 0.0
print(f"{n} rows, sum({column}) = {total:.2f}")
PY

run() { # job engine out: the command line of one engine on one job
  local job="$1" engine="$2" out="$3"
  case "$engine/$job" in
    command/join) echo "$BIN" temporal-join -w "$WORKERS" --probe "$FLIGHTS" --build "$WEATHER" --on origin=origin \
      --probe-time ts --build-time ts --left --mode final --lateness 0 --output "$out" ;;
    command/dedup) echo "$BIN" dedup -w "$WORKERS" --input "$FLIGHTS" --key tailnum --time ts --keep last \
      --emit final --output "$out" ;;
    sql/*) echo "$BIN" sql -w "$WORKERS" --mode final -f "$TMP/$job.sql" --emit final --output "$out" ;;
    duckdb/*) echo "$VENV/bin/python" "$TMP/run_duckdb.py" "$job" "$FLIGHTS" "$WEATHER" "$out" "$WORKERS" ;;
  esac
}
ENGINES=(command sql duckdb)
for job in join dedup; do
  column=$([[ $job == join ]] && echo temp || echo id)
  expected=""
  for engine in "${ENGINES[@]}"; do
    # shellcheck disable=SC2046 # the command line is split on purpose (no spaces in its words)
    $(run "$job" "$engine" "$TMP/$engine.csv") >/dev/null
    got="$("$VENV/bin/python" "$TMP/check.py" "$column" "$TMP/$engine.csv")"
    if [[ -z "$expected" ]]; then
      expected="$got"
    elif [[ "$got" != "$expected" ]]; then
      echo "$job: $engine wrote $got, ${ENGINES[0]} $expected" >&2
      exit 1
    fi
  done
  echo "# $job: $expected (every engine), $WORKERS workers/threads"
  for _ in $(seq "$RUNS"); do
    for engine in "${ENGINES[@]}"; do
      # shellcheck disable=SC2046
      /usr/bin/time -f "$job $engine wall_s=%e cpu_s=%U+%S peak_rss_mb=%M" $(run "$job" "$engine" "$TMP/out.csv") 2>&1 >/dev/null \
        | tail -n 1 | awk '{ sub(/peak_rss_mb=/, "", $5); printf "%s %s %s %s peak_rss_mb=%d\n", $1, $2, $3, $4, $5 / 1024 }'
    done
  done
done
