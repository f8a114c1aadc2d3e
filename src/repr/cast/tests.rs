//! Text -> datum -> row -> text, per type; the errors' messages.

use proptest::prelude::*;

use super::*;
use crate::repr::Row;

/// Parses `text` as `ty`, packs it into a row, reads it back and formats it.
fn round_trip(text: &str, ty: &DataType) -> Result<String, CastError> {
    let mut scratch = Vec::new();
    let datum = parse_datum(text, ty, &mut scratch)?;
    let row = Row::pack([datum]);
    let mut out = String::new();
    format_datum(row.get(0).unwrap(), ty, &mut out).unwrap();
    Ok(out)
}

fn printed(text: &str, ty: &DataType) -> String {
    let mut scratch = Vec::new();
    let datum = parse_datum(text, ty, &mut scratch).unwrap();
    let mut out = String::new();
    print_datum(datum, ty, &mut out).unwrap();
    out
}

fn error(text: &str, ty: &DataType) -> String {
    let mut scratch = Vec::new();
    parse_datum(text, ty, &mut scratch).unwrap_err().to_string()
}

#[test]
fn booleans_take_casts_words_in_any_case() {
    for t in ["true", "TRUE", "True", "t", "yes", "Y", "1", " true "] {
        assert_eq!(round_trip(t, &DataType::Boolean).unwrap(), "true", "{t}");
    }
    for f in ["false", "F", "no", "n", "0"] {
        assert_eq!(round_trip(f, &DataType::Boolean).unwrap(), "false", "{f}");
    }
    assert_eq!(printed("yes", &DataType::Boolean), "TRUE");
    assert_eq!(
        error("maybe", &DataType::Boolean),
        "cannot parse \"maybe\" as BOOLEAN: expected one of true, t, yes, y, 1, false, f, no, n, 0 (in any case)"
    );
}

#[test]
fn integers_are_range_checked_per_type() {
    assert_eq!(round_trip("-128", &DataType::TinyInt).unwrap(), "-128");
    assert_eq!(round_trip("+7", &DataType::SmallInt).unwrap(), "7");
    assert_eq!(
        round_trip(" 2147483647", &DataType::Int).unwrap(),
        "2147483647"
    );
    assert_eq!(
        round_trip("-9223372036854775808", &DataType::BigInt).unwrap(),
        "-9223372036854775808"
    );
    assert_eq!(
        error("128", &DataType::TinyInt),
        "cannot parse \"128\" as TINYINT: out of range -128..=127"
    );
    assert_eq!(
        error("40000", &DataType::SmallInt),
        "cannot parse \"40000\" as SMALLINT: out of range -32768..=32767"
    );
    assert_eq!(
        error("9223372036854775808", &DataType::BigInt),
        "cannot parse \"9223372036854775808\" as BIGINT: out of range -9223372036854775808..=9223372036854775807"
    );
    assert_eq!(
        error("1.5", &DataType::Int),
        "cannot parse \"1.5\" as INT: not an integer"
    );
    assert_eq!(
        error("", &DataType::Int),
        "cannot parse \"\" as INT: not an integer"
    );
}

#[test]
fn floats_are_written_as_java_does() {
    assert_eq!(round_trip("1", &DataType::Double).unwrap(), "1.0");
    assert_eq!(round_trip("1e10", &DataType::Double).unwrap(), "1.0E10");
    assert_eq!(round_trip("0.1", &DataType::Float).unwrap(), "0.1");
    assert_eq!(round_trip("NaN", &DataType::Double).unwrap(), "NaN");
    assert_eq!(
        round_trip("-Infinity", &DataType::Double).unwrap(),
        "-Infinity"
    );
    assert_eq!(
        error("1,5", &DataType::Double),
        "cannot parse \"1,5\" as DOUBLE: not a floating-point number"
    );
}

#[test]
fn strings_keep_their_text_and_check_their_length() {
    assert_eq!(round_trip(" a b ", &DataType::STRING).unwrap(), " a b ");
    assert_eq!(round_trip("", &DataType::STRING).unwrap(), "");
    assert_eq!(round_trip("äöü", &DataType::Varchar(3)).unwrap(), "äöü");
    assert_eq!(round_trip("ab", &DataType::Char(3)).unwrap(), "ab");
    assert_eq!(
        error("abcd", &DataType::Varchar(3)),
        "cannot parse \"abcd\" as VARCHAR(3): 4 characters, longer than the type's 3"
    );
}

