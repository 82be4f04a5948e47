"""The format itself (spec/): change vocabulary and conflict rules, DuckDB keywords, WKT."""
