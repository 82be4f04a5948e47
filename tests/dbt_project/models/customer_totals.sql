-- A table model: rebuilt from the source at every run.
{{ config(materialized='table') }}
select customer, count(*) as orders, sum(amount) as total
from {{ source('raw', 'orders') }}
group by customer
