"""DuckDB's virtual columns in `lake.sql` queries: `rowid`, `snapshot_id`, `filename`, `file_row_number`,
`file_index`.

A lake table read gets a virtual column only when the query names it (an unqualified name in a SELECT reading the
table, or one qualified by the table's alias) and the table has no real column of that name. `SELECT *` and
`t.*` of such a read are spelled out as the table's own columns, so the virtual ones stay out of stars as in DuckDB.
"""

from __future__ import annotations

from sqlglot import exp

from ..spec.internal_columns import VIRTUAL_COLUMNS
from .references import TableRef


def virtual_needs(tree: exp.Expression, refs: list[TableRef]) -> dict[int, tuple[str, ...]]:
    """id(ref) -> the virtual columns the query names of that read (only reads that need some)."""
    by_select: dict[int, list[TableRef]] = {}
    for ref in refs:
        select = ref.node.parent_select
        if select is not None:
            by_select.setdefault(id(select), []).append(ref)
    needs: dict[int, list[str]] = {}
    for col in tree.find_all(exp.Column):
        name = col.name.lower()
        if name not in VIRTUAL_COLUMNS or col.args.get("db") or isinstance(col.this, exp.Star):
            continue
        for ref in _owners(col, name, by_select):
            wanted = needs.setdefault(id(ref), [])
            if name not in wanted:
                wanted.append(name)
    return {key: tuple(sorted(names, key=VIRTUAL_COLUMNS.index)) for key, names in needs.items()}


def _owners(col: exp.Column, name: str, by_select: dict[int, list[TableRef]]) -> list[TableRef]:
    """The reads a virtual column name refers to: the nearest enclosing SELECT reading a matching table."""
    qualifier = col.table.lower() if col.table else None
    select = col.parent_select
    while select is not None:
        sources = by_select.get(id(select), [])
        if qualifier is not None:
            found = [r for r in sources if _alias(r.node).lower() == qualifier]
        else:
            if any(name in r.columns for r in sources) or _subquery_has(select, name):
                return []  # a real column of that name wins, as in DuckDB
            found = sources
        if found:
            return [r for r in found if name not in r.columns]
        select = select.parent_select
    return []


def _subquery_has(select: exp.Select, name: str) -> bool:
    """Whether a FROM / JOIN subquery of the SELECT outputs a column of that name."""
    from_ = select.args.get("from_") or select.args.get("from")
    sources = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    return any(isinstance(s, exp.Subquery) and name in {n.lower() for n in s.this.named_selects} for s in sources)


def _alias(node: exp.Table) -> str:
    """The name a table reference is qualified by in its query (its alias, else its name)."""
    alias = node.args.get("alias")
    return alias.name if alias is not None and alias.name else node.name


def hide_in_stars(node: exp.Table, columns: list[str]) -> None:
    """Spell out `*` / `t.*` of the SELECT reading `node` as its real `columns` (its virtual columns stay out).

    A star over several sources becomes one `source.*` each (the read's own spelled out); left as written when
    a source cannot be qualified (a subquery without alias), a join merges columns (USING, NATURAL), or the star
    carries DuckDB modifiers over several sources."""
    select = node.parent_select
    if select is None:
        return
    alias = _alias(node)
    sources = _sources(select)
    new: list[exp.Expr] = []
    changed = False
    for item in select.expressions:
        if isinstance(item, exp.Star) and item.args.get("ilike"):
            new.append(item)
        elif isinstance(item, exp.Star) and sources is not None and (len(sources) == 1 or not _modifiers(item)):
            for source in sources:
                if source is node:
                    new += _spelled(item, alias, columns)
                else:
                    new.append(exp.Column(this=exp.Star(), table=exp.to_identifier(_alias_of(source))))
            changed = True
        elif (isinstance(item, exp.Column) and isinstance(item.this, exp.Star) and item.table
              and not item.this.args.get("ilike")
              and item.table.lower() == alias.lower()):
            new += _spelled(item.this, alias, columns)
            changed = True
        else:
            new.append(item)
    if changed:
        select.set("expressions", new)


def _sources(select: exp.Select) -> list[exp.Expression] | None:
    """The FROM and JOIN sources of a SELECT, or None when a star over them cannot be spelled out per source."""
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        return None
    joins = select.args.get("joins") or []
    if any(j.args.get("using") or "NATURAL" in str(j.args.get("method") or "").upper() for j in joins):
        return None
    sources = [from_.this] + [j.this for j in joins]
    if len(sources) > 1 and any(not _alias_of(s) for s in sources):
        return None
    return sources


def _alias_of(source: exp.Expression) -> str:
    """A source's qualifier; "" when it has none a star could use (a subquery or lake function without alias)."""
    if not isinstance(source, exp.Table):
        return source.alias
    name = _alias(source)
    return "" if name.startswith("__ducklake_ref_") else name


def _modifiers(star: exp.Star) -> bool:
    return any(star.args.get(k) for k in ("except_", "except", "replace", "rename", "ilike"))


def _spelled(star: exp.Star, alias: str, columns: list[str]) -> list[exp.Expr]:
    """The read's columns for one star, with DuckDB's EXCLUDE / REPLACE / RENAME applied."""
    excluded = {e.name.lower() for e in star.args.get("except_") or star.args.get("except") or []}
    replaced = {e.alias.lower(): e.this for e in star.args.get("replace") or []}
    renamed = {e.this.name.lower(): e.alias for e in star.args.get("rename") or []
               if isinstance(e, exp.Alias) and isinstance(e.this, exp.Column)}
    out: list[exp.Expr] = []
    for name in columns:
        key = name.lower()
        if key in excluded:
            continue
        if key in replaced:
            out.append(exp.alias_(replaced[key].copy(), name, quoted=True))
        elif key in renamed:
            out.append(exp.alias_(exp.column(name, table=alias, quoted=True), renamed[key], quoted=True))
        else:
            out.append(exp.column(name, table=alias, quoted=True))
    return out
