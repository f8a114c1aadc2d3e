use proptest::prelude::*;

use super::*;

fn every_kind() -> Vec<Datum<'static>> {
    vec![
        Datum::Null,
        Datum::Bool(false),
        Datum::Bool(true),
        Datum::Int(0),
        Datum::Int(-128),
        Datum::Int(300),
        Datum::Int(-70_000),
        Datum::Int(i64::MIN),
        Datum::Int(i64::MAX),
        Datum::Float(-0.5),
        Datum::Float(f64::NAN),
        Datum::Decimal(123_800),
        Datum::Decimal(i128::MAX),
        Datum::Decimal(-(10i128.pow(38) - 1)),
        Datum::Date(-719_528),
        Datum::Time(86_399_999_999_999),
        Datum::Timestamp(Ts {
            millis: 1_700_000_000_123,
            nanos_of_milli: 0,
        }),
        Datum::Timestamp(Ts {
            millis: -62_167_219_200_000,
            nanos_of_milli: 999_999,
        }),
        Datum::IntervalDayTime(-3_600_000),
        Datum::IntervalYearMonth(14),
        Datum::Str(""),
        Datum::Str("Grüße"),
        Datum::Bytes(&[0, 255, 7]),
    ]
}

#[test]
fn every_kind_of_datum_round_trips() {
    let datums = every_kind();
    let row = Row::pack(datums.iter().copied());
    let back: Vec<Datum> = row.iter().collect();
    assert_eq!(back.len(), datums.len());
    for (a, b) in datums.iter().zip(&back) {
        // NaN equals NaN under the total order.
        assert_eq!(a, b);
    }
    for (i, a) in datums.iter().enumerate() {
        assert_eq!(row.get(i).as_ref(), Some(a), "column {i}");
    }
    assert_eq!(row.get(datums.len()), None);
    assert_eq!(Row::from_bytes(row.as_bytes()).unwrap(), row);
}

#[test]
fn nested_values_round_trip() {
    let mut row = Row::new();
    let mut packer = row.packer();
    packer.push(Datum::Int(1));
    packer.push_array(|p| p.extend([Datum::Int(10), Datum::Null, Datum::Int(30)]));
    packer.push_map(|p| p.extend([Datum::Str("k"), Datum::Float(1.5)]));
    packer.push_row(|p| {
        p.push(Datum::Str("inner"));
        p.push_array(|p| p.push(Datum::Bool(true)));
    });
    let datums: Vec<Datum> = row.iter().collect();
    assert_eq!(datums[0], Datum::Int(1));
    let Datum::Array(array) = datums[1] else {
        panic!("not an array: {:?}", datums[1])
    };
    assert_eq!(
        array.iter().collect::<Vec<_>>(),
        vec![Datum::Int(10), Datum::Null, Datum::Int(30)]
    );
    let Datum::Map(map) = datums[2] else {
        panic!("not a map")
    };
    assert_eq!(map.get(1), Some(Datum::Float(1.5)));
    let Datum::Row(inner) = datums[3] else {
        panic!("not a row")
    };
    assert_eq!(inner.get(0), Some(Datum::Str("inner")));
    // `get` skips nested values whole.
    assert_eq!(row.get(3), Some(datums[3]));
    assert_eq!(row.get(4), None);
    assert_eq!(format!("{row:?}"), "[Int(1), Array([Int(10), Null, Int(30)]), Map([Str(\"k\"), Float(1.5)]), Row([Str(\"inner\"), Array([Bool(true)])])]");
    assert_eq!(Row::from_bytes(row.as_bytes()).unwrap(), row);
}

#[test]
fn small_rows_stay_inline_and_large_ones_spill_once() {
    let key = Row::pack([Datum::Int(42), Datum::Str("EUR")]);
    assert!(!key.spilled(), "{} bytes", key.byte_len());
    let wide = Row::pack([Datum::Str("a string longer than twenty-four bytes")]);
    assert!(wide.spilled());
    // Clone copies the bytes.
    assert_eq!(wide.clone(), wide);
}

/// `push_int(v)` packs the bytes `push(Datum::Int(v))` does, at every width's edges.
#[test]
fn push_int_packs_as_push_does() {
    let edges = [
        i8::MIN as i64,
        i8::MAX as i64,
        i16::MIN as i64,
        i16::MAX as i64,
    ];
    let edges = edges
        .into_iter()
        .chain([i32::MIN as i64, i32::MAX as i64, i64::MIN, i64::MAX]);
    for v in edges
        .flat_map(|e| [e.saturating_sub(1), e, e.saturating_add(1)])
        .chain([0])
    {
        let mut by_int = Row::new();
        by_int.packer().push_int(v);
        assert_eq!(by_int, Row::pack([Datum::Int(v)]), "{v}");
        assert_eq!(by_int.iter().collect::<Vec<_>>(), [Datum::Int(v)]);
    }
}

