"""The plugin's configuration: the Spark confs a session needs to use the lake as a catalog
(`spark_catalog_conf`: plugin class, jar, options), and the lake a plugin's options describe (`attach`: the
options arrive as strings, as Spark passes them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..catalog.reads.options import parse_boolean
from ..dataplane.spark.session import REQUIRED_CONF
from ..errors import InvalidArgumentError
from ..lake import DuckLake

CATALOG_CLASS = "sparkducklake.DuckLakeCatalog"
CATALOG_JAR = Path(__file__).parent.parent / "dataplane" / "spark" / "jvm" / "spark-ducklake-catalog.jar"
# DuckLake.attach keywords a catalog option may carry, by the type its string (Spark passes options as strings)
# becomes; every keyword but the session and a snapshot time (tests/catalog_service keeps the two lists equal).
OPTION_TYPES: dict[str, type] = {
    **dict.fromkeys(("data_inlining_row_limit", "snapshot_version", "ducklake_max_retry_count",
                     "ducklake_retry_wait_ms"), int),
    **dict.fromkeys(("create_if_missing", "read_only", "automatic_migration", "override_data_path", "encrypted",
                     "write_deletion_vectors"), bool),
    "ducklake_retry_backoff": float,
    **dict.fromkeys(("author", "metadata_schema", "metadata_catalog", "small_data_threshold", "ducklake_version"),
                    str),
}


def spark_catalog_conf(name: str, url: str, data_path: str | None = None, **attach_options: Any) -> dict[str, str]:
    """Every Spark conf a session needs to query the lake as catalog `name` in plain Spark SQL (`SELECT * FROM
    name.main.t`): the plugin class, its options (`url`, `data_path`, the DuckLake.attach keywords), our jar and
    the Parquet field-id confs our reads rely on. Pass it to `SparkSession.builder.config(map=...)`. The plugin
    starts `python -m spark_ducklake.catalog_service` with this interpreter (`python` option) unless
    `python=` names another."""
    if not name or not name.replace("_", "").isalnum():
        raise InvalidArgumentError(f"catalog name {name!r} must be letters, digits and underscores")
    if not CATALOG_JAR.is_file():
        raise InvalidArgumentError(f"the catalog plugin's jar {CATALOG_JAR} was not built (scripts/build_jar.sh "
                                   "needs a JDK)")
    prefix = f"spark.sql.catalog.{name}"
    conf = {prefix: CATALOG_CLASS, f"{prefix}.url": url, "spark.jars": str(CATALOG_JAR)}
    conf[f"{prefix}.python"] = str(attach_options.pop("python", None) or sys.executable)
    if data_path is not None:
        conf[f"{prefix}.data_path"] = str(data_path)
    for key, value in attach_options.items():
        _attach_value(key, str(value))  # refuse unknown keywords here, not at the first query
        if value is not None:
            conf[f"{prefix}.{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return conf | REQUIRED_CONF


def _attach_value(key: str, text: str):
    """A catalog option's string as the DuckLake.attach keyword's value."""
    kind = OPTION_TYPES.get(key)
    if kind is None:
        raise InvalidArgumentError(f"unknown catalog option {key!r} (DuckLake.attach takes no such keyword)")
    return parse_boolean(f"catalog option {key}", text) if kind is bool else kind(text)


def attach(config: dict[str, Any]) -> DuckLake:
    """The lake a plugin's options describe (`url`, `data_path`, attach keywords as strings)."""
    if not config.get("url"):
        raise InvalidArgumentError("the lake catalog needs a `url` option (the catalog database)")
    keywords = {k: _attach_value(k, str(v)) for k, v in config.items() if k not in ("url", "data_path", "python")}
    return DuckLake.attach(config["url"], config.get("data_path"), **keywords)
