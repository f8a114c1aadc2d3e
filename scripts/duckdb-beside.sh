# shellcheck shell=bash
# Sourced by the scripts that run dtemporal beside DuckDB (compare-duckdb.sh, scale-bench.sh),
# with ROOT set: installs the pinned duckdb package into $VENV (default target/duckdb-venv)
# when missing, and sets BIN to the dtemporal binary ($DTEMPORAL if given, else a release
# build), and TMP to a directory removed on exit.
VENV="${VENV:-$ROOT/target/duckdb-venv}"
DUCKDB_VERSION="2.0.1"
if ! "$VENV/bin/python" -c "import duckdb" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "duckdb==$DUCKDB_VERSION"
fi
if [[ -n "${DTEMPORAL:-}" ]]; then
  BIN="$(cd "$(dirname "$DTEMPORAL")" && pwd)/$(basename "$DTEMPORAL")"
else
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin dtemporal
  BIN="$ROOT/target/release/dtemporal"
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