#[test]
fn bytes_are_base64_in_csv_and_hex_when_printed() {
    assert_eq!(round_trip("AQL/", &DataType::BYTES).unwrap(), "AQL/");
    assert_eq!(round_trip("", &DataType::BYTES).unwrap(), "");
    assert_eq!(printed("AQL/", &DataType::BYTES), "x'0102ff'");
    assert_eq!(
        error("AQL", &DataType::BYTES),
        "cannot parse \"AQL\" as BYTES: not base64: Invalid padding"
    );
    assert_eq!(
        error("AQL/", &DataType::Varbinary(2)),
        "cannot parse \"AQL/\" as VARBINARY(2): 3 bytes, longer than the type's 2"
    );
}

#[test]
fn intervals_are_integers_in_csv_and_flinks_form_when_printed() {
    assert_eq!(
        round_trip("14", &DataType::IntervalYearMonth).unwrap(),
        "14"
    );
    assert_eq!(printed("14", &DataType::IntervalYearMonth), "+1-02");
    assert_eq!(
        printed("-93784005", &DataType::IntervalDayTime),
        "-1 02:03:04.005"
    );
}

#[test]
fn arrays_read_as_flink_csv_writes_them_maps_have_no_text_form() {
    let ty = DataType::Array(Box::new(DataType::Int.nullable()));
    let mut scratch = Vec::new();
    let Datum::Array(elements) = parse_datum("1;;3", &ty, &mut scratch).unwrap() else {
        panic!("not an array");
    };
    let elements: Vec<Datum> = elements.iter().collect();
    assert_eq!(elements, [Datum::Int(1), Datum::Null, Datum::Int(3)]);
    assert!(error("1;x", &ty).starts_with("cannot parse \"x\" as INT"));
    let map = DataType::Map(
        Box::new(DataType::STRING.nullable()),
        Box::new(DataType::Int.nullable()),
    );
    assert_eq!(
        error("a", &map),
        "cannot parse \"a\" as MAP<STRING, INT>: this type has no text form here"
    );
}

#[test]
fn nested_values_print_as_flink_casts_them() {
    let ty = DataType::Array(Box::new(DataType::Boolean.nullable()));
    let mut row = Row::new();
    row.packer()
        .push_array(|p| p.extend([Datum::Bool(true), Datum::Null]));
    let mut out = String::new();
    print_datum(row.get(0).unwrap(), &ty, &mut out).unwrap();
    assert_eq!(out, "[TRUE, NULL]");
}

proptest! {
    #[test]
    fn integers_round_trip(v: i64) {
        prop_assert_eq!(round_trip(&v.to_string(), &DataType::BigInt).unwrap(), v.to_string());
        let small = v as i16;
        prop_assert_eq!(round_trip(&small.to_string(), &DataType::SmallInt).unwrap(), small.to_string());
    }

    #[test]
    fn doubles_round_trip(v: f64) {
        let text = round_trip(&v.to_string(), &DataType::Double).unwrap();
        let back = round_trip(&text, &DataType::Double).unwrap();
        prop_assert_eq!(&back, &text);
        if !v.is_nan() {
            prop_assert_eq!(text.parse::<f64>().unwrap(), v);
        }
    }

    #[test]
    fn floats_round_trip(v: f32) {
        let text = round_trip(&v.to_string(), &DataType::Float).unwrap();
        if !v.is_nan() {
            prop_assert_eq!(text.parse::<f32>().unwrap(), v);
        }
    }

    #[test]
    fn strings_round_trip(s in "\\PC{0,20}") {
        prop_assert_eq!(round_trip(&s, &DataType::STRING).unwrap(), s);
    }

    #[test]
    fn bytes_round_trip(b in proptest::collection::vec(any::<u8>(), 0..100)) {
        let text = base64::engine::general_purpose::STANDARD.encode(&b);
        prop_assert_eq!(round_trip(&text, &DataType::BYTES).unwrap(), text);
    }

    #[test]
    fn booleans_round_trip(b: bool) {
        prop_assert_eq!(round_trip(&b.to_string(), &DataType::Boolean).unwrap(), b.to_string());
    }
}
