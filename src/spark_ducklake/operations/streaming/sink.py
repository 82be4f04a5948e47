"""An exactly-once Structured Streaming sink: a `foreachBatch` function committing each micro-batch once.

Each batch is one `lake.write` whose snapshot records the query id and batch id in commit_extra_info; a batch the
table already holds (Spark re-runs the last batch after a failure between our commit and its checkpoint) is
skipped. The query id is the user's (`query_id=`, like Delta's `txnAppId`) or Spark's own id, read from the
checkpoint's `metadata` file (written when the query starts, kept across restarts, new for a new checkpoint).
The function is pickled to wherever Spark runs it (the Spark Connect server's Python worker over Connect), so it
carries a reference to the attach string (catalog_ref.py: a file when it holds a password, never the password,
which a Connect plan would show), not a lake handle, and attaches there.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field

from ...catalog.attach import AttachOptions
from ...catalog.changes.stream_guards import BatchAlreadyCommitted, GuardBatch, batch_info, holds_batch
from ...dataplane.arrow.storage import filesystem
from ...dataplane.spark import session as spark_session
from ...spec.arguments import OutputMode, StreamWriteMode
from ...spec.commit_properties import CommitProperties
from ...spec.names import parse_table_name as split_name
from ..context import LakeContext
from ..transaction import transaction
from .catalog_ref import CatalogRef, attach_string

log = logging.getLogger(__name__)
# A Spark Connect server waits a fixed 10 s (PythonWorkerFactory) for the Python process running a foreachBatch
# function to start and connect back; a busy server's Python (pyspark.sql.connect imports pandas, grpc, pyarrow)
# can take longer. Nothing has started when `start()` fails that way, so starting again is safe.
WORKER_TIMEOUT = "Python worker failed to connect back"
START_ATTEMPTS = 3


@dataclass
class StreamBatchWriter:
    """`(batch_df, batch_id) -> None` for `writeStream.foreachBatch`, writing each batch into a table once."""

    catalog: CatalogRef  # where the attach string is found: never the password itself
    data_path: str
    table: str
    query_id: str | None = None
    checkpoint_location: str | None = None
    mode: StreamWriteMode = "append"
    merge_schema: bool = False
    commit_message: str | None = None
    author: str | None = None
    data_inlining_row_limit: int | None = None
    metadata_schema: str | None = None  # the lake's METADATA_SCHEMA, when it has one
    _resolved_id: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.query_id and not self.checkpoint_location:
            raise ValueError("a stream writer needs query_id= (a name unique to the query, kept across restarts) "
                             "or checkpoint_location= (the query's checkpoint, holding Spark's query id)")
        if self.mode not in ("append", "overwrite"):
            raise ValueError(f"a stream writer's mode is 'append' or 'overwrite', got {self.mode!r}")

    def __call__(self, batch_df, batch_id: int) -> None:
        """Commit the batch unless the table already holds it."""
        query = self.resolve_query_id()
        spark = spark_session.get_or_create_spark(batch_df.sparkSession)
        ctx = LakeContext.attach(self.catalog.resolve(), AttachOptions(
            data_path=self.data_path, create_if_missing=False, data_inlining_row_limit=self.data_inlining_row_limit,
            author=self.author, metadata_schema=self.metadata_schema,
            override_data_path=True), spark=spark)  # the writing lake's own data path
        try:
            with ctx.engine.connect() as conn:  # cheap early skip; GuardBatch decides inside the commit
                if holds_batch(conn, query, self.table, batch_id):
                    return
            properties = CommitProperties(self.author, self.commit_message, batch_info(query, self.table, batch_id))
            try:
                with transaction(ctx, properties) as tx:
                    tx.guard(GuardBatch(query, self.table, batch_id))
                    tx.write(batch_df, self.table, self.mode, merge_schema=self.merge_schema)
            except BatchAlreadyCommitted:
                return
        finally:
            ctx.close()

    def resolve_query_id(self) -> str:
        """The query id batches are recorded under."""
        if self.query_id:
            return self.query_id
        if self._resolved_id is None:
            self._resolved_id = checkpoint_query_id(self.checkpoint_location)  # type: ignore[arg-type]  # __post_init__
        return self._resolved_id


def checkpoint_query_id(checkpoint_location: str) -> str:
    """Spark's id of the query owning a checkpoint (its `metadata` file: `{"id": "..."}`)."""
    path = _arrow_path(checkpoint_location).rstrip("/") + "/metadata"
    fs, inner = filesystem(path)
    try:
        with fs.open_input_stream(inner) as fh:
            text = fh.read().decode("utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise FileNotFoundError(f"no streaming query metadata at {path}: pass the checkpoint of the running query, "
                                "or query_id=") from exc
    return json.loads(text.splitlines()[0])["id"]


