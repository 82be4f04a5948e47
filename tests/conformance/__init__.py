"""Conformance runner: the reference's sqllogictest files (`test/sql/**/*.test` of duckdb/ducklake) run through
`lake.sql(dialect="duckdb")`. Run it with `python -m tests.conformance [DIR ...]`; see docs/sql.md, "Conformance".

- source.py   the test files of a pinned commit, in a cache directory (local git mirror, else codeload.github.com)
- parser.py   sqllogictest records and directives, loops expanded
- scope.py    what is out of scope, per file and per statement, each with a named reason
- render.py   values rendered as DuckDB's sqllogictest renders them; comparison per sort mode
- execute.py  one file run: ATTACH/DETACH/USE by the runner, every other statement through lake.sql
- report.py   per-directory counts, failure reasons, JSON and markdown
"""
