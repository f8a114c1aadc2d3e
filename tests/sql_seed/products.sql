-- Flink's "Versioned Tables" page: the products table (its DDL verbatim but for WITH), read as
-- of 10:00 and 13:00 through probe rows at those times.
CREATE TABLE products (
	product_id    STRING,
	product_name  STRING,
	price         DECIMAL(32, 2),
	update_time   TIMESTAMP(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
	PRIMARY KEY (product_id) NOT ENFORCED,
	WATERMARK FOR update_time AS update_time
) WITH ('connector' = 'filesystem', 'path' = 'products.csv', 'format' = 'csv');

CREATE TABLE probes (
	t             TIMESTAMP(3),
	product_id    STRING,
	WATERMARK FOR t AS t
) WITH ('connector' = 'filesystem', 'path' = 'probes.csv', 'format' = 'csv');

SELECT q.t, q.product_id, p.product_name, p.price
FROM probes AS q
LEFT JOIN products FOR SYSTEM_TIME AS OF q.t AS p
  ON q.product_id = p.product_id;
