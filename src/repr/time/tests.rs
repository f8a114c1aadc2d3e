//! Tests of the SQL time types: exact values, Flink's text forms, round trips, bad input.

use chrono::NaiveDate;
use proptest::prelude::*;

use super::*;

const YEARS: [i64; 6] = [0, 1, 1969, 1970, 2024, 9999];
const NANOS_PER_SECOND: i64 = 1_000_000_000;

fn ts_text(ts: Ts, p: u8) -> String {
    let mut s = String::new();
    format_timestamp(&mut s, ts, p).unwrap();
    s
}

fn ltz_text(ts: Ts, p: u8, zone: i32) -> String {
    let mut s = String::new();
    format_timestamp_ltz(&mut s, ts, p, zone).unwrap();
    s
}

fn time_text(nanos: i64, p: u8) -> String {
    let mut s = String::new();
    format_time(&mut s, nanos, p).unwrap();
    s
}

fn date_text(days: i32) -> String {
    let mut s = String::new();
    format_date(&mut s, days).unwrap();
    s
}

/// A timestamp in one of [`YEARS`] (the whole year), truncated to `p`.
fn ts_in_years() -> impl Strategy<Value = (Ts, u8)> {
    (
        proptest::sample::select(&YEARS[..]),
        0..366i64,
        0..NANOS_PER_DAY,
        0..=MAX_PRECISION,
    )
        .prop_map(|(year, day_of_year, nanos, p)| {
            let days_in_year = if is_leap_year(year) { 366 } else { 365 };
            let days = ymd_to_days(year, 1, 1) + day_of_year % days_in_year;
            let ts =
                Ts::from_nanos(i128::from(days) * i128::from(NANOS_PER_DAY) + i128::from(nanos))
                    .unwrap();
            (truncate_to_precision(ts, p), p)
        })
}

/// Any timestamp of years 0000-9999.
fn any_ts() -> impl Strategy<Value = Ts> {
    let min = i128::from(ymd_to_days(0, 1, 1)) * i128::from(NANOS_PER_DAY);
    let max = i128::from(ymd_to_days(10_000, 1, 1)) * i128::from(NANOS_PER_DAY);
    (min..max).prop_map(|n| Ts::from_nanos(n).unwrap())
}

#[test]
fn calendar_exact_days() {
    assert_eq!(ymd_to_days(1970, 1, 1), 0);
    assert_eq!(ymd_to_days(1969, 12, 31), -1);
    assert_eq!(ymd_to_days(0, 1, 1), -719_528);
    assert_eq!(ymd_to_days(1, 1, 1), -719_162);
    assert_eq!(ymd_to_days(2024, 2, 29), 19_782);
    assert_eq!(ymd_to_days(9999, 12, 31), 2_932_896);
    assert_eq!(days_to_ymd(-719_528), (0, 1, 1));
    assert_eq!(days_to_ymd(2_932_896), (9999, 12, 31));
    assert!(is_leap_year(0) && is_leap_year(2000) && is_leap_year(2024));
    assert!(!is_leap_year(1900) && !is_leap_year(2023));
}

#[test]
fn parses_exact_values() {
    assert_eq!(parse_date("1970-01-01"), Ok(0));
    assert_eq!(parse_date(" 2024-3-1 "), Ok(19_783));
    assert_eq!(parse_date("0000-01-01"), Ok(-719_528));
    assert_eq!(parse_time("10:15", 0), Ok(36_900 * NANOS_PER_SECOND));
    assert_eq!(parse_time("9:5:7", 0), Ok(32_707 * NANOS_PER_SECOND));
    assert_eq!(parse_time("23:59:59.999999999", 9), Ok(NANOS_PER_DAY - 1));
    assert_eq!(
        parse_timestamp("2024-03-01 10:15:00.25", 3),
        Ok(Ts::from_millis(1_709_288_100_250))
    );
    assert_eq!(
        parse_timestamp("2024-03-01T10:15", 3),
        Ok(Ts::from_millis(1_709_288_100_000))
    );
    assert_eq!(
        parse_timestamp("1969-12-31 23:59:59.999999999", 9),
        Ok(Ts {
            millis: -1,
            nanos_of_milli: 999_999
        })
    );
    assert_eq!(
        parse_timestamp("0000-01-01", 9),
        Ok(Ts::from_millis(-62_167_219_200_000))
    );
    assert_eq!(
        parse_timestamp("9999-12-31 23:59:59.999", 3),
        Ok(Ts::from_millis(253_402_300_799_999))
    );
}

