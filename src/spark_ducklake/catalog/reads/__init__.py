"""Reading the catalog as of a snapshot: tables, columns, files, options, name mappings. No writes.

Imports `catalog.database`, `spec` and `errors`; commits, planners and everything above read through it.

- reader.py              schemas, tables, columns, data and delete files, snapshots at a snapshot id
- options.py             DuckLake options (ducklake_metadata) with global, schema and table scopes
- name_maps.py           name mappings: how files without field ids map to columns
- file_columns.py        which columns a data file lacks (so it reads their initial default, not NULL)
- file_list.py           a table's data files as pyarrow columns (FileList: DataFile objects built on first use)
- file_cache.py          those lists kept per snapshot between scans, checked against the catalog
- metadata_functions.py  `ducklake_table_info`, `ducklake_list_files`, `ducklake_settings` as rows
- macros.py              the macros DuckDB stored (ducklake_macro*), one row per implementation
"""
