// spark-ducklake's Spark catalog plugin: lake tables in plain Spark SQL (`spark.sql.catalog.lake`).
//
// A thin DSv2 adapter: every DuckLake question (schemas, tables, a table's schema at a snapshot, which files a
// scan reads) goes to our Python catalog service (spark_ducklake/catalog_service/), which this class starts as
// a child process (`<python> -m spark_ducklake.catalog_service`, the `python` option) on first use, so it works
// where no Python driver runs (Thrift server, Spark Connect server). Data moves through Spark's own Parquet scan
// (ParquetScanBuilder over a MetadataLogFileIndex of the service's file-sink log), read by Parquet field id.
// Errors reach the user as Spark's own exceptions (NoSuchTableException, TableAlreadyExistsException, ...) or an
// AnalysisException naming the table and the cause the service gave, never a stack trace of ours.
// Built by scripts/build_jar.sh against the pyspark wheel's jars (Spark 4.x) into spark-ducklake-catalog.jar.
package sparkducklake;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Changelog;
import org.apache.spark.sql.connector.catalog.ChangelogContext;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.TruncatableTable;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwrite;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScanBuilder;
import org.apache.spark.sql.execution.streaming.runtime.MetadataLogFileIndex;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;
import scala.Option;

public class DuckLakeCatalog implements StagingTableCatalog, SupportsNamespaces, ProcedureCatalog {
    private static final ObjectMapper JSON = new ObjectMapper();
    private String name;
    private Map<String, String> options;
    private Service service;

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        this.name = name;
        this.options = new LinkedHashMap<>(options.asCaseSensitiveMap());
    }

    @Override
    public String name() {
        return name;
    }

    // One service per set of catalog options in this JVM: a Thrift or Connect server makes a catalog per session.
    private static final Map<Map<String, String>, Service> SERVICES = new HashMap<>();

    /** The catalog service, started on first use (a catalog Spark never queries starts no process). */
    synchronized Service service() {
        if (service == null) {
            synchronized (SERVICES) {
                service = SERVICES.get(options);
                if (service == null || !service.process.isAlive()) {
                    service = Service.start(options);
                    SERVICES.put(new HashMap<>(options), service);
                }
            }
        }
        return service;
    }

    // ---- CALL <catalog>.system.<name>(...): the maintenance and metadata procedures (DuckLakeProcedures.java)
    @Override
    public UnboundProcedure loadProcedure(Identifier ident) {
        return DuckLakeProcedures.load(this, ident);
    }

    @Override
    public Identifier[] listProcedures(String[] namespace) {
        return DuckLakeProcedures.list(this, namespace);
    }

    // ---- namespaces: the lake's schemas (one level)
    @Override
    public String[][] listNamespaces() {
        List<String[]> out = new ArrayList<>();
        for (JsonNode n : service().call(request("namespaces")).get("namespaces")) {
            out.add(new String[] {n.asText()});
        }
        return out.toArray(new String[0][]);
    }

    @Override
    public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
        requireNamespace(namespace);
        return new String[0][];
    }

    @Override
    public boolean namespaceExists(String[] namespace) {
        if (namespace.length != 1) {
            return false;
        }
        for (String[] known : listNamespaces()) {
            if (known[0].equals(namespace[0])) {
                return true;
            }
        }
        return false;
    }

    @Override
    public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
        requireNamespace(namespace);
        return Collections.emptyMap();
    }

    private void requireNamespace(String[] namespace) throws NoSuchNamespaceException {
        if (!namespaceExists(namespace)) {
            throw new NoSuchNamespaceException(namespace);
        }
    }

    @Override
    public void createNamespace(String[] namespace, Map<String, String> metadata) {
        if (namespace.length != 1) {
            throw analysis("UNSUPPORTED", String.join(".", namespace), "lake schemas are one level");
        }
        ObjectNode ask = request("create_namespace");
        ask.put("namespace", namespace[0]);
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            if ("exists".equals(reply.get("error").path("kind").asText())) {
                throw sneaky(new NamespaceAlreadyExistsException(namespace));
            }
            throw Service.failure(reply, namespace[0]);
        }
    }

    @Override
    public void alterNamespace(String[] namespace, NamespaceChange... changes) {
        throw notYet("ALTER NAMESPACE");
    }

    @Override
    public boolean dropNamespace(String[] namespace, boolean cascade) {
        if (!namespaceExists(namespace)) {
            return false;
        }
        ObjectNode ask = request("drop_namespace");
        ask.put("namespace", namespace[0]);
        ask.put("cascade", cascade);
        service().call(ask);
        return true;
    }

    // ---- tables
    @Override
    public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
        if (namespace.length != 1) {
            throw new NoSuchNamespaceException(namespace);
        }
        ObjectNode ask = request("tables");
        ask.put("namespace", namespace[0]);
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            if ("not_found".equals(reply.get("error").path("kind").asText())) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw Service.failure(reply, Service.subject(ask));
        }
        List<Identifier> out = new ArrayList<>();
        for (JsonNode t : reply.get("tables")) {
            out.add(Identifier.of(namespace, t.asText()));
        }
        return out.toArray(new Identifier[0]);
    }

    @Override
    public Table loadTable(Identifier ident) throws NoSuchTableException {
        return load(ident, null, null);
    }

    @Override
    public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
        return load(ident, version, null);
    }

    @Override
    public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
        return load(ident, null, timestamp);
    }

    private Table load(Identifier ident, String version, Long timestampMicros) throws NoSuchTableException {
        if (ident.namespace().length == 2) {  // lake.<schema>.<table>.<metadata table>
            return DuckLakeMetadata.table(this, ident, version, timestampMicros);
        }
        if (ident.namespace().length != 1) {
            throw new NoSuchTableException(ident);
        }
        ObjectNode ask = request("table");
        ask.put("namespace", ident.namespace()[0]);
        ask.put("table", ident.name());
        if (version != null) {
            ask.put("version", version);
        }
        if (timestampMicros != null) {
            ask.put("timestamp_us", timestampMicros);
        }
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            // with VERSION / TIMESTAMP AS OF, what is missing may be the snapshot: the service's message says which
            if ("not_found".equals(reply.get("error").path("kind").asText()) && version == null
                    && timestampMicros == null) {
                throw new NoSuchTableException(ident);
            }
            throw Service.failure(reply, Service.subject(ask));
        }
        StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
        return new LakeTable(this, ident, schema, reply.get("snapshot").asLong(),
                             partitioning(reply.path("partitioning")));
    }

    /** `SELECT * FROM lake.s.t CHANGES FROM VERSION 1 TO VERSION 3`: DuckLake's change feed (DuckLakeMetadata). */
    @Override
    public Changelog loadChangelog(Identifier ident, ChangelogContext context, CaseInsensitiveStringMap options)
            throws NoSuchTableException {
        return DuckLakeMetadata.changelog(this, ident, context);
    }

    @Override
    public Table createTable(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        ObjectNode ask = tableRequest("create_table", ident);
        ask.put("schema", schema.json());
        ask.set("partitioning", transforms(partitions));
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            String kind = reply.get("error").path("kind").asText();
            if ("exists".equals(kind)) {
                throw new TableAlreadyExistsException(ident);
            }
            if ("not_found".equals(kind)) {
                throw new NoSuchNamespaceException(ident.namespace());
            }
            throw Service.failure(reply, Service.subject(ask));
        }
        try {
            return loadTable(ident);
        } catch (NoSuchTableException e) {
            throw analysis("ERROR", ident.toString(), "created but cannot be loaded");
        }
    }

    @Override
    public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
        ObjectNode ask = tableRequest("alter_table", ident);
        ArrayNode out = ask.putArray("changes");
        for (TableChange change : changes) {
            out.add(alteration(change));
        }
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            if ("not_found".equals(reply.get("error").path("kind").asText()) && !tableExists(ident)) {
                throw new NoSuchTableException(ident);
            }
            throw Service.failure(reply, Service.subject(ask));
        }
        return loadTable(ident);
    }

    /** One ALTER TABLE change as the service takes it; what it does not take is named, and refused there. */
    static ObjectNode alteration(TableChange change) {
        ObjectNode node = JSON.createObjectNode();
        if (change instanceof TableChange.ColumnChange column) {
            node.put("column", String.join(".", column.fieldNames()));
        }
        if (change instanceof TableChange.AddColumn add && add.position() == null && add.defaultValue() == null) {
            node.put("change", "add");
            node.put("type", add.dataType().json());
            node.put("nullable", add.isNullable());
        } else if (change instanceof TableChange.DeleteColumn) {
            node.put("change", "drop");
        } else if (change instanceof TableChange.RenameColumn rename) {
            node.put("change", "rename");
            node.put("new_name", rename.newName());
        } else if (change instanceof TableChange.UpdateColumnType type) {
            node.put("change", "type");
            node.put("type", type.newDataType().json());
        } else if (change instanceof TableChange.UpdateColumnNullability nullability) {
            node.put("change", "nullable");
            node.put("nullable", nullability.nullable());
        } else {
            node.put("change", "other");
            node.put("what", change.getClass().getSimpleName() + (change instanceof TableChange.AddColumn
                    ? " with a position or a default" : ""));
        }
        return node;
    }

    /** The service's partition keys (catalog_service/partitioning.py) as Spark transforms: Spark then shows
     *  them (DESCRIBE) and resolves INSERT ... PARTITION (column = value) against the identity ones. */
    static Transform[] partitioning(JsonNode keys) {
        List<Transform> out = new ArrayList<>();
        for (JsonNode key : keys) {
            String column = key.get("column").asText();
            out.add(switch (key.get("transform").asText()) {
                case "identity" -> Expressions.identity(column);
                case "bucket" -> Expressions.bucket(key.get("buckets").asInt(), column);
                case "years" -> Expressions.years(column);
                case "months" -> Expressions.months(column);
                case "days" -> Expressions.days(column);
                case "hours" -> Expressions.hours(column);
                default -> Expressions.apply(key.get("transform").asText(),
                                             new Expression[] {Expressions.column(column)});
            });
        }
        return out.toArray(new Transform[0]);
    }

    /** PARTITIONED BY's transforms as the service takes them (it maps them to DuckLake partition keys). */
    static ArrayNode transforms(Transform[] partitions) {
        ArrayNode out = JSON.createArrayNode();
        for (Transform t : partitions == null ? new Transform[0] : partitions) {
            ObjectNode node = out.addObject();
            node.put("transform", t.name());
            node.put("text", t.describe());
            NamedReference[] refs = t.references();
            if (refs.length == 1) {
                node.put("column", String.join(".", refs[0].fieldNames()));
            }
            for (var arg : t.arguments()) {
                if (arg instanceof Literal<?> literal && literal.value() instanceof Number n) {
                    node.put("buckets", n.intValue());
                }
            }
        }
        return out;
    }

    @Override
    public boolean dropTable(Identifier ident) {
        if (ident.namespace().length != 1) {
            return false;
        }
        ObjectNode ask = tableRequest("drop_table", ident);
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            if ("not_found".equals(reply.get("error").path("kind").asText())) {
                return false;
            }
            throw Service.failure(reply, Service.subject(ask));
        }
        return true;
    }

    // ---- CTAS / RTAS / createOrReplace: the table is created (or replaced) in the snapshot of its rows
    @Override
    public StagedTable stageCreate(Identifier ident, StructType schema, Transform[] partitions,
                                   Map<String, String> properties) throws TableAlreadyExistsException {
        if (tableExists(ident)) {
            throw new TableAlreadyExistsException(ident);
        }
        return new StagedLakeTable(this, ident, schema, partitions, false);
    }

    @Override
    public StagedTable stageReplace(Identifier ident, StructType schema, Transform[] partitions,
                                    Map<String, String> properties) throws NoSuchTableException {
        if (!tableExists(ident)) {
            throw new NoSuchTableException(ident);
        }
        return new StagedLakeTable(this, ident, schema, partitions, true);
    }

    @Override
    public StagedTable stageCreateOrReplace(Identifier ident, StructType schema, Transform[] partitions,
                                           Map<String, String> properties) {
        return new StagedLakeTable(this, ident, schema, partitions, true);
    }

    static ObjectNode tableRequest(String op, Identifier ident) {
        ObjectNode ask = request(op);
        if (ident.namespace().length != 1) {
            throw analysis("UNSUPPORTED", ident.toString(), "lake tables are <schema>.<table>");
        }
        ask.put("namespace", ident.namespace()[0]);
        ask.put("table", ident.name());
        return ask;
    }

    @Override
    public void renameTable(Identifier oldName, Identifier newName) throws NoSuchTableException {
        String[] target = newName.namespace();
        if (target.length == 2 && target[0].equals(name)) {  // RENAME TO lake.s.t2: Spark keeps the catalog part
            newName = Identifier.of(new String[] {target[1]}, newName.name());
        }
        if (newName.namespace().length == 0) {  // RENAME TO t2: the table's own schema
            newName = Identifier.of(oldName.namespace(), newName.name());
        }
        if (!java.util.Arrays.equals(oldName.namespace(), newName.namespace())) {
            throw analysis("UNSUPPORTED", oldName.toString(), "a lake table is renamed within its schema, not to "
                    + newName);
        }
        ObjectNode ask = tableRequest("rename_table", oldName);
        ask.put("new_name", newName.name());
        JsonNode reply = service().ask(ask);
        if (reply.has("error")) {
            String kind = reply.get("error").path("kind").asText();
            if ("not_found".equals(kind)) {
                throw new NoSuchTableException(oldName);
            }
            if ("exists".equals(kind)) {
                throw sneaky(new TableAlreadyExistsException(newName));
            }
            throw Service.failure(reply, oldName.toString());
        }
    }

    private static RuntimeException notYet(String what) {
        return analysis("UNSUPPORTED", what, "not supported through the lake catalog yet; use the DuckLake Python API");
    }

    /** Spark's AnalysisException with our message: `[DUCKLAKE_<KIND>] <subject>: <cause>`, its stack trace cut to
     *  Spark's frames: the Thrift Server sends an error's whole trace to the client (beeline prints it), and there
     *  the user sees Spark's analysis error as for Spark's own errors, not the plugin's insides. */
    static RuntimeException analysis(String kind, String subject, String cause) {
        String message = "[DUCKLAKE_" + kind.toUpperCase(java.util.Locale.ROOT) + "] " + subject + ": " + cause;
        AnalysisException error = new AnalysisException(message, Option.empty(), Option.empty(), Option.empty(),
                Option.empty(), scala.collection.immutable.Map$.MODULE$.<String, String>empty(), new QueryContext[0]);
        error.setStackTrace(java.util.Arrays.stream(error.getStackTrace())
                .filter(frame -> !frame.getClassName().startsWith("sparkducklake."))
                .toArray(StackTraceElement[]::new));
        return sneaky(error);
    }

    /** Throws a checked Spark exception (AnalysisException and its kin) from code Spark's interfaces declare
     *  no checked exceptions for; the return type lets callers write `throw sneaky(e)`. */
    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
        throw (E) e;
    }

    static ObjectNode request(String op) {
        ObjectNode node = JSON.createObjectNode();
        node.put("op", op);
        return node;
    }

    /** A lake table at one snapshot (resolved when Spark loaded it), read with Spark's Parquet scan. */
    static final class LakeTable implements Table, SupportsRead, SupportsWrite, SupportsRowLevelOperations,
            SupportsMetadataColumns, TruncatableTable {
        private final DuckLakeCatalog catalog;
        private final Identifier ident;
        private final StructType schema;
        private final long snapshot;
        private final Transform[] partitioning;

        LakeTable(DuckLakeCatalog catalog, Identifier ident, StructType schema, long snapshot,
                  Transform[] partitioning) {
            this.catalog = catalog;
            this.ident = ident;
            this.schema = schema;
            this.snapshot = snapshot;
            this.partitioning = partitioning;
        }

        @Override
        public Transform[] partitioning() {
            return partitioning.clone();
        }

        @Override
        public String name() {
            return catalog.name() + "." + String.join(".", ident.namespace()) + "." + ident.name();
        }

        @Override
        public StructType schema() {
            return schema;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE,
                              TableCapability.OVERWRITE_BY_FILTER, TableCapability.OVERWRITE_DYNAMIC);
        }

        @Override
        public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            return new LakeWriteBuilder(catalog, ident, null);
        }

        @Override
        public Map<String, String> properties() {
            Map<String, String> props = new HashMap<>();
            props.put("ducklake.snapshot", Long.toString(snapshot));
            return props;
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return new LakeScanBuilder(this, options);
        }

        // ---- DELETE / UPDATE / MERGE, merge-on-read (DuckLakeRowLevel.java): rows found by `_file` and `_pos`
        @Override
        public MetadataColumn[] metadataColumns() {
            return DuckLakeRowLevel.METADATA;
        }

        @Override
        public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
            return () -> new DuckLakeRowLevel.Operation(catalog, ident, snapshot, this, info.command());
        }

        /** DELETE FROM without WHERE (and TRUNCATE TABLE): every row goes, nothing is scanned. */
        @Override
        public boolean truncateTable() {
            DuckLakeRowLevel.truncate(catalog, ident);
            return true;
        }

        /** Spark's Parquet scan of the files the catalog plans for the pushed filters (pruned by its statistics);
         *  `deletes` gets each file's deleted positions, `rowIndex` adds Spark's row-index column to the files'. */
        ScanBuilder parquetScan(CaseInsensitiveStringMap options, Filter[] filters, Map<String, long[]> deletes,
                                boolean rowIndex) {
            ObjectNode ask = request("scan");
            ask.put("namespace", ident.namespace()[0]);
            ask.put("table", ident.name());
            ask.put("snapshot", snapshot);
            ArrayNode conditions = ask.putArray("filters");
            for (Filter filter : filters) {
                ObjectNode condition = condition(filter);
                if (condition != null) {  // a filter left out only prunes less: Spark still applies all of them
                    conditions.add(condition);
                }
            }
            JsonNode reply = catalog.service().call(ask);
            deletes.putAll(DuckLakeRowLevel.deletes(reply));
            StructType data = rowIndex ? schema.add(DuckLakeRowLevel.ROW_INDEX) : schema;
            SparkSession session = SparkSession.active();
            MetadataLogFileIndex index = fileIndex(reply.get("log").asText(), schema);
            if (reply.path("names_stable").asBoolean(true)) {
                return new ParquetScanBuilder(session, index, data, data, options);
            }
            return new ByFieldIdOnly(session, index, data, options);
        }

        @Override
        public String toString() {
            return "DuckLakeTable(" + name() + " @ snapshot " + snapshot + ")";
        }
    }

    /** Spark's file index over the files a service's file-sink log lists (the log is removed once read). */
    static MetadataLogFileIndex fileIndex(String logPath, StructType schema) {
        SparkSession session = SparkSession.active();
        Path log = new Path(logPath);
        // recursiveFileLookup: no partition inference from Hive-style folders (the schema is the table's).
        scala.collection.immutable.Map<String, String> params =
                scala.collection.immutable.Map$.MODULE$.<String, String>empty().updated("recursiveFileLookup", "true");
        MetadataLogFileIndex index = new MetadataLogFileIndex(session, log, params, Option.apply(schema));
        try {  // the index read the log when built: it is no longer needed
            log.getFileSystem(session.sessionState().newHadoopConf()).delete(log, true);
        } catch (IOException e) {
            // the service removes its whole log folder when it ends
        }
        return index;
    }

    /** A table CTAS / RTAS / createOrReplace writes: created (or replaced) with its rows in one snapshot. */
    static final class StagedLakeTable implements StagedTable, SupportsWrite {
        private final DuckLakeCatalog catalog;
        private final Identifier ident;
        private final StructType schema;
        private final ObjectNode create = JSON.createObjectNode();
        private LakeBatchWrite written;

        StagedLakeTable(DuckLakeCatalog catalog, Identifier ident, StructType schema, Transform[] partitions,
                        boolean replace) {
            this.catalog = catalog;
            this.ident = ident;
            this.schema = schema;
            create.put("schema", schema.json());
            create.set("partitioning", transforms(partitions));
            create.put("replace", replace);
        }

        @Override
        public String name() {
            return catalog.name() + "." + String.join(".", ident.namespace()) + "." + ident.name();
        }

        @Override
        public StructType schema() {
            return schema;
        }

        @Override
        public Set<TableCapability> capabilities() {  // RTAS truncates the (new) table it writes
            return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
        }

        @Override
        public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            return new LakeWriteBuilder(catalog, ident, this);
        }

        @Override
        public void commitStagedChanges() {
            ObjectNode ask = tableRequest("commit_write", ident);
            ask.set("create", create);
            if (written != null) {
                written.fill(ask);
            } else {
                ask.put("staging", "");
            }
            catalog.service().call(ask);
        }

        @Override
        public void abortStagedChanges() {
            if (written != null) {
                written.abort(null);
            }
        }
    }

    /** INSERT INTO / OVERWRITE, writeTo(...).append / overwrite / overwritePartitions: how rows replace others. */
    static final class LakeWriteBuilder implements SupportsOverwrite, SupportsDynamicOverwrite {
        private final DuckLakeCatalog catalog;
        private final Identifier ident;
        private final StagedLakeTable staged;
        private String mode = "append";
        private ArrayNode filters;

        LakeWriteBuilder(DuckLakeCatalog catalog, Identifier ident, StagedLakeTable staged) {
            this.catalog = catalog;
            this.ident = ident;
            this.staged = staged;
        }

        @Override
        public WriteBuilder truncate() {
            mode = "truncate";
            return this;
        }

        @Override
        public WriteBuilder overwriteDynamicPartitions() {
            mode = "dynamic";  // the service refuses it for partitioned tables; on the others, all rows are replaced
            return this;
        }

        @Override
        public WriteBuilder overwrite(Filter[] conditions) {
            mode = "overwrite";
            filters = JSON.createArrayNode();
            for (Filter filter : conditions) {
                ObjectNode condition = condition(filter);
                if (condition == null) {  // replacing more rows than asked is never right
                    throw analysis("UNSUPPORTED", ident.toString(), "an overwrite condition the lake catalog "
                            + "cannot pass on exactly: " + filter);
                }
                filters.add(condition);
            }
            return this;
        }

        @Override
        public Write build() {
            LakeWriteBuilder builder = this;
            return new Write() {
                @Override
                public BatchWrite toBatch() {
                    ObjectNode ask = tableRequest("begin_write", ident);
                    if (staged != null) {
                        ask.set("create", staged.create);
                    }
                    LakeBatchWrite write = new LakeBatchWrite(builder, catalog.service().call(ask));
                    if (staged != null) {
                        staged.written = write;
                    }
                    return write;
                }

                @Override
                public String description() {
                    return "DuckLakeWrite(" + ident + ", " + mode + ")";
                }
            };
        }
    }

    /**
     * Spark's own Parquet writer (ParquetFileFormat's OutputWriterFactory, the table's schema with DuckLake field
     * ids, the lake's Parquet options) writes each task's rows to one file in the staging folder the service
     * handed out; the commit hands the committed tasks' files to the service, which commits them (footers read
     * there) as one snapshot. A failed job, or a failed commit, deletes them: they never become visible.
     */
    static final class LakeBatchWrite implements BatchWrite {
        private final LakeWriteBuilder builder;
        private final String staging;
        private final StructType schema;
        private final Map<String, String> options = new HashMap<>();
        private final List<String> files = new ArrayList<>();

        LakeBatchWrite(LakeWriteBuilder builder, JsonNode plan) {
            this.builder = builder;
            this.staging = plan.get("staging").asText();
            this.schema = (StructType) DataType.fromJson(plan.get("schema").asText());
            plan.get("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        }

        @Override
        public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            SparkSession session = SparkSession.active();
            scala.collection.immutable.Map<String, String> opts = scala.collection.immutable.Map$.MODULE$.empty();
            for (Map.Entry<String, String> e : options.entrySet()) {
                opts = opts.updated(e.getKey(), e.getValue());
            }
            try {
                Job job = Job.getInstance(session.sessionState().newHadoopConfWithOptions(opts));
                OutputWriterFactory factory = new ParquetFileFormat().prepareWrite(session, job, opts, schema);
                return new LakeWriterFactory(factory, new SerializableConfiguration(job.getConfiguration()),
                                             staging, schema, UUID.randomUUID().toString());
            } catch (IOException e) {
                throw analysis("ERROR", builder.ident.toString(), "cannot set up the Parquet writer: " + e);
            }
        }

        @Override
        public boolean useCommitCoordinator() {
            return true;  // one committed attempt per task: its file is the one the commit names
        }

        @Override
        public void commit(WriterCommitMessage[] messages) {
            for (WriterCommitMessage m : messages) {
                if (m instanceof WrittenFile f && f.path != null) {
                    files.add(f.path);
                }
            }
            if (builder.staged != null) {
                return;  // CTAS / RTAS: commitStagedChanges commits the table and its rows together
            }
            ObjectNode ask = tableRequest("commit_write", builder.ident);
            fill(ask);
            builder.catalog.service().call(ask);  // the service deletes the files if the commit fails
        }

        void fill(ObjectNode ask) {
            ask.put("staging", staging);
            ask.put("mode", builder.mode);
            if (builder.filters != null) {
                ask.set("filters", builder.filters);
            }
            ArrayNode out = ask.putArray("files");
            files.forEach(out::add);
        }

        @Override
        public void abort(WriterCommitMessage[] messages) {
            try {
                Path dir = new Path(staging);
                dir.getFileSystem(SparkSession.active().sessionState().newHadoopConf()).delete(dir, true);
            } catch (IOException e) {
                // the files were never committed: nobody reads them; cleanup_old_files-style removal is manual
            }
        }
    }

    /** The path of the file one task wrote (null: the task had no rows). */
    static final class WrittenFile implements WriterCommitMessage {
        final String path;

        WrittenFile(String path) {
            this.path = path;
        }
    }

    static final class LakeWriterFactory implements DataWriterFactory {
        private final OutputWriterFactory factory;
        private final SerializableConfiguration conf;
        private final String staging;
        private final StructType schema;
        private final String jobId;

        LakeWriterFactory(OutputWriterFactory factory, SerializableConfiguration conf, String staging,
                          StructType schema, String jobId) {
            this.factory = factory;
            this.conf = conf;
            this.staging = staging;
            this.schema = schema;
            this.jobId = jobId;
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
            return new DataWriter<InternalRow>() {
                private OutputWriter writer;
                private String path;

                @Override
                public void write(InternalRow row) throws IOException {
                    if (writer == null) {  // opened on the first row: a task without rows writes no file
                        Configuration hadoop = conf.value();
                        TaskAttemptID attempt = new TaskAttemptID(new TaskID(new JobID(jobId, 0), TaskType.MAP,
                                                                             partitionId), (int) taskId);
                        path = staging + String.format("part-%05d-%d-%s.parquet", partitionId, taskId,
                                                       UUID.randomUUID());
                        writer = factory.newInstance(path, schema, new TaskAttemptContextImpl(hadoop, attempt));
                    }
                    writer.write(row);
                }

                @Override
                public WriterCommitMessage commit() {
                    if (writer != null) {
                        writer.close();
                    }
                    return new WrittenFile(path);
                }

                @Override
                public void abort() throws IOException {
                    if (writer != null) {
                        try {
                            writer.close();
                        } finally {
                            Path file = new Path(path);
                            file.getFileSystem(conf.value()).delete(file, false);
                        }
                    }
                }

                @Override
                public void close() {
                }
            };
        }
    }

    /** A conjunct the catalog can prune files with (a top-level column; integers, doubles, strings, booleans). */
    static ObjectNode condition(Filter filter) {
        String column;
        String op;
        Object[] values;
        if (filter instanceof EqualTo f) { column = f.attribute(); op = "="; values = new Object[] {f.value()}; }
        // INSERT OVERWRITE ... PARTITION (c = v) replaces the rows where c <=> v: = for a value, IS NULL for NULL
        else if (filter instanceof EqualNullSafe f && f.value() != null) { column = f.attribute(); op = "="; values = new Object[] {f.value()}; }
        else if (filter instanceof EqualNullSafe f) { column = f.attribute(); op = "is_null"; values = new Object[0]; }
        else if (filter instanceof GreaterThan f) { column = f.attribute(); op = ">"; values = new Object[] {f.value()}; }
        else if (filter instanceof GreaterThanOrEqual f) { column = f.attribute(); op = ">="; values = new Object[] {f.value()}; }
        else if (filter instanceof LessThan f) { column = f.attribute(); op = "<"; values = new Object[] {f.value()}; }
        else if (filter instanceof LessThanOrEqual f) { column = f.attribute(); op = "<="; values = new Object[] {f.value()}; }
        else if (filter instanceof In f) { column = f.attribute(); op = "in"; values = f.values(); }
        else if (filter instanceof IsNull f) { column = f.attribute(); op = "is_null"; values = new Object[0]; }
        else if (filter instanceof IsNotNull f) { column = f.attribute(); op = "not_null"; values = new Object[0]; }
        else { return null; }
        if (column.contains(".") || column.contains("`")) {
            return null;  // a nested field (or a quoted name): the catalog prunes on top-level columns
        }
        ObjectNode node = JSON.createObjectNode();
        node.put("column", column);
        node.put("op", op);
        ArrayNode out = node.putArray("values");
        for (Object v : values) {
            if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
                out.add(((Number) v).longValue());
            } else if (v instanceof Double d) {  // exact through JSON; floats and decimals would round
                out.add(d);
            } else if (v instanceof String || v instanceof Boolean) {
                out.add(JSON.valueToTree(v));
            } else {
                return null;  // floats, decimals, dates, timestamps, binary: not pruned on in this slice
            }
        }
        return node;
    }

    /** Filters and columns Spark pushes, then Spark's Parquet scan over the files the catalog keeps for them. */
    static final class LakeScanBuilder implements ScanBuilder, SupportsPushDownFilters,
            SupportsPushDownRequiredColumns {
        private final LakeTable table;
        private final CaseInsensitiveStringMap options;
        private Filter[] filters = new Filter[0];
        private StructType required;

        LakeScanBuilder(LakeTable table, CaseInsensitiveStringMap options) {
            this.table = table;
            this.options = options;
        }

        @Override
        public Filter[] pushFilters(Filter[] filters) {
            this.filters = filters;
            return filters;  // pruning and row-group filters only skip data: Spark checks every row after the scan
        }

        @Override
        public Filter[] pushedFilters() {
            return filters;
        }

        @Override
        public void pruneColumns(StructType requiredSchema) {
            this.required = requiredSchema;
        }

        @Override
        public Scan build() {
            boolean metadata = DuckLakeRowLevel.wants(required, DuckLakeRowLevel.FILE)
                    || DuckLakeRowLevel.wants(required, DuckLakeRowLevel.POS);
            List<Filter> onData = new ArrayList<>();
            for (Filter f : filters) {  // filters on `_file` / `_pos` are Spark's to apply, after the scan
                if (!Arrays.asList(f.references()).contains(DuckLakeRowLevel.FILE)
                        && !Arrays.asList(f.references()).contains(DuckLakeRowLevel.POS)) {
                    onData.add(f);
                }
            }
            Filter[] pushed = onData.toArray(new Filter[0]);
            java.util.HashMap<String, long[]> deletes = new java.util.HashMap<>();
            // The files' schema offers Spark's row-index column; a scan with neither deletes nor metadata columns
            // prunes it away again and stays Spark's plain (columnar) Parquet scan.
            ParquetScanBuilder builder = (ParquetScanBuilder) table.parquetScan(options, pushed, deletes, true);
            StructType data = DuckLakeRowLevel.dataPart(required != null ? required : table.schema());
            builder.pruneColumns(data.add(DuckLakeRowLevel.ROW_INDEX));
            builder.pushDataFilters(pushed);
            if (!metadata && deletes.isEmpty()) {
                builder.pruneColumns(required != null ? required : table.schema());
                return builder.build();
            }
            return new DuckLakeRowLevel.LakeScan(builder.build(), data, metadata, deletes);
        }
    }

    /**
     * Spark's Parquet scan without the pushdowns that match file columns by name (row-group filters, aggregates
     * from footers): for tables where a column was renamed or a name held by two columns, whose files a by-name
     * filter could misread. Rows are still read by field id and every filter still runs after the scan.
     */
    static final class ByFieldIdOnly extends ParquetScanBuilder {
        ByFieldIdOnly(SparkSession session, MetadataLogFileIndex index, StructType schema,
                      CaseInsensitiveStringMap options) {
            super(session, index, schema, schema, options);
        }

        @Override
        public Filter[] pushDataFilters(Filter[] dataFilters) {
            return new Filter[0];
        }

        @Override
        public boolean pushAggregation(Aggregation aggregation) {
            return false;
        }
    }

    /** The Python catalog service: a child process answering HTTP/JSON on 127.0.0.1 with a token. */
    static final class Service {
        private final Process process;
        private final OutputStream keepAlive;  // the child ends when this pipe closes
        private final URI uri;
        private final String token;
        // HTTP/1.1 with persistent connections (the service keeps them open), no HTTP/2 upgrade attempt
        private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

        private Service(Process process, URI uri, String token) {
            this.process = process;
            this.keepAlive = process.getOutputStream();
            this.uri = uri;
            this.token = token;
        }

        static Service start(Map<String, String> options) {
            String python = options.getOrDefault("python", "python3");
            ObjectNode config = JSON.createObjectNode();
            for (Map.Entry<String, String> e : options.entrySet()) {
                config.put(e.getKey(), e.getValue());
            }
            try {
                ProcessBuilder builder = new ProcessBuilder(python, "-m", "spark_ducklake.catalog_service");
                builder.redirectError(ProcessBuilder.Redirect.INHERIT);
                Process process = builder.start();
                OutputStream in = process.getOutputStream();
                in.write((JSON.writeValueAsString(config) + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
                BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                                                                              StandardCharsets.UTF_8));
                String line = out.readLine();
                if (line == null) {
                    throw analysis("ERROR", "lake catalog", "the catalog service (" + python
                            + " -m spark_ducklake.catalog_service) ended before answering; see its error output");
                }
                JsonNode hello = JSON.readTree(line);
                if (hello.has("error")) {
                    process.destroy();
                    throw failure(hello, "lake catalog");
                }
                Service service = new Service(process, URI.create("http://127.0.0.1:" + hello.get("port").asInt()
                                                                   + "/"), hello.get("token").asText());
                Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
                return service;
            } catch (IOException e) {
                throw analysis("ERROR", "lake catalog", "cannot start the lake catalog service with " + python
                        + " (set the catalog's `python` option to an interpreter with spark-ducklake installed): " + e);
            }
        }

        /** The reply to `request`, errors included. */
        JsonNode ask(ObjectNode request) {
            try {
                HttpRequest http = HttpRequest.newBuilder(uri)
                        .header("X-DuckLake-Token", token)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(request)))
                        .build();
                HttpResponse<String> response = client.send(http, HttpResponse.BodyHandlers.ofString());
                return JSON.readTree(response.body());
            } catch (IOException e) {
                throw analysis("ERROR", subject(request), "the lake catalog service did not answer: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw analysis("ERROR", subject(request), "interrupted while asking the lake catalog service");
            }
        }

        /** The reply to `request`; an error reply is thrown. */
        JsonNode call(ObjectNode request) {
            JsonNode reply = ask(request);
            if (reply.has("error")) {
                JsonNode error = reply.get("error");
                String kind = error.path("kind").asText();
                String namespace = request.path("namespace").asText(null);
                String table = request.path("table").asText(null);
                if (namespace != null && table != null && "exists".equals(kind)) {
                    throw sneaky(new TableAlreadyExistsException(Identifier.of(new String[] {namespace}, table)));
                }
                if (namespace != null && table == null && "exists".equals(kind)) {
                    throw sneaky(new NamespaceAlreadyExistsException(new String[] {namespace}));
                }
                if (namespace != null && table == null && "not_found".equals(kind)) {
                    throw sneaky(new NoSuchNamespaceException(new String[] {namespace}));
                }
                throw failure(reply, subject(request));
            }
            return reply;
        }

        /** What a request is about, as error messages name it: `schema.table`, `schema` or the operation. */
        static String subject(ObjectNode request) {
            String namespace = request.path("namespace").asText(null);
            String table = request.path("table").asText(null);
            if (namespace == null) {
                return "lake catalog (" + request.path("op").asText() + ")";
            }
            return table == null ? namespace : namespace + "." + table;
        }

        /** An error reply as an AnalysisException naming `subject` and the service's message and kind. */
        static RuntimeException failure(JsonNode reply, String subject) {
            JsonNode error = reply.get("error");
            String kind = error.path("kind").asText("error");
            return analysis(kind.isEmpty() ? "error" : kind, subject, error.path("message").asText());
        }
    }
}