#[test]
fn serde_is_one_byte_string() {
    let row = Row::pack(every_kind());
    let bytes = bincode::serialize(&row).unwrap();
    assert_eq!(bytes.len(), 8 + row.byte_len());
    let back: Row = bincode::deserialize(&bytes).unwrap();
    assert_eq!(back, row);
}

#[test]
fn malformed_bytes_are_errors_not_panics() {
    let cases: &[(&[u8], &str)] = &[
        (&[99], "unknown tag"),
        (&[INT32, 1, 2], "truncated datum"),
        (&[STR8, 3, b'a'], "truncated datum"),
        (&[STR8, 2, 0xff, 0xfe], "invalid UTF-8 in a string"),
        (
            &[TIMESTAMP_NANOS, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x42, 0x0f, 0],
            "nanoseconds of a millisecond out of range",
        ),
        (&[ARRAY, 2, 0, 0, 0, 99, 0], "unknown tag"),
        (&[ROW, 9, 0, 0, 0], "truncated datum"),
    ];
    for (bytes, reason) in cases {
        let err = Row::from_bytes(bytes).unwrap_err();
        assert_eq!(err.reason, *reason, "{bytes:?}");
    }
    assert!(bincode::deserialize::<Row>(&bincode::serialize(&vec![99u8]).unwrap()).is_err());
}

#[test]
fn a_nested_value_whose_packing_panics_leaves_the_row_as_it_was() {
    let mut row = Row::new();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut packer = row.packer();
        packer.push(Datum::Str("kept"));
        packer.push_row(|inner| {
            inner.push(Datum::Str("half"));
            panic!("a failing nested value");
        })
    }));
    assert!(caught.is_err());
    assert_eq!(row.iter().collect::<Vec<_>>(), vec![Datum::Str("kept")]);
    assert!(Row::from_bytes(row.as_bytes()).is_ok());
}

#[test]
fn datum_order_is_value_order() {
    use std::cmp::Ordering::*;
    assert_eq!(Datum::Null.cmp(&Datum::Int(i64::MIN)), Less);
    assert_eq!(Datum::Int(-1).cmp(&Datum::Int(2)), Less);
    assert_eq!(
        Datum::Float(f64::NAN).cmp(&Datum::Float(f64::INFINITY)),
        Greater
    );
    assert_eq!(Datum::Float(-0.0).cmp(&Datum::Float(0.0)), Less);
    assert_eq!(Datum::Decimal(-5).cmp(&Datum::Decimal(3)), Less);
    assert_eq!(Datum::Str("Z").cmp(&Datum::Str("a")), Less);
    let early = Ts {
        millis: 5,
        nanos_of_milli: 999_999,
    };
    let late = Ts {
        millis: 6,
        nanos_of_milli: 0,
    };
    assert_eq!(Datum::Timestamp(early).cmp(&Datum::Timestamp(late)), Less);
    // Byte order is not value order: -1 packs after 2 (two's complement), which is why
    // ORDER BY compares datums.
    let minus = Row::pack_one(Datum::Int(-1));
    let two = Row::pack_one(Datum::Int(2));
    assert_eq!(minus.cmp(&two), Greater);
}

#[test]
fn datum_vec_reuses_its_buffer() {
    let mut buffer = DatumVec::new();
    let a = Row::pack([Datum::Int(1), Datum::Str("x")]);
    let b = Row::pack([Datum::Null]);
    {
        let datums = buffer.borrow_with(&a);
        assert_eq!(&datums[..], &[Datum::Int(1), Datum::Str("x")]);
    }
    let capacity = buffer.capacity();
    {
        let datums = buffer.borrow_with(&b);
        assert_eq!(&datums[..], &[Datum::Null]);
    }
    assert_eq!(buffer.capacity(), capacity);
    assert!(buffer.is_idle());
}

fn arb_datum() -> impl Strategy<Value = (u8, i64, f64, i128, u32, String, Vec<u8>)> {
    (
        0u8..12,
        any::<i64>(),
        any::<f64>(),
        any::<i128>(),
        0u32..1_000_000,
        ".{0,40}",
        prop::collection::vec(any::<u8>(), 0..300),
    )
}

