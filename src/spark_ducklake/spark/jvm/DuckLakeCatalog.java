// spark-ducklake's Spark catalog plugin: lake tables in plain Spark SQL (`spark.sql.catalog.lake`).
//
// A thin DSv2 adapter: every DuckLake question (schemas, tables, a table's schema at a snapshot, which files a
// scan reads) goes to our Python catalog service (spark_ducklake/catalog_service.py), which this class starts as
// a child process (`<python> -m spark_ducklake.catalog_service`, the `python` option) on first use, so it works
// where no Python driver runs (Thrift server, Spark Connect server). Data moves through Spark's own Parquet scan
// (ParquetScanBuilder over a MetadataLogFileIndex of the service's file-sink log), read by Parquet field id.
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
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScanBuilder;
import org.apache.spark.sql.execution.streaming.runtime.MetadataLogFileIndex;
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
import scala.Option;

public class DuckLakeCatalog implements TableCatalog, SupportsNamespaces {
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
        throw notYet("CREATE NAMESPACE");
    }

    @Override
    public void alterNamespace(String[] namespace, NamespaceChange... changes) {
        throw notYet("ALTER NAMESPACE");
    }

    @Override
    public boolean dropNamespace(String[] namespace, boolean cascade) {
        throw notYet("DROP NAMESPACE");
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
            throw Service.failure(reply);
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
            if ("not_found".equals(reply.get("error").path("kind").asText())) {
                throw new NoSuchTableException(ident);
            }
            throw Service.failure(reply);
        }
        StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
        return new LakeTable(this, ident, schema, reply.get("snapshot").asLong());
    }

    @Override
    public Table alterTable(Identifier ident, TableChange... changes) {
        throw notYet("ALTER TABLE");
    }

    @Override
    public boolean dropTable(Identifier ident) {
        throw notYet("DROP TABLE");
    }

    @Override
    public void renameTable(Identifier oldName, Identifier newName) {
        throw notYet("RENAME TABLE");
    }

    private static UnsupportedOperationException notYet(String what) {
        return new UnsupportedOperationException(
                "spark-ducklake: " + what + " through the lake catalog is not supported yet; use the DuckLake Python API");
    }

    static ObjectNode request(String op) {
        ObjectNode node = JSON.createObjectNode();
        node.put("op", op);
        return node;
    }

    /** A lake table at one snapshot (resolved when Spark loaded it), read with Spark's Parquet scan. */
    static final class LakeTable implements Table, SupportsRead {
        private final DuckLakeCatalog catalog;
        private final Identifier ident;
        private final StructType schema;
        private final long snapshot;

        LakeTable(DuckLakeCatalog catalog, Identifier ident, StructType schema, long snapshot) {
            this.catalog = catalog;
            this.ident = ident;
            this.schema = schema;
            this.snapshot = snapshot;
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
            return EnumSet.of(TableCapability.BATCH_READ);
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

        /** Spark's Parquet scan of the files the catalog plans for the pushed filters (pruned by its statistics). */
        ScanBuilder parquetScan(CaseInsensitiveStringMap options, Filter[] filters) {
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
            SparkSession session = SparkSession.active();
            Path log = new Path(reply.get("log").asText());
            // recursiveFileLookup: no partition inference from Hive-style folders (the schema is the table's).
            scala.collection.immutable.Map<String, String> params =
                    scala.collection.immutable.Map$.MODULE$.<String, String>empty().updated("recursiveFileLookup", "true");
            MetadataLogFileIndex index = new MetadataLogFileIndex(session, log, params, Option.apply(schema));
            try {  // the index read the log when built: it is no longer needed
                log.getFileSystem(session.sessionState().newHadoopConf()).delete(log, true);
            } catch (IOException e) {
                // the service removes its whole log folder when it ends
            }
            if (reply.path("names_stable").asBoolean(true)) {
                return new ParquetScanBuilder(session, index, schema, schema, options);
            }
            return new ByFieldIdOnly(session, index, schema, options);
        }

        @Override
        public String toString() {
            return "DuckLakeTable(" + name() + " @ snapshot " + snapshot + ")";
        }
    }

    /** A conjunct the catalog can prune files with (a top-level column; integers, doubles, strings, booleans). */
    static ObjectNode condition(Filter filter) {
        String column;
        String op;
        Object[] values;
        if (filter instanceof EqualTo f) { column = f.attribute(); op = "="; values = new Object[] {f.value()}; }
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
            ScanBuilder parquet = table.parquetScan(options, filters);
            ParquetScanBuilder builder = (ParquetScanBuilder) parquet;
            if (required != null) {
                builder.pruneColumns(required);
            }
            builder.pushDataFilters(filters);
            return builder.build();
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
        private final HttpClient client = HttpClient.newHttpClient();

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
                    throw new IllegalStateException("spark-ducklake: the lake catalog service (" + python
                            + " -m spark_ducklake.catalog_service) ended before answering; see its error output");
                }
                JsonNode hello = JSON.readTree(line);
                if (hello.has("error")) {
                    process.destroy();
                    throw failure(hello);
                }
                Service service = new Service(process, URI.create("http://127.0.0.1:" + hello.get("port").asInt()
                                                                   + "/"), hello.get("token").asText());
                Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
                return service;
            } catch (IOException e) {
                throw new IllegalStateException("spark-ducklake: cannot start the lake catalog service with " + python
                        + " (set the catalog's `python` option to an interpreter with spark-ducklake installed): " + e, e);
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
                throw new IllegalStateException("spark-ducklake: the lake catalog service did not answer: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("spark-ducklake: interrupted while asking the lake catalog service", e);
            }
        }

        /** The reply to `request`; an error reply is thrown. */
        JsonNode call(ObjectNode request) {
            JsonNode reply = ask(request);
            if (reply.has("error")) {
                throw failure(reply);
            }
            return reply;
        }

        static RuntimeException failure(JsonNode reply) {
            JsonNode error = reply.get("error");
            String message = "spark-ducklake: " + error.path("message").asText();
            if ("unsupported".equals(error.path("kind").asText())) {
                return new UnsupportedOperationException(message);
            }
            return new IllegalStateException(message);
        }
    }
}