#[test]
fn fraction_beyond_precision_is_truncated_toward_the_past() {
    let ts = |text: &str, p| parse_timestamp(text, p).unwrap();
    assert_eq!(ts("1970-01-01 00:00:00.1239", 3), Ts::from_millis(123));
    assert_eq!(ts("1970-01-01 00:00:00.999999999", 0), Ts::EPOCH);
    assert_eq!(
        ts("1969-12-31 23:59:59.987654321", 1),
        Ts::from_millis(-100)
    );
    assert_eq!(
        ts("1969-12-31 23:59:59.987654321", 7),
        Ts {
            millis: -13,
            nanos_of_milli: 654_300
        }
    );
    assert_eq!(parse_time("00:00:00.999", 2), Ok(990_000_000));
    assert_eq!(
        truncate_to_precision(Ts::from_millis(-1), 0),
        Ts::from_millis(-1000)
    );
    assert_eq!(
        truncate_time_to_precision(1_999_999_999, 0),
        NANOS_PER_SECOND
    );
}

#[test]
fn formats_as_flink_prints() {
    let t = Ts::from_millis(1_709_288_100_250);
    assert_eq!(ts_text(t, 3), "2024-03-01 10:15:00.250");
    assert_eq!(ts_text(t, 6), "2024-03-01 10:15:00.250000");
    assert_eq!(ts_text(t, 1), "2024-03-01 10:15:00.25");
    assert_eq!(ts_text(Ts::EPOCH, 0), "1970-01-01 00:00:00");
    assert_eq!(ts_text(Ts::EPOCH, 3), "1970-01-01 00:00:00.000");
    assert_eq!(ts_text(Ts::from_millis(-1), 3), "1969-12-31 23:59:59.999");
    assert_eq!(
        ts_text(Ts::from_millis(-62_167_219_200_000), 9),
        "0000-01-01 00:00:00.000000000"
    );
    assert_eq!(ltz_text(t, 3, 3600), "2024-03-01 11:15:00.250");
    assert_eq!(
        ltz_text(t, 0, -(10 * 3600 + 1800)),
        "2024-02-29 23:45:00.25"
    );
    assert_eq!(time_text(36_900 * NANOS_PER_SECOND, 0), "10:15:00");
    assert_eq!(time_text(36_900 * NANOS_PER_SECOND, 3), "10:15:00.0");
    assert_eq!(time_text(36_900_250_000_000, 3), "10:15:00.25");
    assert_eq!(time_text(36_900_123_456_789, 9), "10:15:00.123456789");
    assert_eq!(time_text(36_900_123_456_789, 2), "10:15:00.12");
    assert_eq!(time_text(-NANOS_PER_SECOND, 0), "23:59:59");
    assert_eq!(date_text(19_782), "2024-02-29");
    assert_eq!(date_text(-719_162), "0001-01-01");
    // Years outside 0..=9999 take the long path: more digits, or a sign.
    assert_eq!(date_text(2_932_897), "10000-01-01");
    assert_eq!(date_text(-719_529), "-001-12-31");
}

