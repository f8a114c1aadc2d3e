//! One owner a table: two `dtemporal serve`s of one warehouse never refresh a CONTINUOUS table
//! at once (over a postgres-cdc source two runs split the slot's changes and corrupted it).

use std::time::Instant;

use super::{content_over, continuous_totals, drop_source_file, wait_for_totals, Serve, TIMEOUT};

/// A second `serve` of the warehouse waits while the first owns the CONTINUOUS table: it says
/// so on standard error and publishes nothing; once the first stops, it takes the table over
/// and goes on from the first's snapshot (no file read twice or missed).
#[test]
fn a_second_serve_waits_for_the_owner_of_a_continuous_table() {
    let dir = continuous_totals();
    let first = Serve::start(&dir, &[], &[]);
    let line = first.next_line_of("totals");
    assert!(
        line.starts_with("table=totals mode=CONTINUOUS rows=500 "),
        "{line}"
    );
    let second = Serve::start(&dir, &[], &[]);
    let waiting = "dtemporal: table totals is refreshed by another process (it holds ";
    let started = Instant::now();
    while !second.stderr.lock().unwrap().contains(waiting) {
        assert!(
            started.elapsed() < TIMEOUT,
            "the second serve did not wait; stderr: {}",
            second.stderr.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop_source_file(&dir, "2.csv", 2);
    wait_for_totals(&dir, &content_over(&[1, 2]), &first);
    first.stop();
    assert!(
        second.lines.try_recv().is_err(),
        "the second serve refreshed the table while the first owned it"
    );
    drop_source_file(&dir, "3.csv", 3);
    wait_for_totals(&dir, &content_over(&[1, 2, 3]), &second);
    let stderr = second.stderr.lock().unwrap().clone();
    assert_eq!(stderr.matches(waiting).count(), 1, "{stderr}");
    second.stop();
}
