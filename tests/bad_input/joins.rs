//! The bad-input rows of `temporal-join` and `lookup-join`: keys, event times, lateness, join
//! conditions and residual predicates.

use super::{Case, Via};

const JOIN: &[&str] = &[
    "temporal-join",
    "--probe",
    "orders.csv",
    "--build",
    "rates.csv",
    "--on",
    "cur=cur",
    "--probe-time",
    "t",
    "--build-time",
    "t",
    "--left",
];
const ORDERS: &[u8] = b"id,t,cur\no1,10,EUR\no2,20,USD\n";
const RATES: &[u8] = b"op,t,cur,rate\n+I,5,EUR,114\n+I,15,USD,102\n";

pub(super) const JOIN_CASES: &[Case] = &[
    Case {
        name: "temporal join: a NULL join key matches nothing and is no error",
        files: &[("orders.csv", b"id,t,cur\no1,10,\no2,20,USD\n"), ("rates.csv", b"op,t,cur,rate\n+I,5,,114\n+I,15,USD,102\n")],
        via: Via::Cli(JOIN),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,cur,t0,cur0,rate\n+I,o1,10,,,,\n+I,o2,20,USD,15,USD,102\n",
    },
    Case {
        name: "temporal join, final mode: a late build version is kept and reported",
        files: &[("orders.csv", b"id,t,cur\no1,10,E\no2,13,E\n"), ("rates.csv", b"t,cur,rate\n0,E,1\n15,E,2\n12,E,3\n")],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--probe-time", "t", "--build-time", "t", "--mode", "final", "--lateness", "0", "--epoch-bytes", "1", "-w", "2"]),
        code: 1,
        stderr: &["rates.csv:4: key E: late build version: event time 12 is behind the watermark 13 (kept for later probe rows; earlier results are not revised)\n"],
        stdout: "op,id,t,cur,t0,cur0,rate\n+I,o1,10,E,0,E,1\n+I,o2,13,E,12,E,3\n",
    },
    Case {
        name: "extreme event times join without overflow",
        files: &[
            (
                "orders.csv",
                b"id,t,cur\no1,-9223372036854775808,EUR\no2,9223372036854775807,EUR\n",
            ),
            ("rates.csv", b"op,t,cur,rate\n+I,-9223372036854775808,EUR,1\n"),
        ],
        via: Via::Cli(&[
            "temporal-join",
            "--probe",
            "orders.csv",
            "--build",
            "rates.csv",
            "--on",
            "cur=cur",
            "--probe-time",
            "t",
            "--build-time",
            "t",
            "--mode",
            "final",
            "--lateness",
            "1000",
        ]),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,cur,t0,cur0,rate\n\
                 +I,o1,-9223372036854775808,EUR,-9223372036854775808,EUR,1\n\
                 +I,o2,9223372036854775807,EUR,-9223372036854775808,EUR,1\n",
    },
    // Inconsistent changelogs: the documented policies.
    Case {
        name: "empty build side of a join",
        files: &[("orders.csv", ORDERS), ("rates.csv", b"op,t,cur,rate\n")],
        via: Via::Cli(JOIN),
        code: 0,
        stderr: &[],
        stdout: "op,id,t,cur,t0,cur0,rate\n+I,o1,10,EUR,,,\n+I,o2,20,USD,,,\n",
    },
    // Option typos.
    Case {
        name: "join condition without =",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur", "--probe-time", "t", "--build-time", "t"]),
        code: 2,
        stderr: &["dtemporal: error: --on: \"cur\" has no =; expected PROBE_COL=BUILD_COL or BUILD_COL='TEXT'\n"],
        stdout: "",
    },
    Case {
        name: "lookup join: constant key on an unknown build column",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["lookup-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur,kind='spot'"]),
        code: 2,
        stderr: &["rates.csv: no column \"kind\"; the columns are: t, cur, rate"],
        stdout: "",
    },
    Case {
        name: "lookup join: unclosed constant key",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["lookup-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur,rate='1"]),
        code: 2,
        stderr: &["dtemporal: error: --on: \"cur=cur,rate='1\" has an unclosed '\n"],
        stdout: "",
    },
    Case {
        name: "lookup join: malformed --where",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["lookup-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--where", "rate >= 100 OR t < 5"]),
        code: 2,
        stderr: &["dtemporal: error: --where: at character 13: expected AND or the end\n"],
        stdout: "",
    },
    Case {
        name: "lookup join: --where names an unknown column",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["lookup-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--where", "price > 1"]),
        code: 2,
        stderr: &["dtemporal: error: --where: at character 1: no column \"price\"; the columns are id, t, cur, t0, cur0, rate\n"],
        stdout: "",
    },
    Case {
        name: "negative lateness",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--probe-time", "t", "--build-time", "t", "--mode", "final", "--lateness=-1000"]),
        code: 2,
        stderr: &["invalid value '-1000' for '--lateness <MS>'"],
        stdout: "",
    },
    Case {
        name: "negative state TTL",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--probe-time", "t", "--build-time", "t", "--mode", "final", "--state-ttl=-5"]),
        code: 2,
        stderr: &["error: invalid value '-5' for '--state-ttl <MS>': -5 is not in 0..9223372036854775807
"],
        stdout: "",
    },
    Case {
        name: "state TTL that is not a number",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--probe-time", "t", "--build-time", "t", "--mode", "final", "--state-ttl", "abc"]),
        code: 2,
        stderr: &["error: invalid value 'abc' for '--state-ttl <MS>': invalid digit found in string
"],
        stdout: "",
    },
    Case {
        name: "state TTL in incremental mode",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--probe-time", "t", "--build-time", "t", "--state-ttl", "5"]),
        code: 2,
        stderr: &["dtemporal: error: --state-ttl needs --mode final: state expires on the watermark
"],
        stdout: "",
    },
    Case {
        name: "lateness in incremental mode",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["temporal-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--probe-time", "t", "--build-time", "t", "--lateness", "5"]),
        code: 2,
        stderr: &["dtemporal: error: --lateness needs --mode final: incremental mode has no watermark\n"],
        stdout: "",
    },
    Case {
        name: "lookup join: a state TTL with a unit (it counts epochs)",
        files: &[("orders.csv", ORDERS), ("rates.csv", RATES)],
        via: Via::Cli(&["lookup-join", "--probe", "orders.csv", "--build", "rates.csv", "--on", "cur=cur", "--state-ttl", "2h"]),
        code: 2,
        stderr: &["error: invalid value '2h' for '--state-ttl <EPOCHS>': invalid digit found in string\n"],
        stdout: "",
    },
    Case {
        name: "join: malformed rows of both inputs are reported, the good rows joined",
        files: &[
            ("orders.csv", b"id,t,cur\no1,10,EUR\no2,later,USD\no3,30,USD\n"),
            ("rates.csv", b"op,t,cur,rate\n+I,5,EUR,114\n+Q,15,USD,102\n+I,25,USD,106\n"),
        ],
        via: Via::Cli(JOIN),
        code: 1,
        stderr: &[
            "orders.csv:3:2: column \"t\": invalid event time \"later\"",
            "rates.csv:3:1: column \"op\": unknown row kind \"+Q\"",
            "2 row(s) rejected",
        ],
        stdout: "op,id,t,cur,t0,cur0,rate\n+I,o1,10,EUR,5,EUR,114\n+I,o3,30,USD,25,USD,106\n",
    },
];
