{#-
  dbt-spark's `table` materialization drops an existing table and then runs CREATE TABLE ... AS SELECT (it replaces
  in one statement only for Delta and Iceberg, which it recognizes by the provider in SHOW TABLE EXTENDED): on the
  lake that is two snapshots with the table missing between them. The lake catalog replaces a table atomically
  (CREATE OR REPLACE TABLE ... AS SELECT, one snapshot that drops the old table and adds the new one's rows), so this
  materialization, replacing dbt-spark's for this project, always does that; only a view of the same name is dropped
  first. Models set no file_format (the catalog writes DuckLake's Parquet; dbt-spark would add `using <format>`);
  partition_by becomes PARTITIONED BY, which the catalog takes. SQL models only, as the lake catalog runs SQL.
-#}
{% materialization table, adapter='spark', supported_languages=['sql'] %}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database,
                                                type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {% if old_relation is not none and not old_relation.is_table %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {%- call statement('main') -%}
    create or replace table {{ target_relation }}
    {{ partition_cols(label="partitioned by") }}
    as
    {{ compiled_code }}
  {%- endcall -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
