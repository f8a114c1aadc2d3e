-- Flink's debezium-json format page: a MySQL table's Debezium change events (a snapshot read,
-- inserts, an update, a delete), read from a file, one event per line.
CREATE TABLE topic_products (
  id BIGINT,
  name STRING,
  description STRING,
  weight DECIMAL(10, 2)
) WITH ('connector' = 'filesystem', 'path' = 'products_debezium.json', 'format' = 'debezium-json');

-- The same events as Debezium writes them with the JSON converter's schemas enabled.
CREATE TABLE topic_products_with_schema (
  id BIGINT,
  name STRING,
  description STRING,
  weight DECIMAL(10, 2)
) WITH ('connector' = 'filesystem', 'path' = 'products_debezium_schema.json',
        'format' = 'debezium-json', 'debezium-json.schema-include' = 'true');

SELECT id, name, weight FROM topic_products;

SELECT COUNT(*) AS products, SUM(weight) AS total_weight FROM topic_products_with_schema;
