"""`lake.sql` (sql/): statements, both dialects, transactions, views, parameters, planning."""
