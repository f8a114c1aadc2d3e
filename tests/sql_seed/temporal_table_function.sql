-- Flink's "Temporal Table Function" page: orders converted at the rate valid at order time.
CREATE TABLE orders (
	order_time    TIMESTAMP(3),
	amount        DECIMAL(10, 2),
	currency      STRING,
	WATERMARK FOR order_time AS order_time
) WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');

CREATE TABLE currency_rates (
	update_time   TIMESTAMP(3),
	currency      STRING,
	rate          DECIMAL(10, 4),
	WATERMARK FOR update_time AS update_time
) WITH ('connector' = 'filesystem', 'path' = 'rates_history.csv', 'format' = 'csv');

-- dtemporal's extension of Flink's grammar: Flink registers a temporal table function in the
-- Table API only (currency_rates.createTemporalTableFunction("update_time", "currency")).
CREATE TEMPORAL TABLE FUNCTION rates FOR currency_rates TIME update_time KEY currency;

SELECT
  SUM(amount * rate) AS amount
FROM
  orders,
  LATERAL TABLE (rates(order_time))
WHERE
  rates.currency = orders.currency;