#[test]
fn ltz_reads_wall_clock_in_the_session_zone_or_the_written_offset() {
    let kolkata = 5 * 3600 + 1800;
    let instant = Ts::from_millis(1_709_288_100_000); // 2024-03-01 10:15:00Z
    for text in [
        "2024-03-01 15:45:00",
        "2024-03-01T10:15:00Z",
        "2024-03-01T10:15:00+00",
        "2024-03-01T15:45+05:30",
        "2024-03-01 15:45:00+0530",
        "2024-03-01T02:15:00-08:00",
    ] {
        assert_eq!(parse_timestamp_ltz(text, 3, kolkata), Ok(instant), "{text}");
    }
    assert_eq!(
        parse_timestamp_ltz("2024-03-01 10:15:00", 3, 0),
        Ok(instant)
    );
    assert_eq!(ltz_text(instant, 0, kolkata), "2024-03-01 15:45:00");
}

#[test]
fn leap_days() {
    for ok in ["2024-02-29", "2000-02-29", "0000-02-29", "9996-02-29"] {
        let days = parse_date(ok).unwrap();
        assert_eq!(date_text(days), ok);
        let ts = parse_timestamp(&format!("{ok} 23:59:59.5"), 1).unwrap();
        assert_eq!(ts_text(ts, 1), format!("{ok} 23:59:59.5"));
    }
    for bad in ["2023-02-29", "1900-02-29", "0001-02-29", "9999-02-29"] {
        let err = parse_date(bad).unwrap_err();
        assert!(err.reason.starts_with("no such date"), "{bad}: {err}");
        assert!(parse_timestamp(&format!("{bad} 00:00"), 0).is_err());
    }
}

#[test]
fn bad_input_is_an_error_naming_the_value() {
    for bad in [
        "",
        "garbage",
        "2024-13-01",
        "2024-00-10",
        "2024-01-32",
        "2024-01-00",
        "10000-01-01",
        "999-01-01",
        "2024/01/01",
        "2024-01-01x",
        "2024-01-01 00:00",
        "2024-01-",
        "２０２４-01-01",
    ] {
        let err = parse_date(bad).unwrap_err();
        assert_eq!(err.value, bad);
        assert!(!err.reason.is_empty());
    }
    for bad in [
        "24:00",
        "24:00:00",
        "23:60",
        "23:59:60",
        "12",
        "12:",
        "12:00:",
        "12:00:00.",
        "12:00:00.1234567890",
        "12:00.5",
        "123:00",
        "12:00:00Z",
        "noon",
    ] {
        let err = parse_time(bad, 9).unwrap_err();
        assert_eq!(err.value, bad);
    }
    for bad in [
        "",
        "x",
        "2024-13-01 00:00:00",
        "2024-02-30 00:00:00",
        "10000-01-01 00:00:00",
        "2024-01-01 24:00:00",
        "2024-01-01 23:59:61",
        "2024-01-01X10:00",
        "2024-01-01 10:00:00.",
        "2024-01-01 10:00:00.0000000001",
        "2024-01-01 10:00:00+01:00",
        "2024-01-01 10:00:00Z",
        "2024-01-01  10:00",
        "2024-01-01 10:00 junk",
        "2024-01-01T10:00:00€",
    ] {
        let err = parse_timestamp(bad, 3).unwrap_err();
        assert_eq!(err.value, bad);
        assert!(err
            .to_string()
            .starts_with(&format!("invalid event time {bad:?}: ")));
    }
    for bad in [
        "2024-01-01 10:00+19:00",
        "2024-01-01 10:00+1",
        "2024-01-01 10:00+01:60",
        "2024-01-01 10:00+01:00:00",
        "2024-01-01 10:00Z+01",
    ] {
        assert!(parse_timestamp_ltz(bad, 3, 0).is_err(), "{bad}");
    }
    assert!(parse_timestamp("2024-01-01", 10).is_err());
    assert!(parse_time("10:00", 10).is_err());
    assert!(parse_timestamp_ltz("2024-01-01", 3, 18 * 3600 + 1).is_err());
}

