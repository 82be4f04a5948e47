"""The Spark catalog plugin (catalog_service/ and its JVM class): Spark SQL, procedures, row-level commands,
servers, dbt."""
