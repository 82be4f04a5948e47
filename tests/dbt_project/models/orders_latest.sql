-- An incremental model merged on id: a later run takes the source rows updated since the last one, updating the
-- orders it has and inserting the others (MERGE INTO, which the lake catalog runs as a row-level change).
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, customer, amount, updated_at
from {{ source('raw', 'orders') }}
{% if is_incremental() %}
where updated_at > (select max(updated_at) from {{ this }})
{% endif %}
