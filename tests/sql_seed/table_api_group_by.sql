-- Flink's Table API overview, orders.groupBy($("a")).select($("a"), $("b").count().as("cnt")),
-- in SQL form: COUNT(b) skips the row whose b is NULL.
CREATE TABLE Orders (
	a        STRING,
	b        BIGINT,
	c        BIGINT,
	rowtime  TIMESTAMP(3),
	WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'table_api_orders.csv', 'format' = 'csv');

SELECT a, COUNT(b) AS cnt FROM Orders GROUP BY a;
