// DELETE FROM, UPDATE and MERGE INTO on lake tables through the catalog plugin (DuckLakeCatalog.java), merge-on-read.
//
// Spark finds the rows (SupportsDelta: a scan exposing each row's data file `_file` and position `_pos`, read by
// Spark's Parquet reader with its row index) and hands each change to a DeltaWriter. The writer only moves data,
// with Spark's own Parquet writer into the staging folder the service hands out: deleted (file_path, pos) rows,
// new versions of updated rows with their old (file_path, pos), inserted rows. The catalog service
// (`commit_row_level`) does everything DuckLake: positions to ended files, inlined deletes or delete files, row
// ids kept by updated rows, inlining, and the commit with the Python API's conflict rules, as one snapshot.
// The same scan reads tables with delete files: the service names each file's deleted positions, skipped here.
package sparkducklake;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaBatchWrite;
import org.apache.spark.sql.connector.write.DeltaWrite;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.DeltaWriter;
import org.apache.spark.sql.connector.write.DeltaWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.v2.FilePartitionReaderFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.SerializableConfiguration;

final class DuckLakeRowLevel {
    static final String FILE = "_file";
    static final String POS = "_pos";
    // Spark's Parquet reader fills a column of this name with each row's position in its file.
    static final StructField ROW_INDEX = new StructField(ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME(),
            DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty());
    static final MetadataColumn[] METADATA = {column(FILE, DataTypes.StringType), column(POS, DataTypes.LongType)};

    private DuckLakeRowLevel() {
    }