#[test]
fn formatting_never_panics_outside_the_range() {
    for ts in [
        Ts::from_millis(i64::MIN),
        Ts::from_millis(i64::MAX),
        Ts {
            millis: 0,
            nanos_of_milli: u32::MAX,
        },
    ] {
        for p in [0, 3, 9, 200] {
            ts_text(ts, p);
            ltz_text(ts, p, i32::MAX);
            ltz_text(ts, p, i32::MIN);
        }
    }
    for nanos in [i64::MIN, i64::MAX] {
        time_text(nanos, 9);
    }
    for days in [i32::MIN, i32::MAX] {
        date_text(days);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn timestamp_value_text_value((ts, p) in ts_in_years()) {
        let text = ts_text(ts, p);
        prop_assert_eq!(parse_timestamp(&text, p), Ok(ts));
        // A value truncated to p prints exactly p fraction digits.
        let fraction = text.split_once('.').map_or(0, |(_, f)| f.len());
        prop_assert_eq!(fraction, usize::from(p));
        let t_form = text.replacen(' ', "T", 1);
        prop_assert_eq!(parse_timestamp(&t_form, p), Ok(ts));
    }

    #[test]
    fn timestamp_text_value_text(
        year in proptest::sample::select(&YEARS[..]),
        month in 1..=12u32,
        day in 1..=31u32,
        (h, m, s) in (0..24u32, 0..60u32, 0..60u32),
        nanos in 0..1_000_000_000u32,
        p in 0..=MAX_PRECISION,
    ) {
        let day = day.min(days_in_month(year, month));
        let mut text = format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02}");
        if p > 0 {
            let digits = nanos / 10u32.pow(u32::from(9 - p));
            text.push_str(&format!(".{digits:0width$}", width = usize::from(p)));
        }
        let ts = parse_timestamp(&text, p).unwrap();
        prop_assert_eq!(ts_text(ts, p), text.clone());
        // Same wall clock in any session zone round-trips through TIMESTAMP_LTZ.
        let zone = (year as i32 % 37 - 18) * 3600;
        let instant = parse_timestamp_ltz(&text, p, zone).unwrap();
        prop_assert_eq!(ltz_text(instant, p, zone), text);
        prop_assert_eq!(instant.to_nanos() + i128::from(zone) * 1_000_000_000, ts.to_nanos());
    }

    #[test]
    fn time_round_trips(nanos in 0..NANOS_PER_DAY, p in 0..=MAX_PRECISION) {
        let nanos = truncate_time_to_precision(nanos, p);
        let text = time_text(nanos, p);
        prop_assert_eq!(parse_time(&text, p), Ok(nanos));
    }

    #[test]
    fn date_round_trips_and_agrees_with_chrono(days in -719_528..=2_932_896i32) {
        let text = date_text(days);
        prop_assert_eq!(parse_date(&text), Ok(days));
        let chrono = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
            + chrono::Duration::days(i64::from(days));
        prop_assert_eq!(text, chrono.format("%Y-%m-%d").to_string());
    }

    #[test]
    fn ts_order_is_instant_order(a in any_ts(), b in any_ts()) {
        prop_assert_eq!(a.cmp(&b), a.to_nanos().cmp(&b.to_nanos()));
        prop_assert_eq!(Ts::from_nanos(a.to_nanos()), Some(a));
    }

    #[test]
    fn truncation_floors_and_is_idempotent(ts in any_ts(), p in 0..=MAX_PRECISION) {
        let t = truncate_to_precision(ts, p);
        let unit = 10i128.pow(u32::from(9 - p));
        prop_assert!(t <= ts && ts.to_nanos() - t.to_nanos() < unit);
        prop_assert_eq!(t.to_nanos().rem_euclid(unit), 0);
        prop_assert_eq!(truncate_to_precision(t, p), t);
    }

    #[test]
    fn garbage_never_panics(text in "\\PC{0,40}", p in 0..=12u8, zone in -90_000..90_000i32) {
        let _ = parse_date(&text);
        let _ = parse_time(&text, p);
        let _ = parse_timestamp(&text, p);
        let _ = parse_timestamp_ltz(&text, p, zone);
    }
}