fn datum_of(spec: &(u8, i64, f64, i128, u32, String, Vec<u8>)) -> Datum<'_> {
    let (kind, i, f, d, n, s, b) = spec;
    match kind {
        0 => Datum::Null,
        1 => Datum::Bool(i % 2 == 0),
        2 => Datum::Int(*i),
        3 => Datum::Int(i % 1000),
        4 => Datum::Float(*f),
        5 => Datum::Decimal(*d),
        6 => Datum::Date(*i as i32),
        7 => Datum::Time(i.rem_euclid(86_400_000_000_000)),
        8 => Datum::Timestamp(Ts {
            millis: *i,
            nanos_of_milli: *n,
        }),
        9 => Datum::IntervalDayTime(*i),
        10 => Datum::Str(s),
        _ => Datum::Bytes(b),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_rows_round_trip(specs in prop::collection::vec(arb_datum(), 0..12)) {
        let datums: Vec<Datum> = specs.iter().map(datum_of).collect();
        let row = Row::pack(datums.iter().copied());
        let back: Vec<Datum> = row.iter().collect();
        prop_assert_eq!(&back, &datums);
        // `get` skips the datums before the one it reads by their lengths alone.
        for (i, d) in datums.iter().enumerate() {
            prop_assert_eq!(row.get(i), Some(*d));
        }
        prop_assert_eq!(row.get(datums.len()), None);
        prop_assert_eq!(Row::from_bytes(row.as_bytes()).unwrap(), row.clone());
        let bytes = bincode::serialize(&row).unwrap();
        prop_assert_eq!(bincode::deserialize::<Row>(&bytes).unwrap(), row.clone());
        // Equal rows are equal bytes and hash alike; the packing is canonical.
        prop_assert_eq!(Row::pack(back.iter().copied()), row);
    }

    /// Projection copies bytes: the same row as packing the chosen datums, whatever their
    /// kinds, widths and order, repeats included.
    #[test]
    fn projection_equals_packing_the_chosen_datums(
        specs in prop::collection::vec(arb_datum(), 0..8),
        picks in prop::collection::vec(0usize..8, 0..6),
    ) {
        let datums: Vec<Datum> = specs.iter().map(datum_of).collect();
        let row = Row::pack(datums.iter().copied());
        let columns: Vec<usize> = picks.into_iter().filter(|&c| c < datums.len()).collect();
        let mut spans = ColumnSpans::new();
        let located = spans.locate(&row, prefix_len(columns.iter().copied()));
        let expected = Row::pack(columns.iter().map(|&c| datums[c]));
        prop_assert_eq!(located.project(&columns), expected);
    }

    /// The order prefix never contradicts the value order: `a < b` gives `prefix(a) <=
    /// prefix(b)` over every kind (across kinds too) and the edges of each (NaN, -0.0, the
    /// extreme integers, strings sharing their first 8 bytes).
    #[test]
    fn order_prefix_is_monotone(a in arb_datum(), b in arb_datum(), tail in "[a-c]{0,3}") {
        let (a, b) = (datum_of(&a), datum_of(&b));
        let long = format!("01234567{tail}");
        let edges = [
            Datum::Float(f64::NAN), Datum::Float(-0.0), Datum::Float(0.0),
            Datum::Float(f64::NEG_INFINITY), Datum::Int(i64::MIN), Datum::Int(i64::MAX),
            Datum::Decimal(i128::MIN), Datum::Decimal(-1), Datum::Str("01234567"),
            Datum::Str(&long), Datum::Str(""),
        ];
        for x in edges.iter().chain([&a, &b]) {
            for y in edges.iter().chain([&a, &b]) {
                if x < y {
                    prop_assert!(x.order_prefix() <= y.order_prefix(), "{:?} < {:?}", x, y);
                }
            }
        }
    }

    /// The cursor reads each column as `Row::get` decodes it, whatever the columns skipped
    /// before it, and NULL past the row's end.
    #[test]
    fn the_cursor_reads_numbers_as_get_decodes_them(
        specs in prop::collection::vec(arb_datum(), 0..8),
        picks in prop::collection::btree_set(0usize..10, 0..5),
    ) {
        let datums: Vec<Datum> = specs.iter().map(datum_of).collect();
        let row = Row::pack(datums.iter().copied());
        let mut cursor = ColumnCursor::new(&row);
        for c in picks {
            let expected = match row.get(c) {
                None | Some(Datum::Null) => Number::Null,
                Some(Datum::Int(v)) => Number::Int(v),
                Some(Datum::Decimal(v)) => Number::Decimal(v),
                Some(_) => Number::Other,
            };
            prop_assert_eq!(cursor.number(c), expected);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(row) = Row::from_bytes(&bytes) {
            prop_assert_eq!(row.iter().count() <= bytes.len(), true);
        }
    }
}

#[test]
fn a_clone_holds_exactly_the_rows_bytes() {
    // 100 bytes packed: spilled, and not a power of two.
    let text = "x".repeat(98);
    let row = Row::pack([Datum::Str(&text)]);
    assert_eq!(row.byte_len(), 100);
    let copy = row.clone();
    assert_eq!(copy, row);
    assert_eq!(copy.data.capacity(), 100);
    let sized = Row::with_capacity(100);
    assert_eq!(sized.data.capacity(), 100);
    let mut reused = Row::pack([Datum::Int(1)]);
    reused.clone_from(&row);
    assert_eq!(reused, row);
    assert_eq!(row.as_row_ref().to_row().data.capacity(), 100);
}

/// Nested values and strings with a 4-byte length are located whole: the columns after them
/// are found, and projecting copies them exactly.
#[test]
fn projection_locates_nested_values_and_long_strings() {
    let long = "y".repeat(300);
    let mut row = Row::new();
    let mut packer = row.packer();
    packer.push(Datum::Str(&long));
    packer.push_array(|p| p.extend([Datum::Int(10), Datum::Null, Datum::Str("in")]));
    packer.push_row(|p| {
        p.push(Datum::Str("inner"));
        p.push_map(|p| p.extend([Datum::Str("k"), Datum::Float(1.5)]));
    });
    packer.push(Datum::Int(-7));
    let mut spans = ColumnSpans::new();
    // Locating past the row's end stops at its last column.
    let located = spans.locate(&row, 10);
    let tail = located.project(&[3, 0]);
    assert_eq!(tail, Row::pack([Datum::Int(-7), Datum::Str(&long)]));
    let nested = located.project(&[2, 1]);
    let expected = Row::pack([row.get(2).unwrap(), row.get(1).unwrap()]);
    assert_eq!(nested, expected);
    assert_eq!(located.project(&[0, 1, 2, 3]), row);
    // Runs of consecutive columns are slices of the row's bytes.
    assert_eq!(located.columns(0..4).to_row(), row);
    assert_eq!(located.columns(1..3).to_row(), located.project(&[1, 2]));
    assert_eq!(located.columns(3..4).to_row(), Row::pack([Datum::Int(-7)]));
    assert_eq!(located.columns(2..2).to_row(), Row::new());
}

proptest! {
    /// A row of integers, timestamps and NULLs packed in registers has the bytes `Row::pack`
    /// gives it, at every width (inline or spilled) and at the narrow encodings' bounds.
    #[test]
    fn int_packer_packs_as_row_pack(
        values in proptest::collection::vec(
            proptest::option::of(prop_oneof![
                any::<i64>(),
                -129i64..=128,
                -32_769i64..=32_768,
                Just(i32::MIN as i64 - 1),
                Just(i32::MAX as i64 + 1),
            ]),
            0..=IntPacker::COLUMNS,
        )
    ) {
        let mut packer = IntPacker::new();
        for (i, v) in values.iter().enumerate() {
            // Every third column a timestamp of whole milliseconds.
            match v {
                Some(v) if i % 3 == 2 => packer.push_timestamp_millis(*v),
                Some(v) => packer.push_int(*v),
                None => packer.push_null(),
            }
        }
        let row = packer.finish();
        let expected = Row::pack(values.iter().enumerate().map(|(i, v)| match v {
            Some(millis) if i % 3 == 2 => Datum::Timestamp(Ts { millis: *millis, nanos_of_milli: 0 }),
            Some(v) => Datum::Int(*v),
            None => Datum::Null,
        }));
        prop_assert_eq!(row.as_bytes(), expected.as_bytes());
        prop_assert_eq!(row.spilled(), expected.spilled());
    }
}

/// An `IntPacker` refuses a datum past its room, as documented, rather than pack a wrong row.
#[test]
#[should_panic(expected = "an IntPacker holds 4 datums")]
fn int_packer_refuses_a_fifth_wide_datum() {
    let mut packer = IntPacker::new();
    for _ in 0..=IntPacker::COLUMNS {
        packer.push_int(i64::MAX);
    }
}
