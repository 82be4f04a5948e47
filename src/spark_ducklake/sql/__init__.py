"""`lake.sql()`: statements parsed with sqlglot and run on the lake's public API; queries run by Spark.

Below the facade, which delegates `sql`, `register`, views and tags here: imports `operations`, `spark`,
`catalog`, `spec` and `errors`. The `DuckLake` handle comes in as an argument (named only under TYPE_CHECKING),
and statements run on its public methods.

- statements.py  splitting and parsing statements, one function per statement kind
- references.py  a query's lake-table references, the QueryContext statements run with, time-travel values
- queries.py     lake table references read (pruned) as DataFrames, then Spark runs the query
- planning.py    the lake table reads of one query planned: one catalog snapshot per statement, one plan per table
- sandbox.py     what `lake.sql` may read: lake tables, lake views and the lake's own functions, nothing else
- params.py      bound parameters (`params=`) as typed literal nodes, never SQL
- sqlglot_dialects.py  the dialects statements are parsed with (DuckDB's without sqlglot's RANGE type)
- literals.py    DuckDB value literals Spark lacks, rewritten; literal_rows.py: `INSERT ... VALUES` as Arrow
- duck_types.py  DuckDB column types Spark has no type for; geometry.py: WKT literals in, geometry columns out
- insertion_order.py  DuckDB's `preserve_insertion_order`: a query without ORDER BY in the lake's row order
- virtual_columns.py  DuckDB's rowid / snapshot_id / filename / file_row_number / file_index, kept out of stars
- series.py, intervals.py  DuckDB's range()/generate_series() tables and INTERVAL (expr) UNIT, for Spark
- views.py       lake views, stored as DuckDB SQL and expanded into queries
- dml.py         INSERT, UPDATE, DELETE, MERGE; alter.py: ALTER TABLE; tags.py: COMMENT ON and tags
- procedures.py  CALL and table functions under the reference's names
- session.py     BEGIN / COMMIT / ROLLBACK across calls; register.py: lake tables as Spark temp views
- results.py     what commands return, and small rows turned into DataFrames
- macros.py      scalar macro calls replaced by their translated bodies; macro_ddl.py: CREATE/DROP MACRO;
                 settings.py: SET/RESET of retry settings
- defaults.py    column DEFAULT literals: CREATE TABLE ... DEFAULT, INSERT ... DEFAULT VALUES / VALUES (DEFAULT, ...)
- metadata_tables.py  the catalog tables under the METADATA_CATALOG name (`__ducklake_metadata_lake.ducklake_...`)
"""
