//! Bad input, one table: malformed CSV, bad keys and event times, inconsistent changelogs, empty
//! files and option typos, through the command line and through the typed API.
//!
//! Each [`Case`] names its input files (written to a fresh directory, which is the working
//! directory of the run, so reports name them as given), how it runs (the `dtemporal` binary, or
//! a typed-API pipeline: the crate's CSV reader into an operator on 1, 2 and 4 workers) and what
//! it must give: the exit code, substrings of standard error, and standard output exactly. A
//! typed-API run reports like the binary: its output rows as CSV lines, its refused rows as
//! `FILE:LINE: reason` on standard error, exit code 1 if any row was refused.

#[path = "bad_input/api.rs"]
mod api;
#[path = "bad_input/joins.rs"]
mod joins;
#[path = "bad_input/lateral.rs"]
mod lateral;
#[path = "bad_input/sql.rs"]
mod sql;

use std::path::Path;
use std::process::{Command, Stdio};

use api::{api_dedup, api_merge_deduplicate, api_versioned_retract_absent};

/// What a run gave.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// How a case runs.
enum Via {
    /// `dtemporal` with these arguments.
    Cli(&'static [&'static str]),
    /// A typed-API pipeline over the files in this directory.
    Api(fn(&Path) -> Run),
}

/// One row of the matrix.
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static [u8])],
    via: Via,
    code: i32,
    stderr: &'static [&'static str],
    stdout: &'static str,
}

const DEDUP: &[&str] = &["dedup", "--input", "in.csv", "--key", "id", "--time", "t"];
const HISTORY: &[&str] = &[
    "versioned",
    "--input",
    "in.csv",
    "--key",
    "id",
    "--time",
    "t",
    "--history",
];

