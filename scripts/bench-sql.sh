#!/usr/bin/env bash
# `dtemporal sql` beside the `temporal-join` command on the same job: each flight LEFT JOINed
# with the weather at its origin as of its scheduled departure (the main example), CSV in, the
# final table as CSV out, whole process. Prints wall time, CPU time and peak RSS of each run
# (alternating, RUNS times each) after checking that both wrote the same number of rows.
#
#   scripts/bench-sql.sh                      # the full year (fetched into data/full/ if missing)
#   DATA=data/nycflights13 FLIGHTS=flights_2013-01.csv WEATHER=weather_2013-01.csv scripts/bench-sql.sh
#   WORKERS=2 RUNS=5 scripts/bench-sql.sh
#   DTEMPORAL=target/release/dtemporal scripts/bench-sql.sh   # a binary already built
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$(cd "${DATA:-$ROOT/data/full}" 2>/dev/null && pwd || echo "$ROOT/data/full")"
FLIGHTS="$DATA/${FLIGHTS:-flights.csv}"
WEATHER="$DATA/${WEATHER:-weather.csv}"
WORKERS="${WORKERS:-2}"
RUNS="${RUNS:-3}"
[[ -f "$FLIGHTS" && -f "$WEATHER" ]] || "$ROOT/scripts/fetch-data.sh"
if [[ -n "${DTEMPORAL:-}" ]]; then
  BIN="$(cd "$(dirname "$DTEMPORAL")" && pwd)/$(basename "$DTEMPORAL")"
else
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin dtemporal
  BIN="$ROOT/target/release/dtemporal"
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Every column as in the files; the times typed, the rest text, as the command reads them.
columns() { { zcat -f "$1" || true; } | head -n 1 | tr ',' '\n' | sed -e 's/^ts$/ts TIMESTAMP(3)/' -e '/ TIMESTAMP/!s/$/ STRING/' | paste -sd, -; }
cat > "$TMP/join.sql" <<SQL
CREATE TABLE flights ($(columns "$FLIGHTS"), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$FLIGHTS', 'format' = 'csv');
CREATE TABLE weather ($(columns "$WEATHER"), PRIMARY KEY (origin) NOT ENFORCED, WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '$WEATHER', 'format' = 'csv');
SELECT * FROM flights AS f LEFT JOIN weather FOR SYSTEM_TIME AS OF f.ts AS w ON f.origin = w.origin;
SQL

command_run=("$BIN" temporal-join -w "$WORKERS" --probe "$FLIGHTS" --build "$WEATHER" --on origin=origin
  --probe-time ts --build-time ts --left --mode final --output "$TMP/command.csv")
sql_run=("$BIN" sql -w "$WORKERS" -f "$TMP/join.sql" --emit final --output "$TMP/sql.csv")

measure() { # name, command...: one run, one line
  local name="$1"; shift
  /usr/bin/time -f "$name wall_s=%e cpu_s=%U+%S peak_rss_kb=%M" "$@" 2>&1 >/dev/null | tail -n 1
}
"${command_run[@]}" && "${sql_run[@]}"
rows_command=$(($(wc -l < "$TMP/command.csv") - 1))
rows_sql=$(($(wc -l < "$TMP/sql.csv") - 1))
if [[ "$rows_command" != "$rows_sql" ]]; then
  echo "row counts differ: temporal-join $rows_command, sql $rows_sql" >&2
  exit 1
fi
echo "# $(basename "$FLIGHTS") x $(basename "$WEATHER"): $rows_sql rows out, $WORKERS workers"
for _ in $(seq "$RUNS"); do
  measure temporal-join "${command_run[@]}"
  measure sql "${sql_run[@]}"
done
