-- The lake catalog's tour in plain Spark SQL, on a new lake attached as the catalog `lake` (docs/sql.md, "Spark SQL
-- with the lake catalog"). Run it statement by statement with spark.sql, over Spark Connect, or as a whole with
-- `beeline -f` against the Spark Thrift Server; CI runs it all three ways (tests/catalog_service/test_spark_catalog_servers.py).
CREATE NAMESPACE lake.sales;
CREATE TABLE lake.sales.orders (id BIGINT NOT NULL, customer STRING, amount DOUBLE);
INSERT INTO lake.sales.orders VALUES (1, 'c1', 10.0), (2, 'c2', 20.0), (3, 'c3', 30.0);
UPDATE lake.sales.orders SET amount = amount * 2 WHERE id = 1;
DELETE FROM lake.sales.orders WHERE id = 2;
MERGE INTO lake.sales.orders t
USING (SELECT 3L AS id, 'c3' AS customer, 33.0D AS amount UNION ALL SELECT 4L, 'c4', 40.0D) s
ON t.id = s.id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;
SELECT * FROM lake.sales.orders ORDER BY id;
-- Time travel: snapshot 0 made the lake, 1 the namespace, 2 the table, 3 the first INSERT.
SELECT * FROM lake.sales.orders VERSION AS OF 3 ORDER BY id;
-- Small inserts are inlined in the catalog; with the limit at 0 each INSERT writes a Parquet file.
CALL lake.system.set_option('data_inlining_row_limit', 0, table_name => 'orders', schema => 'sales');
INSERT INTO lake.sales.orders SELECT id, 'c5', 50.0 FROM range(5, 7, 1, 1);
INSERT INTO lake.sales.orders SELECT id, 'c7', 70.0 FROM range(7, 9, 1, 1);
CALL lake.system.merge_adjacent_files('orders', schema => 'sales');
SELECT customer, count(*) AS n, sum(amount) AS total FROM lake.sales.orders GROUP BY customer ORDER BY customer;
SHOW TABLES IN lake.sales;