    private static MetadataColumn column(String name, DataType type) {
        return new MetadataColumn() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public DataType dataType() {
                return type;
            }

            @Override
            public boolean isNullable() {
                return false;
            }
        };
    }

    /** A data file's path as both the reader and the service name it (scheme-less, normalized by Hadoop). */
    static String key(String path) {
        return new Path(path).toUri().getPath();
    }

    /** `schema` without the metadata columns (the table's columns a scan reads from the files). */
    static StructType dataPart(StructType schema) {
        StructType out = new StructType();
        for (StructField f : schema.fields()) {
            if (!f.name().equals(FILE) && !f.name().equals(POS)) {
                out = out.add(f);
            }
        }
        return out;
    }

    static boolean wants(StructType required, String name) {
        return required != null && Arrays.asList(required.fieldNames()).contains(name);
    }

    /**
     * Spark's Parquet scan with each row's position (its row index) and file, skipping deleted positions: its rows
     * are the data columns then `_pos` and `_file` (when asked for). Read row by row: only scans of files with
     * deletes or of the metadata columns take this route.
     */
    static final class LakeScan implements Scan, Batch {
        private final Scan parquet;
        private final StructType output;
        private final HashMap<String, long[]> deletes;
        private final boolean metadata;

        LakeScan(Scan parquet, StructType data, boolean metadata, HashMap<String, long[]> deletes) {
            this.parquet = parquet;
            this.metadata = metadata;
            this.deletes = deletes;
            this.output = metadata ? data.add(POS, DataTypes.LongType, false).add(FILE, DataTypes.StringType, false)
                                   : data;
        }

        @Override
        public StructType readSchema() {
            return output;
        }

        @Override
        public String description() {
            return "DuckLakeScan(" + parquet.description() + ", " + deletes.size() + " files with deletes)";
        }

        @Override
        public Batch toBatch() {
            return this;
        }

        @Override
        public InputPartition[] planInputPartitions() {
            return parquet.toBatch().planInputPartitions();
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            return new Reader((FilePartitionReaderFactory) parquet.toBatch().createReaderFactory(), deletes, metadata);
        }
    }

    /** Reads each file of a partition with Spark's Parquet reader, drops deleted positions, appends the file. */
    static final class Reader implements PartitionReaderFactory {
        private final FilePartitionReaderFactory parquet;
        private final HashMap<String, long[]> deletes;
        private final boolean metadata;

        Reader(FilePartitionReaderFactory parquet, HashMap<String, long[]> deletes, boolean metadata) {
            this.parquet = parquet;
            this.deletes = deletes;
            this.metadata = metadata;
        }

        @Override
        public boolean supportColumnarReads(InputPartition partition) {
            return false;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            PartitionedFile[] files = ((FilePartition) partition).files();
            return new PartitionReader<InternalRow>() {
                private int next;
                private PartitionReader<InternalRow> current;
                private long[] deleted;
                private int positionField;
                private final JoinedRow joined = new JoinedRow();
                private final GenericInternalRow file = new GenericInternalRow(1);
                private InternalRow row;

                @Override
                public boolean next() throws IOException {
                    while (true) {
                        if (current == null) {
                            if (next >= files.length) {
                                return false;
                            }
                            PartitionedFile f = files[next++];
                            String path = key(f.toPath().toString());
                            deleted = deletes.get(path);
                            file.update(0, UTF8String.fromString(path));
                            current = parquet.buildReader(f);
                        }
                        if (!current.next()) {
                            current.close();
                            current = null;
                            continue;
                        }
                        InternalRow got = current.get();
                        positionField = got.numFields() - 1;  // the row index is the reader's last column
                        if (deleted != null && Arrays.binarySearch(deleted, got.getLong(positionField)) >= 0) {
                            continue;
                        }
                        row = metadata ? joined.apply(got, file) : got;
                        return true;
                    }
                }

                @Override
                public InternalRow get() {
                    return row;
                }

                @Override
                public void close() throws IOException {
                    if (current != null) {
                        current.close();
                    }
                }
            };
        }
    }

    /** DELETE / UPDATE / MERGE on one table at the snapshot Spark loaded: rows found by (`_file`, `_pos`). */
    static final class Operation implements SupportsDelta {
        private final DuckLakeCatalog catalog;
        private final Identifier ident;
        private final long snapshot;
        private final DuckLakeCatalog.LakeTable table;
        private final Command command;

        Operation(DuckLakeCatalog catalog, Identifier ident, long snapshot, DuckLakeCatalog.LakeTable table,
                  Command command) {
            this.catalog = catalog;
            this.ident = ident;
            this.snapshot = snapshot;
            this.table = table;
            this.command = command;
        }

        @Override
        public Command command() {
            return command;
        }

        @Override
        public String description() {
            return "DuckLake " + command + " " + ident + " @ snapshot " + snapshot;
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return table.newScanBuilder(options);
        }

        @Override
        public NamedReference[] rowId() {
            return new NamedReference[] {Expressions.column(FILE), Expressions.column(POS)};
        }

        @Override
        public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            return new DeltaWriteBuilder() {
                @Override
                public DeltaWrite build() {
                    return new DeltaWrite() {
                        @Override
                        public DeltaBatchWrite toBatch() {
                            return new ChangeWrite(Operation.this);
                        }

                        @Override
                        public String description() {
                            return Operation.this.description();
                        }
                    };
                }
            };
        }
    }

    /** The files one task wrote (null: none of that kind). */
    static final class ChangedFiles implements WriterCommitMessage {
        final String deletes;
        final String updates;
        final String inserts;

        ChangedFiles(String deletes, String updates, String inserts) {
            this.deletes = deletes;
            this.updates = updates;
            this.inserts = inserts;
        }
    }

    static final StructType DELETES = new StructType().add("file_path", DataTypes.StringType, false)
                                                      .add("pos", DataTypes.LongType, false);

    /** A statement's changes: staged by Spark's Parquet writer, committed by the service as one snapshot. */
    static final class ChangeWrite implements DeltaBatchWrite {
        private final Operation op;
        private final String staging;
        private final StructType schema;
        private final Map<String, String> options = new HashMap<>();

        ChangeWrite(Operation op) {
            this.op = op;
            ObjectNode ask = DuckLakeCatalog.tableRequest("begin_write", op.ident);
            ask.put("row_level", op.command.name().toLowerCase(java.util.Locale.ROOT));
            JsonNode plan = op.catalog.service().call(ask);
            this.staging = plan.get("staging").asText();
            this.schema = (StructType) DataType.fromJson(plan.get("schema").asText());
            plan.get("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        }

        private Sink sink(SparkSession session, StructType of) throws IOException {
            scala.collection.immutable.Map<String, String> opts = scala.collection.immutable.Map$.MODULE$.empty();
            for (Map.Entry<String, String> e : options.entrySet()) {
                opts = opts.updated(e.getKey(), e.getValue());
            }
            Job job = Job.getInstance(session.sessionState().newHadoopConfWithOptions(opts));
            OutputWriterFactory factory = new ParquetFileFormat().prepareWrite(session, job, opts, of);
            return new Sink(factory, new SerializableConfiguration(job.getConfiguration()), of);
        }

        @Override
        public DeltaWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            SparkSession session = SparkSession.active();
            StructType updates = schema.add("_dl_file_path", DataTypes.StringType, false)
                                       .add("_dl_pos", DataTypes.LongType, false);
            try {
                return new ChangeWriterFactory(sink(session, DELETES), sink(session, updates), sink(session, schema),
                                               staging, UUID.randomUUID().toString());
            } catch (IOException e) {
                throw DuckLakeCatalog.analysis("ERROR", op.ident.toString(), "cannot set up the Parquet writer: " + e);
            }
        }

        @Override
        public boolean useCommitCoordinator() {
            return true;
        }

        @Override
        public void commit(WriterCommitMessage[] messages) {
            ObjectNode ask = DuckLakeCatalog.tableRequest("commit_row_level", op.ident);
            ask.put("snapshot", op.snapshot);
            ask.put("staging", staging);
            ArrayNode deletes = ask.putArray("deletes");
            ArrayNode updates = ask.putArray("updates");
            ArrayNode inserts = ask.putArray("files");
            for (WriterCommitMessage m : messages) {
                if (m instanceof ChangedFiles f) {
                    if (f.deletes != null) {
                        deletes.add(f.deletes);
                    }
                    if (f.updates != null) {
                        updates.add(f.updates);
                    }
                    if (f.inserts != null) {
                        inserts.add(f.inserts);
                    }
                }
            }
            op.catalog.service().call(ask);  // the service deletes the staging folder, committed or not
        }

        @Override
        public void abort(WriterCommitMessage[] messages) {
            try {
                Path dir = new Path(staging);
                dir.getFileSystem(SparkSession.active().sessionState().newHadoopConf()).delete(dir, true);
            } catch (IOException e) {
                // never committed: nobody reads these files
            }
        }
    }

    /** One kind of file a task writes: Spark's Parquet writer set up for its schema. */
    static final class Sink implements java.io.Serializable {
        final OutputWriterFactory factory;
        final SerializableConfiguration conf;
        final StructType schema;

        Sink(OutputWriterFactory factory, SerializableConfiguration conf, StructType schema) {
            this.factory = factory;
            this.conf = conf;
            this.schema = schema;
        }
    }

    static final class ChangeWriterFactory implements DeltaWriterFactory {
        private final Sink deletes;
        private final Sink updates;
        private final Sink inserts;
        private final String staging;
        private final String jobId;

        ChangeWriterFactory(Sink deletes, Sink updates, Sink inserts, String staging, String jobId) {
            this.deletes = deletes;
            this.updates = updates;
            this.inserts = inserts;
            this.staging = staging;
            this.jobId = jobId;
        }

        @Override
        public DeltaWriter<InternalRow> createWriter(int partitionId, long taskId) {
            return new ChangeWriter(partitionId, taskId);
        }

        /** A task's writer: each kind of file opened on its first row. */
        final class ChangeWriter implements DeltaWriter<InternalRow> {
            private final int partitionId;
            private final long taskId;
            private final OutputWriter[] writers = new OutputWriter[3];
            private final String[] paths = new String[3];
            private final GenericInternalRow place = new GenericInternalRow(2);
            private final JoinedRow joined = new JoinedRow();

            ChangeWriter(int partitionId, long taskId) {
                this.partitionId = partitionId;
                this.taskId = taskId;
            }

            private OutputWriter writer(int kind) {
                if (writers[kind] == null) {
                    Sink sink = kind == 0 ? deletes : kind == 1 ? updates : inserts;
                    Configuration hadoop = sink.conf.value();
                    TaskAttemptID attempt = new TaskAttemptID(new TaskID(new JobID(jobId, 0), TaskType.MAP,
                                                                         partitionId), (int) taskId);
                    String what = kind == 0 ? "deletes" : kind == 1 ? "updates" : "part";
                    paths[kind] = staging + String.format("%s-%05d-%d-%s.parquet", what, partitionId, taskId,
                                                          UUID.randomUUID());
                    writers[kind] = sink.factory.newInstance(paths[kind], sink.schema,
                                                             new TaskAttemptContextImpl(hadoop, attempt));
                }
                return writers[kind];
            }

            @Override
            public void delete(InternalRow metadata, InternalRow id) {
                place.update(0, id.getUTF8String(0));
                place.update(1, id.getLong(1));
                writer(0).write(place);
            }

            @Override
            public void update(InternalRow metadata, InternalRow id, InternalRow row) {
                place.update(0, id.getUTF8String(0));
                place.update(1, id.getLong(1));
                writer(1).write(joined.apply(row, place));
            }

            @Override
            public void insert(InternalRow row) {
                writer(2).write(row);
            }

            @Override
            public WriterCommitMessage commit() {
                for (OutputWriter w : writers) {
                    if (w != null) {
                        w.close();
                    }
                }
                return new ChangedFiles(paths[0], paths[1], paths[2]);
            }

            @Override
            public void abort() throws IOException {
                for (int kind = 0; kind < 3; kind++) {
                    if (writers[kind] != null) {
                        try {
                            writers[kind].close();
                        } finally {
                            Path file = new Path(paths[kind]);
                            file.getFileSystem((kind == 0 ? deletes : kind == 1 ? updates : inserts).conf.value())
                                .delete(file, false);
                        }
                    }
                }
            }

            @Override
            public void close() {
            }
        }
    }

    /** Every row of the table deleted in one snapshot without a scan, as INSERT OVERWRITE replaces them all. */
    static void truncate(DuckLakeCatalog catalog, Identifier ident) {
        ObjectNode ask = DuckLakeCatalog.tableRequest("commit_write", ident);
        ask.put("staging", "");
        ask.put("mode", "truncate");
        ask.putArray("files");
        catalog.service().call(ask);
    }

    /** The service's `deletes` (data file path: deleted positions) as the reader looks them up. */
    static HashMap<String, long[]> deletes(JsonNode reply) {
        HashMap<String, long[]> out = new HashMap<>();
        JsonNode node = reply.path("deletes");
        node.fields().forEachRemaining(e -> {
            long[] positions = new long[e.getValue().size()];
            for (int i = 0; i < positions.length; i++) {
                positions[i] = e.getValue().get(i).asLong();
            }
            Arrays.sort(positions);
            out.put(key(e.getKey()), positions);
        });
        return out;
    }
}
