//! Two `dtemporal` processes over localhost (timely's `-n 2 -p I -h HOSTFILE`): the output is
//! gathered to global worker 0 and equals the single-process output byte for byte.

mod common;

use std::net::TcpListener;
use std::process::{Command, Stdio};

use common::{data, output_of};

#[test]
fn two_processes_write_the_single_process_output() {
    let input = data("a03_rowtime.csv");
    let args = [
        "dedup",
        "--input",
        &input,
        "--key",
        "b",
        "--time",
        "rowtime_ms",
        "--epoch-bytes",
        "16",
    ];
    let single = output_of(&args);

    // Two free localhost ports (bound, then released for timely to use).
    let listeners: Vec<TcpListener> = (0..2)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    let hosts: String = listeners
        .iter()
        .map(|l| format!("127.0.0.1:{}\n", l.local_addr().unwrap().port()))
        .collect();
    drop(listeners);
    let dir = tempfile::tempdir().unwrap();
    let hostfile = dir.path().join("hosts.txt");
    std::fs::write(&hostfile, hosts).unwrap();
    let hostfile = hostfile.to_str().unwrap();

    let outputs = [dir.path().join("out0.csv"), dir.path().join("out1.csv")];
    let children: Vec<_> = ["0", "1"]
        .iter()
        .zip(&outputs)
        .map(|(p, output)| {
            Command::new(env!("CARGO_BIN_EXE_dtemporal"))
                .args(["-n", "2", "-p", p, "-h", hostfile, "-w", "2"])
                .args(args)
                .args(["--output", output.to_str().unwrap()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the binary starts")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("the process ends");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Process 0 hosts worker 0 and writes everything; process 1 writes nothing.
    assert_eq!(std::fs::read_to_string(&outputs[0]).unwrap(), single);
    assert!(!outputs[1].exists());
}
