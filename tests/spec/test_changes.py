"""The changes_made vocabulary and the spec's conflict rules, without a database."""

from spark_ducklake.catalog.conflicts import find_conflict
from spark_ducklake.spec.snapshot_changes import (
    Change,
    display_changes,
    parse_changes,
    quote_name,
    render_changes,
    unquote_name,
)


def test_quoting_round_trips_odd_names():
    text = quote_name('my "schema"', "t,1.x")
    assert text == '"my ""schema"""."t,1.x"'
    assert unquote_name(text) == ['my "schema"', "t,1.x"]


def test_parse_respects_quoted_commas():
    text = 'created_table:"main"."a,b",inserted_into_table:3'
    assert parse_changes(text) == [Change("created_table", '"main"."a,b"'), Change("inserted_into_table", "3")]
    assert render_changes(parse_changes(text)) == text


def test_display_matches_reference_keys():
    assert display_changes('created_schema:"s",created_table:"s"."t",inserted_into_table:1') == {
        "schemas_created": ["s"], "tables_created": ["s.t"], "tables_inserted_into": ["1"]}


def C(kind, value):  # noqa: N802 - reads like the table in the docs
    return Change(kind, str(value))


def test_appends_to_same_table_do_not_conflict():
    assert find_conflict([C("inserted_into_table", 1)], [C("inserted_into_table", 1)]) is None
    assert find_conflict([C("inlined_insert", 1)], [C("inserted_into_table", 1)]) is None


def test_conflict_rules():
    cases = [
        ([C("created_schema", '"s"')], [C("created_schema", '"s"')]),
        ([C("dropped_schema", 4)], [C("dropped_schema", 4)]),
        ([C("created_table", '"m"."t"')], [C("created_table", '"m"."t"')]),
        ([C("dropped_table", 2)], [C("dropped_table", 2)]),
        ([C("altered_table", 2)], [C("altered_table", 2)]),
        ([C("inserted_into_table", 2)], [C("dropped_table", 2)]),
        ([C("inserted_into_table", 2)], [C("deleted_from_table", 2)]),
        ([C("deleted_from_table", 2)], [C("inserted_into_table", 2)]),
        ([C("deleted_from_table", 2)], [C("compacted_table", 2)]),
        ([C("compacted_table", 2)], [C("deleted_from_table", 2)]),
    ]
    for ours, theirs in cases:
        assert find_conflict(ours, theirs), (ours, theirs)


def test_deletes_of_different_files_do_not_conflict():
    ours, theirs = [C("deleted_from_table", 2)], [C("deleted_from_table", 2)]
    assert find_conflict(ours, theirs, our_deleted_files={1}, their_deleted_files={2}) is None
    assert find_conflict(ours, theirs, our_deleted_files={1}, their_deleted_files={1, 2})
    assert find_conflict(ours, theirs)  # unknown files: conservative


def test_create_in_dropped_schema_and_drop_of_used_schema():
    names = {"7": "s"}
    assert find_conflict([C("created_table", '"s"."t"')], [C("dropped_schema", 7)], schema_names=names)
    assert find_conflict([C("dropped_schema", 7)], [C("created_table", '"s"."t"')], schema_names=names)
    assert find_conflict([C("created_table", '"x"."t"')], [C("dropped_schema", 7)], schema_names=names) is None
