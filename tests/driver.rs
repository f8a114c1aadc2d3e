//! The shared driver (`differential_temporal::run`) with an identity command: parallel reading,
//! error reports and worker-count independence, without any operator in the way.

use differential_temporal::csv::{InputSpec, OutputLine, Schema};
use differential_temporal::run::{run, Built, LineOrder, Outcome, RunOptions};

/// Runs the identity command over `text` with `workers` workers and blocks of `block` bytes;
/// returns the outcome, the output file and the error report.
fn identity(text: &[u8], workers: usize, block: usize) -> (Outcome, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    std::fs::write(&input, text).unwrap();
    let (output, errors) = (dir.path().join("out.csv"), dir.path().join("errors.txt"));
    let spec = InputSpec {
        path: input.to_str().unwrap().to_string(),
        key: vec!["id".into()],
        nullable_key: false,
        time: Some("t".into()),
    };
    let schema = Schema::open(&spec, 0).unwrap();
    let header = schema.columns.clone();
    let options = RunOptions {
        timely_args: vec!["-w".into(), workers.to_string()],
        block_bytes: block,
        output: Some(output.to_str().unwrap().to_string()),
        errors: Some(errors.to_str().unwrap().to_string()),
        progress: false,
    };
    let outcome = run(&options, [schema], header, |[input]| {
        Ok(Built {
            output: input.map(|r| OutputLine::row(r.seq, r.row)),
            rejected: Vec::new(),
            ignored: Vec::new(),
            order: LineOrder::Line,
        })
    })
    .unwrap();
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .replace(dir.path().to_str().unwrap(), "DIR")
    };
    (outcome, read(&output), read(&errors))
}

#[test]
fn rows_and_errors_are_independent_of_workers_and_blocks() {
    let mut text = b"t,id,v\n".to_vec();
    for i in 0..200 {
        match i % 37 {
            5 => text.extend_from_slice(format!("bad-{i},{i},x\n").as_bytes()),
            9 => text.extend_from_slice(format!("00:00:{:02},,x\n", i % 60).as_bytes()),
            _ => text.extend_from_slice(format!("00:00:{:02},{i},\"v\n{i}\"\n", i % 60).as_bytes()),
        }
    }
    let (outcome, out, errors) = identity(&text, 1, 1 << 20);
    assert_eq!(outcome.lines, 200 - 12);
    assert_eq!(outcome.rejected, 12);
    assert!(outcome.wrote);
    assert!(errors.starts_with("DIR/in.csv:12:1: column \"t\": invalid event time \"bad-5\": "));
    assert!(errors.contains("DIR/in.csv:19:2: column \"id\": NULL in a primary-key column\n"));
    assert!(out.starts_with("t,id,v\n00:00:00,0,\"v\n0\"\n"));
    for (workers, block) in [(2, 1), (3, 50), (4, 333)] {
        assert_eq!(
            identity(&text, workers, block),
            (outcome.clone(), out.clone(), errors.clone())
        );
    }
}

#[test]
fn two_inputs_feed_in_epoch_order_and_report_by_input() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, rows: usize, bad_every: usize| {
        let path = dir.path().join(name);
        let mut text = String::from("k,v\n");
        for i in 0..rows {
            if i % bad_every == bad_every - 1 {
                text.push_str(",null key\n");
            } else {
                text.push_str(&format!("{i},{name}\n"));
            }
        }
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (left, right) = (write("left.csv", 50, 7), write("right.csv", 120, 11));
    let schemas = || {
        [&left, &right].map(|path| InputSpec {
            path: path.clone(),
            key: vec!["k".into()],
            nullable_key: false,
            time: None,
        })
    };
    let run_with = |workers: usize, block: usize| {
        let [l, r] = schemas();
        let inputs = [Schema::open(&l, 0).unwrap(), Schema::open(&r, 1).unwrap()];
        let (output, errors) = (dir.path().join("out.csv"), dir.path().join("err.txt"));
        let options = RunOptions {
            timely_args: vec!["-w".into(), workers.to_string()],
            block_bytes: block,
            output: Some(output.to_str().unwrap().to_string()),
            errors: Some(errors.to_str().unwrap().to_string()),
            progress: false,
        };
        let header = vec!["k".to_string(), "v".to_string()];
        let outcome = run(&options, inputs, header, |[l, r]| {
            Ok(Built {
                output: l.concat(r).map(|r| OutputLine::row(r.seq, r.row)),
                rejected: Vec::new(),
                ignored: Vec::new(),
                order: LineOrder::Line,
            })
        })
        .unwrap();
        let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap();
        (outcome, read(output), read(errors))
    };
    let (outcome, out, errors) = run_with(1, 1 << 16);
    assert_eq!(
        (outcome.lines, outcome.rejected),
        (50 - 7 + 120 - 10, 7 + 10)
    );
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(
        lines[0],
        format!("{left}:8:1: column \"k\": NULL in a primary-key column")
    );
    assert_eq!(
        lines[7],
        format!("{right}:12:1: column \"k\": NULL in a primary-key column")
    );
    for (workers, block) in [(2, 9), (3, 40)] {
        assert_eq!(
            run_with(workers, block),
            (outcome.clone(), out.clone(), errors.clone())
        );
    }
}
