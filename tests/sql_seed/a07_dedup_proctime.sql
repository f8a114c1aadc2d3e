-- Case A07: deduplication by arrival on the processing-time attribute (Flink's
-- DeduplicateITCase testFirstRowOnProctime / testLastRowOnProctime).
CREATE TABLE T (a INT, b INT, c STRING, proctime AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '../data/a07_proctime.csv', 'format' = 'csv');

SELECT a, b, c FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY proctime) AS rowNum FROM T)
WHERE rowNum = 1;

SELECT a, b, c FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY proctime DESC) AS rowNum FROM T)
WHERE rowNum = 1;
