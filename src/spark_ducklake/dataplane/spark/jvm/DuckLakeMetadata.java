// Metadata tables and the change feed of the lake catalog plugin (DuckLakeCatalog's loadTable / loadChangelog).
//
// `SELECT * FROM lake.s.t.snapshots` (also `.files`, `.table_info`, each with VERSION / TIMESTAMP AS OF): Spark
// resolves a four-part name to namespace (s, t) and name `snapshots`; the service computes the rows (the same as
// `CALL lake.system.<name>(...)` and the Python API) and they become a LocalScan. `SELECT * FROM lake.s.t CHANGES
// FROM VERSION 1 TO VERSION 3` (Spark 4.2+'s loadChangelog): the service computes DuckLake's `table_changes` for
// the range as one Parquet file, read by Spark's Parquet scan. Nothing here computes rows: Java converts values.
package sparkducklake;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.Changelog;
import org.apache.spark.sql.connector.catalog.ChangelogContext;
import org.apache.spark.sql.connector.catalog.ChangelogRange;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScanBuilder;
import org.apache.spark.sql.execution.streaming.runtime.MetadataLogFileIndex;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

final class DuckLakeMetadata {
    private DuckLakeMetadata() {
    }

    /** `lake.<schema>.<table>.<name>` at a snapshot: its rows, computed by the service when loaded. */
    static Table table(DuckLakeCatalog catalog, Identifier ident, String version, Long timestampMicros)
            throws NoSuchTableException {
        ObjectNode ask = DuckLakeCatalog.request("metadata");
        ask.put("namespace", ident.namespace()[0]);
        ask.put("table", ident.namespace()[1]);
        ask.put("name", ident.name());
        if (version != null) {
            ask.put("version", version);
        }
        if (timestampMicros != null) {
            ask.put("timestamp_us", timestampMicros);
        }
        JsonNode reply = catalog.service().ask(ask);
        String subject = catalog.name() + "." + String.join(".", ident.namespace()) + "." + ident.name();
        if (reply.has("error")) {
            // with VERSION / TIMESTAMP AS OF, what is missing may be the snapshot: the service's message says which
            // an unknown metadata table of a table that exists: the service's message names the ones there are
            if ("not_found".equals(reply.get("error").path("kind").asText()) && version == null
                    && timestampMicros == null
                    && !catalog.tableExists(Identifier.of(new String[] {ident.namespace()[0]}, ident.namespace()[1]))) {
                throw new NoSuchTableException(ident);
            }
            throw DuckLakeCatalog.Service.failure(reply, subject);
        }
        StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
        List<InternalRow> rows = new ArrayList<>();
        for (JsonNode row : reply.get("rows")) {
            Object[] values = new Object[schema.fields().length];
            for (int c = 0; c < values.length; c++) {
                values[c] = DuckLakeProcedures.fromJson(row.get(c), schema.fields()[c].dataType());
            }
            rows.add(new GenericInternalRow(values));
        }
        return new MetadataTable(subject, schema, rows.toArray(new InternalRow[0]));
    }

    /** A metadata table's rows, fixed when Spark loaded it (as a table is fixed at its snapshot). */
    static final class MetadataTable implements Table, SupportsRead {
        private final String name;
        private final StructType schema;
        private final InternalRow[] rows;

        MetadataTable(String name, StructType schema, InternalRow[] rows) {
            this.name = name;
            this.schema = schema;
            this.rows = rows;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public StructType schema() {
            return schema;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return () -> new DuckLakeProcedures.Result(schema, rows);
        }
    }

    /** The change feed of `CHANGES FROM ... TO ...`, computed by the service when Spark resolves the query. */
    static Changelog changelog(DuckLakeCatalog catalog, Identifier ident, ChangelogContext context)
            throws NoSuchTableException {
        if (ident.namespace().length != 1) {
            throw new NoSuchTableException(ident);
        }
        ObjectNode ask = DuckLakeCatalog.tableRequest("changes", ident);
        ChangelogRange range = context.range();
        if (range instanceof ChangelogRange.VersionRange v) {
            ask.put("start", v.startingVersion());
            v.endingVersion().ifPresent(end -> ask.put("end", end));
        } else if (range instanceof ChangelogRange.TimestampRange t) {
            ask.put("start_us", t.startingTimestamp());
            t.endingTimestamp().ifPresent(end -> ask.put("end_us", end));
        }
        ask.put("start_inclusive", range.startingBoundInclusive());
        ask.put("end_inclusive", range.endingBoundInclusive());
        JsonNode reply = catalog.service().ask(ask);
        if (reply.has("error")) {
            if ("not_found".equals(reply.get("error").path("kind").asText())
                    && !catalog.tableExists(ident)) {
                throw new NoSuchTableException(ident);
            }
            throw DuckLakeCatalog.Service.failure(reply, DuckLakeCatalog.Service.subject(ask));
        }
        StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
        String name = catalog.name() + "." + ident.namespace()[0] + "." + ident.name();
        return new LakeChangelog(name, schema, DuckLakeCatalog.fileIndex(reply.get("log").asText(), schema));
    }

    /**
     * DuckLake's `table_changes` rows: the table's columns, `rowid`, `_change_type` (insert, delete,
     * update_preimage, update_postimage: DuckLake's names are Spark's), `_commit_version` (the snapshot id) and
     * `_commit_timestamp`. Updates come as pre- and postimage already and there are no carry-over rows; a row
     * inserted and deleted within the range shows both, so Spark's netChanges mode collapses by `rowid`.
     */
    static final class LakeChangelog implements Changelog {
        private final String name;
        private final StructType schema;
        private final MetadataLogFileIndex index;

        LakeChangelog(String name, StructType schema, MetadataLogFileIndex index) {
            this.name = name;
            this.schema = schema;
            this.index = index;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Column[] columns() {
            List<Column> out = new ArrayList<>();
            for (StructField f : schema.fields()) {
                out.add(Column.create(f.name(), f.dataType(), f.nullable()));
            }
            return out.toArray(new Column[0]);
        }

        @Override
        public boolean containsCarryoverRows() {
            return false;
        }

        @Override
        public boolean containsIntermediateChanges() {
            return true;
        }

        @Override
        public boolean representsUpdateAsDeleteAndInsert() {
            return false;
        }

        @Override
        public NamedReference[] rowId() {
            return new NamedReference[] {Expressions.column("rowid")};
        }

        @Override
        public NamedReference rowVersion() {
            return Expressions.column("_commit_version");
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return new ParquetScanBuilder(SparkSession.active(), index, schema, schema, options);
        }
    }
}