def _arrow_path(location: str) -> str:
    """A checkpoint location as pyarrow's file systems take it (Spark's `file:` and `s3a://` forms undone)."""
    if location.startswith("s3a://"):
        return "s3://" + location[len("s3a://"):]
    if location.startswith("file://"):
        return location[len("file://"):]
    if location.startswith("file:"):
        return location[len("file:"):]
    return location


def checkpoint_path(location: str) -> str:
    """Local checkpoint paths made absolute, so that Spark (maybe a Connect server elsewhere) and the sink agree."""
    return location if "://" in location or location.startswith("file:") else os.path.abspath(location)


def stream_writer(ctx, table: str, *, query_id: str | None = None, checkpoint_location: str | None = None,
                  mode: StreamWriteMode = "append", merge_schema: bool = False, commit_message: str | None = None,
                  author: str | None = None) -> StreamBatchWriter:
    """The foreachBatch function writing into `table` of this lake exactly once per batch."""
    ctx.check_writable()
    schema, name = split_name(table)
    return StreamBatchWriter(
        catalog=CatalogRef.of(attach_string(ctx)), data_path=ctx.data_path, table=f"{schema}.{name}", query_id=query_id,
        checkpoint_location=checkpoint_path(checkpoint_location) if checkpoint_location else None, mode=mode,
        merge_schema=merge_schema, commit_message=commit_message, author=author or ctx.author,
        data_inlining_row_limit=ctx.data_inlining_row_limit, metadata_schema=ctx.location.metadata_schema)


def write_stream(ctx, df, table: str, *, checkpoint_location: str, trigger=None, query_id: str | None = None,
                 query_name: str | None = None, output_mode: OutputMode = "append", mode: StreamWriteMode = "append",
                 merge_schema: bool = False, commit_message: str | None = None, author: str | None = None):
    """Start a streaming query writing `df` into `table` through `stream_writer`; returns the StreamingQuery.

    `trigger`: None (Spark's default), a processing-time string ('10 seconds'), or DataStreamWriter.trigger
    keyword arguments as a dict ({'availableNow': True}, {'once': True}, {'processingTime': '1 minute'}).
    """
    location = checkpoint_path(checkpoint_location)
    writer = stream_writer(ctx, table, query_id=query_id, checkpoint_location=location, mode=mode,
                           merge_schema=merge_schema, commit_message=commit_message, author=author)
    stream = df.writeStream.foreachBatch(writer).outputMode(output_mode).option("checkpointLocation", location)
    if query_name:
        stream = stream.queryName(query_name)
    if isinstance(trigger, str):
        stream = stream.trigger(processingTime=trigger)
    elif trigger:
        stream = stream.trigger(**trigger)
    return start_query(stream)


def start_query(stream):
    """`stream.start()`, started again (up to START_ATTEMPTS times in all) when a Connect server's Python worker for
    the foreachBatch function did not connect back in time."""
    for attempt in range(1, START_ATTEMPTS):
        try:
            return stream.start()
        except Exception as e:
            if WORKER_TIMEOUT not in str(e):
                raise
            log.warning("the streaming query's Python worker did not connect back in time (attempt %d of %d); "
                        "starting it again", attempt, START_ATTEMPTS)
    return stream.start()
