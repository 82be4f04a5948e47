"""`python -m spark_ducklake.catalog_service`: how the JVM plugin (DuckLakeCatalog.java) starts the service."""

from .server import main

if __name__ == "__main__":
    main()
