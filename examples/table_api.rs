//! The Table API on real data: January 2013's New York flights joined with the weather at their
//! origin airport as of their scheduled departure (a temporal table function over the hourly
//! weather history, Flink's `LATERAL TABLE (weather(f.ts))`), then grouped per origin.
//!
//! ```text
//! cargo run --release --example table_api              # 2 workers
//! cargo run --release --example table_api -- -w 4      # timely's flags: -w -n -p -h
//! ```
//!
//! Expected output (`avg_temp` is the mean temperature, in °F, met by the origin's flights):
//!
//! ```text
//! +----+--------------------------------+----------------------+----------------------+--------------------------------+
//! | op |                         origin |              flights |            delayed_1h |                       avg_temp |
//! ...
//! ```

use differential_temporal::expr::{call, col, lit};
use differential_temporal::repr::{DataType, Schema};
use differential_temporal::table::TableEnv;

const FLIGHTS: &str = "data/nycflights13/flights_2013-01.csv";
const WEATHER: &str = "data/nycflights13/weather_2013-01.csv";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        args = vec!["-w".into(), "2".into()];
    }
    let env = TableEnv::new().with_timely_args(args);

    let flights = Schema::builder()
        .column("id", DataType::BigInt.not_null())
        .column("ts", DataType::Timestamp(3).not_null())
        .column("dep_delay", DataType::BigInt.nullable())
        .column("carrier", DataType::STRING.not_null())
        .column("origin", DataType::STRING.not_null())
        .column("dest", DataType::STRING.not_null())
        .rowtime("ts", 0)
        .build()?;
    let weather = Schema::builder()
        .column("ts", DataType::Timestamp(3).not_null())
        .column("origin", DataType::STRING.not_null())
        .column("temp", DataType::Double.nullable())
        .column("wind_speed", DataType::Double.nullable())
        .rowtime("ts", 0)
        .build()?;
    env.register_csv("flights", FLIGHTS, Some(flights))?;
    env.register_csv("weather", WEATHER, Some(weather))?;

    // weather(t): each origin's weather row valid at t (every hourly row is a version).
    let weather_at = env
        .from("weather")
        .temporal_table_function(col("ts"), col("origin"))?;
    env.register_temporal_table_function("weather_at", weather_at)?;

    let per_origin = env
        .from("flights")
        // Flink's temporal table function join is INNER: a flight with no weather row at or
        // before its departure is dropped.
        .join_lateral(
            call("weather_at", [col("ts")]),
            col("origin").eq(col("origin0")),
        )
        .group_by([col("origin")])
        .select([
            col("origin"),
            col("id").count().alias("flights"),
            col("id")
                .count()
                .filter(col("dep_delay").ge(lit(60i64)))
                .alias("delayed_1h"),
            col("temp").avg().alias("avg_temp"),
        ]);
    let start = std::time::Instant::now();
    let result = per_origin.execute()?;
    if result.is_complete() {
        println!("{}", per_origin.explain().map_err(|e| e.to_string())?);
        result.print();
        eprintln!(
            "{} output changes, {} refused rows, {} malformed rows, {:.2} s",
            result.changelog().len(),
            result.refused().len(),
            result.malformed().len(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
