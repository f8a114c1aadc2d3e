-- Case A01: a point-in-time view of an upsert changelog (Flink's "Versioned Tables" page,
-- products), probed at every boundary: inclusive version start, -U/+U at one time, a delete.
-- The case's times are times of day (TIMESTAMP(3) on one day): computed rowtimes read them.
CREATE TABLE products (
  update_time STRING, product_id STRING, product_name STRING, price DECIMAL(32, 2),
  rowtime AS TO_TIMESTAMP(CONCAT('1970-01-01 ', update_time)),
  PRIMARY KEY (product_id) NOT ENFORCED, WATERMARK FOR rowtime AS rowtime
) WITH ('connector' = 'filesystem', 'path' = '../data/a01_products.csv', 'format' = 'csv');
CREATE TABLE probes (
  time_of_day STRING, product_id STRING,
  t AS TO_TIMESTAMP(CONCAT('1970-01-01 ', time_of_day)), WATERMARK FOR t AS t
) WITH ('connector' = 'filesystem', 'path' = '../data/a01_probes.csv', 'format' = 'csv');
SELECT q.t, q.product_id, p.product_name, p.price, p.update_time
FROM probes AS q
LEFT JOIN products FOR SYSTEM_TIME AS OF q.t AS p
  ON q.product_id = p.product_id;
