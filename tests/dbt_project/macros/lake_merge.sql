{#-
  The dbt-spark macro the lake catalog needs overridden for incremental merge models: dbt-spark allows
  incremental_strategy='merge' only when file_format is 'delta', 'iceberg' or 'hudi' (formats with MERGE INTO), and
  its incremental materialization takes file_format 'parquet' when a model sets none. Lake tables take MERGE INTO
  through the catalog plugin whatever file_format says, and a model must not set file_format: dbt-spark would add
  `using <format>` to its CREATE TABLE. So merge is validated as it is for Delta; every other strategy and format as
  dbt-spark validates them (a root project's macro replaces the adapter's macro of the same name; dbt.<name> is the
  original).
-#}
{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) %}
  {%- set checked_format = 'delta' if raw_strategy == 'merge' else file_format -%}
  {% do return(dbt.dbt_spark_validate_get_incremental_strategy(raw_strategy, checked_format)) %}
{% endmacro %}
