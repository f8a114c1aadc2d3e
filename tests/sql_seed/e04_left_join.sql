-- Case E04: the NULL-padded row of a LEFT JOIN is retracted when the first partner arrives and
-- re-emitted when the last leaves (-D / +I, never -U / +U). Each CSV record, and each blank
-- line, is one step with --epoch-bytes 1: L holds steps 1 and 6, R steps 2-5 and 7.
CREATE TABLE L (k BIGINT, v STRING)
  WITH ('connector' = 'filesystem', 'path' = 'e04_l.csv', 'format' = 'csv');
CREATE TABLE R (k BIGINT, v STRING)
  WITH ('connector' = 'filesystem', 'path' = 'e04_r.csv', 'format' = 'csv');
SELECT L.k, L.v, R.k, R.v FROM L LEFT JOIN R ON L.k = R.k;
