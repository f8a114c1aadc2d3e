-- Flink's "Versioned Table Views": a keep-last deduplication view over append-only rates.
CREATE TABLE currency_rates (
	currency      STRING,
	rate          DECIMAL(32, 10),
	update_time   TIMESTAMP(3),
	WATERMARK FOR update_time AS update_time - INTERVAL '15' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'currency_rates.csv', 'format' = 'csv');

CREATE VIEW versioned_rates AS
SELECT currency, rate, update_time              -- (1) `update_time` keeps the event time
  FROM (
      SELECT *,
      ROW_NUMBER() OVER (PARTITION BY currency  -- (2) the inferred unique key `currency` can be a primary key
         ORDER BY update_time DESC) AS rownum
      FROM currency_rates)
WHERE rownum = 1;

SELECT * FROM versioned_rates;