const CASES: &[Case] = &[
    // Malformed CSV.
    Case {
        name: "wrong field count: too few and too many",
        files: &[("in.csv", b"id,t,v\na,1,x\nb,2\nc,3,z,extra\nd,4,w\n")],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &[
            "in.csv:3:3: column \"v\": wrong number of fields: expected 3, found 2\n",
            "in.csv:4:4: wrong number of fields: expected 3, found 4\n",
            "2 row(s) rejected",
        ],
        stdout: "op,id,t,v\n+I,a,1,x\n+I,d,4,w\n",
    },
    Case {
        name: "unterminated quote at the end of the file",
        files: &[("in.csv", b"id,t,v\na,1,x\nb,2,\"open\nc,3,z\n")],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &["in.csv:3: unterminated quoted field (the quote opened on line 3)\n"],
        stdout: "op,id,t,v\n+I,a,1,x\n",
    },
    Case {
        name: "a stray quote inside an unquoted field is a literal quote",
        files: &[("in.csv", b"id,t,v\na,1,5'6\"\nb,2,\"y\"\n")],
        via: Via::Cli(DEDUP),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,v\n+I,a,1,\"5'6\"\"\"\n+I,b,2,y\n",
    },
    Case {
        name: "an unterminated quote after a stray one is still reported",
        files: &[("in.csv", b"id,t,v\na,1,x\"y\nb,2,\"open\n")],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &["in.csv:3: unterminated quoted field (the quote opened on line 3)\n"],
        stdout: "op,id,t,v\n+I,a,1,\"x\"\"y\"\n",
    },
    Case {
        name: "quoted newline and CRLF line ends keep line numbers",
        files: &[("in.csv", b"id,t,v\r\na,1,\"two\r\nlines\"\r\nb,x,y\r\n")],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &["in.csv:4:2: column \"t\": invalid event time \"x\""],
        stdout: "op,id,t,v\n+I,a,1,\"two\r\nlines\"\n",
    },
    Case {
        name: "invalid UTF-8 in a cell",
        files: &[("in.csv", b"id,t,v\na,1,x\nb,2,\xff\n")],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &["in.csv:3:3: column \"v\": invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 0\n"],
        stdout: "op,id,t,v\n+I,a,1,x\n",
    },
    Case {
        name: "invalid UTF-8 in the header",
        files: &[("in.csv", b"id,t,\xff\na,1,x\n")],
        via: Via::Cli(DEDUP),
        code: 2,
        stderr: &["dtemporal: error: in.csv: the header is not valid UTF-8\n"],
        stdout: "",
    },
    // Row kinds.
    Case {
        name: "unknown and empty op values",
        files: &[("in.csv", b"op,id,t,v\n+I,a,1,x\n+X,b,1,y\n,c,1,z\n+i,d,1,w\n")],
        via: Via::Cli(HISTORY),
        code: 1,
        stderr: &[
            "in.csv:3:1: column \"op\": unknown row kind \"+X\": expected one of +I, -U, +U, -D\n",
            "in.csv:4:1: column \"op\": unknown row kind \"\": expected one of +I, -U, +U, -D\n",
            "in.csv:5:1: column \"op\": unknown row kind \"+i\"",
        ],
        stdout: "id,t,v,valid_from,valid_to\na,1,x,1,\n",
    },
    // Primary keys.
    Case {
        name: "NULL primary key",
        files: &[("in.csv", b"id,t,v\n,1,x\na,2,y\n")],
        via: Via::Cli(HISTORY),
        code: 1,
        stderr: &["in.csv:2:1: column \"id\": NULL in a primary-key column\n"],
        stdout: "id,t,v,valid_from,valid_to\na,2,y,2,\n",
    },
    Case {
        name: "merge: NULL in the second column of a composite primary key",
        files: &[("in.csv", b"id,k,t\na,1,1\na,,2\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id,k", "--emit", "final"]),
        code: 1,
        stderr: &["in.csv:3:2: column \"k\": NULL in a primary-key column\n"],
        stdout: "id,k,t\na,1,1\n",
    },
    Case {
        name: "dedup: a NULL key is a key value, no error",
        files: &[("in.csv", b"id,t,v\n,1,x\n,2,y\na,2,y\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "t", "--emit", "upsert"]),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,v\n+I,,1,x\n+U,,2,y\n+I,a,2,y\n",
    },
    Case {
        name: "missing primary-key column",
        files: &[("in.csv", b"id,t,v\na,1,x\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "nosuch", "--time", "t"]),
        code: 2,
        stderr: &["dtemporal: error: in.csv: no column \"nosuch\"; the columns are: id, t, v\n"],
        stdout: "",
    },
    // Event times.
    Case {
        name: "NULL, unparsable and out-of-range event times",
        files: &[(
            "in.csv",
            b"id,t,v\na,,x\nb,noon,x\nc,99999999999999999999,x\nd,2024-02-30,x\ne,10:61,x\nf,7,x\n",
        )],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &[
            "in.csv:2:2: column \"t\": NULL event time\n",
            "in.csv:3:2: column \"t\": invalid event time \"noon\": expected YYYY-MM-DD",
            "in.csv:4:2: column \"t\": invalid event time \"99999999999999999999\": integer milliseconds out of range for i64\n",
            "in.csv:5:2: column \"t\": invalid event time \"2024-02-30\": no such date\n",
            "in.csv:6:2: column \"t\": invalid event time \"10:61\"",
            "5 row(s) rejected",
        ],
        stdout: "op,id,t,v\n+I,f,7,x\n",
    },
    Case {
        name: "event time with a multi-byte character in its offset (a panic found by fuzzing)",
        files: &[("in.csv", "id,t,v\na,2024-01-01T10:00+€1,x\nb,1,y\n".as_bytes())],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &["in.csv:2:2: column \"t\": invalid event time \"2024-01-01T10:00+€1\": bad UTC offset \"+€1\"\n"],
        stdout: "op,id,t,v\n+I,b,1,y\n",
    },
    Case {
        name: "versioned: -U of a never-inserted row is dropped (A5), -D of an absent key is harmless (A12)",
        files: &[("in.csv", b"op,id,t,v\n-U,a,1,x\n+U,a,1,y\n-D,b,2,z\n+I,c,3,w\n")],
        via: Via::Cli(HISTORY),
        code: 0,
        stderr: &[],
        stdout: "id,t,v,valid_from,valid_to\na,1,y,1,\nc,3,w,3,\n",
    },
    Case {
        name: "dedup refuses retractions and deletes (A14), keeps the inserts",
        files: &[("in.csv", b"op,id,t,v\n-U,a,1,x\n+I,a,2,y\n-D,b,2,z\n")],
        via: Via::Cli(DEDUP),
        code: 1,
        stderr: &[
            "in.csv:2: -U row refused: dedup input must be insert-only (rule A14)\n",
            "in.csv:4: -D row refused: dedup input must be insert-only (rule A14)\n",
        ],
        stdout: "op,id,t,v\n+I,a,2,y\n",
    },
    Case {
        name: "merge (deduplicate engine): -D/-U of an absent key changes nothing and is counted",
        files: &[("in.csv", b"op,id,v\n-D,a,x\n+I,b,y\n-U,c,z\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--emit", "final"]),
        code: 0,
        stderr: &[
            "dtemporal: 1 row(s) ignored: a -D of a key without a row on the deduplicate merge engine\n",
            "dtemporal: 1 row(s) ignored: a -U of a key without a row on the deduplicate merge engine\n",
        ],
        stdout: "id,v\nb,y\n",
    },
    Case {
        name: "merge (Fluss aggregation, 'table.delete.behavior' = 'disable'): a -D is a row error",
        files: &[("in.csv", b"op,id,s\n+I,a,1\n-D,a,1\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--emit", "final", "--option", "table.merge-engine=aggregation", "--option", "fields.s.agg=sum", "--option", "table.delete.behavior=disable"]),
        code: 1,
        stderr: &["in.csv:3: deletion is disabled for this aggregation table ('table.delete.behavior' = 'disable')\n"],
        stdout: "id,s\na,1\n",
    },
    Case {
        name: "merge (Paimon aggregation): a retraction of an absent key is applied and reported",
        files: &[("in.csv", b"op,id,s\n-D,a,2\n+I,b,1\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--emit", "final", "--option", "merge-engine=aggregation", "--option", "fields.s.aggregate-function=sum"]),
        code: 1,
        stderr: &["in.csv:2: retraction of a key without a row: applied to an empty row, as Paimon does"],
        stdout: "id,s\na,-2\nb,1\n",
    },
    Case {
        name: "duplicate rows: keep-last replaces with the equal row (A7)",
        files: &[("in.csv", b"id,t,v\na,1,x\na,1,x\n")],
        via: Via::Cli(DEDUP),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,v\n+I,a,1,x\n-U,a,1,x\n+U,a,1,x\n",
    },
    Case {
        name: "duplicate versions: the later line wins (A4)",
        files: &[("in.csv", b"op,id,t,v\n+I,a,1,x\n+I,a,1,x\n")],
        via: Via::Cli(HISTORY),
        code: 0,
        stderr: &[],
        stdout: "id,t,v,valid_from,valid_to\na,1,x,1,\n",
    },
    // Final-mode dedup: its options, late rows.
    Case {
        name: "dedup: state TTL without final mode",
        files: &[("in.csv", b"id,t,v\na,1,x\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "t", "--keep", "first", "--state-ttl", "5"]),
        code: 2,
        stderr: &["dtemporal: error: --state-ttl needs --mode final: state expires on the watermark\n"],
        stdout: "",
    },
    Case {
        name: "dedup: final mode with keep last",
        files: &[("in.csv", b"id,t,v\na,1,x\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "t", "--mode", "final"]),
        code: 2,
        stderr: &["dtemporal: error: --mode final needs --keep first --order event-time"],
        stdout: "",
    },
    Case {
        name: "dedup: negative state TTL",
        files: &[("in.csv", b"id,t,v\na,1,x\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "t", "--keep", "first", "--mode", "final", "--state-ttl=-3"]),
        code: 2,
        stderr: &["error: invalid value '-3' for '--state-ttl <MS>': -3 is not in 0..9223372036854775807\n"],
        stdout: "",
    },
    Case {
        name: "dedup, final mode: a late row and a NULL event time are reported",
        files: &[("in.csv", b"id,t,v\na,1,x\na,0,y\nb,,z\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "t", "--keep", "first", "--mode", "final", "--lateness", "0", "--epoch-bytes", "1", "-w", "2"]),
        code: 1,
        stderr: &[
            "in.csv:3: late row: event time 0 is behind the watermark 1\n",
            "in.csv:4:2: column \"t\": NULL event time\n",
        ],
        stdout: "op,id,t,v\n+I,a,1,x\n",
    },
    // Empty inputs.
    Case {
        name: "empty file",
        files: &[("in.csv", b"")],
        via: Via::Cli(DEDUP),
        code: 2,
        stderr: &["dtemporal: error: in.csv: the file is empty: a header row is required\n"],
        stdout: "",
    },
    Case {
        name: "header-only file",
        files: &[("in.csv", b"id,t,v\n")],
        via: Via::Cli(DEDUP),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,v\n",
    },
    Case {
        name: "header, then only blank lines",
        files: &[("in.csv", b"op,id,t,v\n\n\r\n\n")],
        via: Via::Cli(HISTORY),
        code: 0,
        stderr: &[],
        stdout: "id,t,v,valid_from,valid_to\n",
    },
    Case {
        name: "unknown flag",
        files: &[("in.csv", b"id,t,v\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--kye", "id", "--time", "t"]),
        code: 2,
        stderr: &["unexpected argument '--kye' found", "tip: a similar argument exists"],
        stdout: "",
    },
    Case {
        name: "unknown value of an enumerated flag",
        files: &[("in.csv", b"id,t,v\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "t", "--emit", "upsrt"]),
        code: 2,
        stderr: &["invalid value 'upsrt' for '--emit <EMIT>'", "[possible values: retract, upsert, final]"],
        stdout: "",
    },
    Case {
        name: "unknown time column",
        files: &[("in.csv", b"id,t,v\n")],
        via: Via::Cli(&["dedup", "--input", "in.csv", "--key", "id", "--time", "tme"]),
        code: 2,
        stderr: &["dtemporal: error: in.csv: no column \"tme\"; the columns are: id, t, v\n"],
        stdout: "",
    },
    Case {
        name: "unknown merge engine",
        files: &[("in.csv", b"id,v\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--option", "table.merge-engine=versiond"]),
        code: 2,
        stderr: &["dtemporal: error: invalid merge-engine options: unknown merge engine 'versiond' for 'table.merge-engine'; valid choices: "],
        stdout: "",
    },
    Case {
        name: "misspelled merge option key",
        files: &[("in.csv", b"id,v\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--option", "merge-engine=first-row", "--option", "ignore-delet=true"]),
        code: 2,
        stderr: &["unknown option 'ignore-delet'"],
        stdout: "",
    },
    Case {
        name: "partial-update aggregate function without a sequence group (as Paimon refuses it)",
        files: &[("in.csv", b"id,v\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--option", "merge-engine=partial-update", "--option", "fields.v.aggregate-function=sum"]),
        code: 2,
        stderr: &["Must use sequence group for aggregation functions."],
        stdout: "",
    },
    Case {
        name: "merge option without =",
        files: &[("in.csv", b"id,v\n")],
        via: Via::Cli(&["merge", "--input", "in.csv", "--key", "id", "--option", "merge-engine"]),
        code: 2,
        stderr: &["malformed option \"merge-engine\": expected KEY=VALUE"],
        stdout: "",
    },
    Case {
        name: "zero workers",
        files: &[("in.csv", b"id,t,v\n")],
        via: Via::Cli(&["-w", "0", "dedup", "--input", "in.csv", "--key", "id", "--time", "t"]),
        code: 2,
        stderr: &["invalid value '0' for '--workers <WORKERS>'"],
        stdout: "",
    },
    // The typed API.
    Case {
        name: "API: dedup refuses -U/-D rows with their line (A14)",
        files: &[("in.csv", b"op,id,t,v\n+I,a,1,x\n-U,a,1,x\n+I,a,2,y\n-D,b,1,z\n")],
        via: Via::Api(api_dedup),
        code: 1,
        stderr: &[
            "in.csv:3: -U row refused: dedup input must be insert-only (rule A14)\n",
            "in.csv:5: -D row refused: dedup input must be insert-only (rule A14)\n",
        ],
        stdout: "+I,a,1,x\n-U,a,1,x\n+U,a,2,y\n",
    },
    Case {
        name: "API: the CSV layer keeps malformed rows from the operators",
        files: &[("in.csv", b"op,id,t,v\n+I,,1,x\n+I,a,x,x\n+I,a,2,y\n")],
        via: Via::Api(api_dedup),
        code: 1,
        stderr: &[
            "in.csv:2:2: column \"id\": NULL in a primary-key column\n",
            "in.csv:3:3: column \"t\": invalid event time \"x\"",
        ],
        stdout: "+I,a,2,y\n",
    },
    Case {
        name: "API: versioned table with a retraction of a never-inserted version",
        files: &[("in.csv", b"op,id,t,v\n+I,a,1,x\n-D,b,2,y\n+I,c,3,z\n")],
        via: Via::Api(api_versioned_retract_absent),
        code: 0,
        stderr: &[],
        stdout: "a,1,x\nc,3,z\n",
    },
    Case {
        name: "API: merge engine (deduplicate) with -D of an absent key (applied, reported as \
               ignored on the rejected output) and a duplicate row (an identical upsert changes \
               nothing and emits nothing)",
        files: &[("in.csv", b"op,id,v\n-D,a,x\n+I,b,y\n+I,b,y\n")],
        via: Via::Api(api_merge_deduplicate),
        code: 1,
        stderr: &["in.csv:2: ignored: a -D of a key without a row on the deduplicate merge engine\n"],
        stdout: "+I,b,y\n",
    },
    // The changelog validator.
    Case {
        name: "validate: a clean changelog",
        files: &[("in.csv", b"op,id,t,v\n+I,a,1,x\n-U,a,2,x\n+U,a,2,y\n-D,a,3,y\n+I,a,4,z\n")],
        via: Via::Cli(&["validate", "--input", "in.csv", "--key", "id", "--time", "t"]),
        code: 0,
        stderr: &[],
        stdout: "0 finding(s) in 5 row(s)\n",
    },
    Case {
        name: "validate: every kind of finding, in file order",
        files: &[(
            "in.csv",
            b"op,id,t,v\n\
              -D,a,1,x\n\
              +I,b,1,x\n\
              +I,b,2,y\n\
              -U,b,3,x\n\
              -D,b,3,y\n\
              +U,c,4,z\n\
              +I,d,5,w\n\
              +U,d,6,w2\n\
              -U,e,7,q\n\
              +I,f,8,p\n\
              -U,f,9,p\n\
              +X,g,9,p\n\
              +I,h,,p\n",
        )],
        via: Via::Cli(&["validate", "--input", "in.csv", "--key", "id", "--time", "t"]),
        code: 1,
        stderr: &[],
        stdout: "in.csv:2: key=\"a\": -D of a key with no live row\n\
                 in.csv:4: key=\"b\": +I of a key that is live (its row was inserted on line 3)\n\
                 in.csv:5: key=\"b\": -U retracts a row other than the live one of line 4: column \"v\" is \"x\", the live row has \"y\"\n\
                 in.csv:5: key=\"b\": -U not followed by +U (the key's next change is -D on line 6)\n\
                 in.csv:6: key=\"b\": -D of a key with no live row\n\
                 in.csv:7: key=\"c\": +U without a preceding -U (the key is absent)\n\
                 in.csv:9: key=\"d\": +U without a preceding -U (the key is live since line 8)\n\
                 in.csv:10: key=\"e\": -U of a key with no live row\n\
                 in.csv:10: key=\"e\": -U not followed by +U (the input ends first)\n\
                 in.csv:12: key=\"f\": -U not followed by +U (the input ends first)\n\
                 in.csv:13:1: column \"op\": unknown row kind \"+X\": expected one of +I, -U, +U, -D\n\
                 in.csv:14:3: column \"t\": NULL event time\n\
                 12 finding(s) in 13 row(s)\n",
    },
    Case {
        name: "validate --upsert: +U and +I upsert, -U and deletes of absent keys are findings",
        files: &[("in.csv", b"op,id,v\n+I,a,x\n+U,a,y\n+I,a,z\n+U,b,w\n-U,b,w\n-D,b,\n-D,b,\n")],
        via: Via::Cli(&["validate", "--input", "in.csv", "--key", "id", "--upsert"]),
        code: 1,
        stderr: &[],
        stdout: "in.csv:6: key=\"b\": -U in an upsert changelog (--upsert)\n\
                 in.csv:8: key=\"b\": -D of a key with no live row\n\
                 2 finding(s) in 7 row(s)\n",
    },
    Case {
        name: "validate: composite keys; an append-only file is all +I",
        files: &[("in.csv", b"id,k,v\na,1,x\na,2,y\na,1,z\n")],
        via: Via::Cli(&["validate", "--input", "in.csv", "--key", "id,k"]),
        code: 1,
        stderr: &[],
        stdout: "in.csv:4: key=(\"a\", \"1\"): +I of a key that is live (its row was inserted on line 2)\n\
                 1 finding(s) in 3 row(s)\n",
    },
    Case {
        name: "validate on 2 workers: keys checked apart, findings still in file order",
        files: &[(
            "in.csv",
            b"op,id,v\n+I,a,1\n+I,b,1\n-U,a,1\n-U,b,2\n+U,b,3\n+I,c,1\n-D,c,1\n-D,c,1\n",
        )],
        via: Via::Cli(&["-w", "2", "validate", "--input", "in.csv", "--key", "id"]),
        code: 1,
        stderr: &[],
        stdout: "in.csv:4: key=\"a\": -U not followed by +U (the input ends first)\n\
                 in.csv:5: key=\"b\": -U retracts a row other than the live one of line 3: column \"v\" is \"2\", the live row has \"1\"\n\
                 in.csv:9: key=\"c\": -D of a key with no live row\n\
                 3 finding(s) in 8 row(s)\n",
    },
    Case {
        name: "validate in a cluster run is a usage error: its findings go to standard output",
        files: &[("in.csv", b"op,id,v\n")],
        via: Via::Cli(&["-n", "2", "validate", "--input", "in.csv", "--key", "id"]),
        code: 2,
        stderr: &["dtemporal: error: validate writes its findings to standard output: run it in one process (-w N for more workers)\n"],
        stdout: "",
    },
    Case {
        name: "validate: a missing key column is a usage error",
        files: &[("in.csv", b"op,id,v\n")],
        via: Via::Cli(&["validate", "--input", "in.csv", "--key", "ID"]),
        code: 2,
        stderr: &["dtemporal: error: in.csv: no column \"ID\"; the columns are: id, v\n"],
        stdout: "",
    },
];

#[test]
fn bad_input_matrix() {
    let mut failures = Vec::new();
    for case in (CASES.iter().chain(joins::JOIN_CASES))
        .chain(sql::SQL_CASES)
        .chain(lateral::LATERAL_CASES)
    {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in case.files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let run = match case.via {
            Via::Cli(args) => dtemporal(dir.path(), args),
            Via::Api(f) => f(dir.path()),
        };
        let missing: Vec<_> = case
            .stderr
            .iter()
            .filter(|s| !run.stderr.contains(*s))
            .collect();
        let unexpected_stderr = case.stderr.is_empty() && !run.stderr.is_empty();
        if run.code != case.code
            || run.stdout != case.stdout
            || !missing.is_empty()
            || unexpected_stderr
            || run.stderr.contains("panicked")
        {
            failures.push(format!(
                "{}: expected code {}, stdout {:?}, stderr containing {:?}\n  got {run:?}",
                case.name, case.code, case.stdout, case.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Runs the `dtemporal` binary in `dir`.
fn dtemporal(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A closed standard output (`dtemporal ... | head`) ends the output quietly with exit code 0.
#[test]
fn closed_stdout_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..2000).map(|i| format!("k{i},{i},v\n")).collect();
    std::fs::write(dir.path().join("in.csv"), format!("id,t,v\n{rows}")).unwrap();
    let validate: &[&str] = &["validate", "--input", "in.csv", "--key", "id"];
    for args in [DEDUP, validate] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the tool writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(0), ""),
            "{args:?}"
        );
    }
}
