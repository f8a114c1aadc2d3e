//! `dtemporal versioned` on case A01 (Flink's products changelog, semantics rules A2-A4).

mod common;

use common::{on_products, output_of, same_output};

fn versioned(input: &str, extra: &[&str]) -> String {
    output_of(&on_products("versioned", input, extra))
}

#[test]
fn a01_as_of_10_00_and_13_00_give_flinks_two_tables() {
    assert_eq!(
        versioned("a01_products.csv", &["--as-of", "10:00:00"]),
        "update_time,product_id,product_name,price\n\
         00:01:00,p_001,scooter,11.11\n\
         00:02:00,p_002,basketball,23.11\n"
    );
    assert_eq!(
        versioned("a01_products.csv", &["--as-of", "13:00"]),
        "update_time,product_id,product_name,price\n\
         12:00:00,p_001,scooter,12.99\n\
         12:00:00,p_002,basketball,19.99\n"
    );
}

#[test]
fn a01_probe_times_around_the_boundaries() {
    let header = "update_time,product_id,product_name,price\n";
    let at = |t: &str| versioned("a01_products.csv", &["--as-of", t]);
    // Before the first version: empty; versions are valid from their time, inclusive (A2, A3).
    assert_eq!(at("00:00:59"), header);
    assert_eq!(
        at("00:01:00"),
        format!("{header}00:01:00,p_001,scooter,11.11\n")
    );
    assert_eq!(
        at("11:59:59"),
        format!("{header}00:01:00,p_001,scooter,11.11\n00:02:00,p_002,basketball,23.11\n")
    );
    // The delete at 18:00 hides p_001 from 18:00 on.
    assert_eq!(
        at("18:00:00"),
        format!("{header}12:00:00,p_002,basketball,19.99\n")
    );
}

#[test]
fn a01_history_gives_every_version_with_its_validity() {
    assert_eq!(
        versioned("a01_products.csv", &["--history"]),
        "update_time,product_id,product_name,price,valid_from,valid_to\n\
         00:01:00,p_001,scooter,11.11,00:01:00,12:00:00\n\
         00:02:00,p_002,basketball,23.11,00:02:00,12:00:00\n\
         12:00:00,p_001,scooter,12.99,12:00:00,18:00:00\n\
         12:00:00,p_002,basketball,19.99,12:00:00,\n"
    );
}

#[test]
fn gzip_input_and_workers_give_the_same_bytes() {
    let one = same_output(
        &on_products("versioned", "a01_products.csv", &["--history"]),
        &[
            &["-w", "2", "--epoch-bytes", "20"],
            &["-w", "3", "--epoch-bytes", "20"],
        ],
    );
    let gz = versioned("a01_products_gz.csv.gz", &["--history"]);
    assert_eq!(gz, one);
}
