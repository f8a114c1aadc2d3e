//! Rust values as rows (`repr::typed`, issue 52): every column type round-trips through a
//! row, a tuple's schema is derived from its types, and a row of other types is refused
//! naming its column.

use differential_temporal::repr::typed::{FromRow, IntoRow, RowType, RowTypeError};
use differential_temporal::repr::Ts;

/// The columns of `T`'s schema, as `name TYPE`.
fn columns<T: RowType>() -> Vec<String> {
    T::schema()
        .fields
        .iter()
        .map(|f| format!("{} {}", f.name, f.ty))
        .collect()
}

#[test]
fn every_column_type_round_trips() {
    type Wide = (bool, i8, i16, i32, i64, f32, f64, String);
    let wide: Wide = (true, -8, 16, -32, 1 << 40, 0.5, -2.25, "s".to_string());
    assert_eq!(Wide::from_row(&wide.to_row()), Ok(wide));
    type Rest = (Vec<u8>, Ts, Option<i64>, Option<String>);
    let rest: Rest = (vec![1, 2], Ts::from_millis(-5), None, Some("x".to_string()));
    assert_eq!(Rest::from_row(&rest.to_row()), Ok(rest));
    assert_eq!(
        columns::<Rest>(),
        [
            "f0 BYTES NOT NULL",
            "f1 TIMESTAMP(3) NOT NULL",
            "f2 BIGINT",
            "f3 STRING"
        ]
    );
}

#[test]
fn a_row_of_other_types_names_its_column() {
    let row = (300i64, Option::<String>::None).to_row();
    let error = |e: Result<(i8, String), RowTypeError>| e.unwrap_err().to_string();
    assert_eq!(
        error(FromRow::from_row(&row)),
        "column 'f0' of type TINYINT NOT NULL holds the integer 300"
    );
    let row = (3i64, Option::<String>::None).to_row();
    assert_eq!(
        error(FromRow::from_row(&row)),
        "column 'f1' of type STRING NOT NULL holds NULL"
    );
    assert_eq!(
        <(i64,)>::from_row(&row).unwrap_err().to_string(),
        "the row has 2 columns, the type 1"
    );
    assert_eq!(
        <(i64, Option<String>, bool)>::from_row(&row)
            .unwrap_err()
            .to_string(),
        "the row has 2 columns, the type 3"
    );
}

differential_temporal::row_struct! {
    /// A struct declared outside the crate (the macro's paths are the crate's).
    #[derive(Debug, PartialEq)]
    struct Reading {
        sensor: String,
        value: Option<f64>,
        at: Ts,
    }
}

#[test]
fn a_struct_is_a_row_named_by_its_fields() {
    let reading = Reading {
        sensor: "s1".to_string(),
        value: Some(1.5),
        at: Ts::from_millis(7),
    };
    let row = reading.to_row();
    assert_eq!(
        Reading::from_row(&row),
        Ok(Reading {
            sensor: "s1".to_string(),
            value: Some(1.5),
            at: Ts::from_millis(7),
        })
    );
    assert_eq!(
        columns::<Reading>(),
        [
            "sensor STRING NOT NULL",
            "value DOUBLE",
            "at TIMESTAMP(3) NOT NULL"
        ]
    );
    let swapped = ("s1".to_string(), "1.5".to_string(), Ts::from_millis(7)).to_row();
    assert_eq!(
        Reading::from_row(&swapped).unwrap_err().to_string(),
        "column 'value' of type DOUBLE holds a string"
    );
}
