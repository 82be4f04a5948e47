// spark-ducklake's file index: Spark's own Parquet scan over the files a scan's `_spark_metadata/0` log lists.
//
// The log is the one file_log.py writes (`v1`, then one JSON line per file with a percent-encoded URI "path" and
// a "size", in a fixed shape). Spark's MetadataLogFileIndex parses it with json4s (about 9 us a file) and then
// infers partitions; this reads "path" and "size" by hand and hands Spark one partition of all files. Nothing is
// listed or stat'ed. Built by scripts/build_jar.sh against the pyspark wheel's jars (Spark 4.x).
package sparkducklake;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.SchemaRelationProvider;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.collection.immutable.ArraySeq;
import scala.collection.immutable.Map;
import scala.collection.immutable.Seq;

public class DuckLakeFileList implements SchemaRelationProvider {
    @Override
    public BaseRelation createRelation(SQLContext context, Map<String, String> options, StructType schema) {
        SparkSession session = (SparkSession) context.sparkSession();
        // A probe (no path) answers whether this class resolves in the session: an index of no files.
        Option<String> folder = options.get("path");
        Configuration conf = session.sessionState().newHadoopConfWithOptions(options);
        FileIndex index = new LoggedFiles(folder.isEmpty() ? null : new Path(folder.get()), conf);
        return new HadoopFsRelation(index, new StructType(), schema, Option.empty(), new ParquetFileFormat(),
                                    options, session);
    }

    /** The files of one log, read once when the DataFrame is made (a classic scan's log is removed after). */
    public static final class LoggedFiles implements FileIndex {
        private final Path root;
        private final FileStatusWithMetadata[] files;
        private final long size;

        LoggedFiles(Path root, Configuration conf) {
            this.root = root;
            List<FileStatusWithMetadata> found = new ArrayList<>(1 << 12);
            long total = 0;
            if (root != null) {
                Path log = new Path(new Path(root, "_spark_metadata"), "0");
                try (BufferedReader in = new BufferedReader(new InputStreamReader(
                        log.getFileSystem(conf).open(log), StandardCharsets.UTF_8), 1 << 20)) {
                    String line = in.readLine();
                    if (!"v1".equals(line)) {
                        throw new IOException("not a v1 file-sink log: " + log);
                    }
                    Map<String, Object> none = scala.collection.immutable.Map$.MODULE$.empty();
                    while ((line = in.readLine()) != null) {
                        if (line.isEmpty()) {
                            continue;
                        }
                        long length = number(line, "\"size\":");
                        Path path = new Path(new URI(text(line, "\"path\":\"")));
                        found.add(new FileStatusWithMetadata(
                                new FileStatus(length, false, 1, 128L << 20, 0L, path), none));
                        total += length;
                    }
                } catch (IOException | URISyntaxException e) {
                    throw new IllegalStateException("spark-ducklake: cannot read the scan's file log " + log, e);
                }
            }
            this.files = found.toArray(new FileStatusWithMetadata[0]);
            this.size = total;
        }

        private static long number(String line, String key) {
            int at = line.indexOf(key) + key.length();
            int end = at;
            while (end < line.length() && Character.isDigit(line.charAt(end))) {
                end++;
            }
            return Long.parseLong(line.substring(at, end));
        }

        /** A JSON string value (json.dumps escapes: \", \\, \/, \\uXXXX and the control characters). */
        private static String text(String line, String key) {
            StringBuilder out = new StringBuilder();
            for (int i = line.indexOf(key) + key.length(); ; i++) {
                char c = line.charAt(i);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = line.charAt(++i);
                switch (e) {
                    case 'u': out.append((char) Integer.parseInt(line.substring(i + 1, i + 5), 16)); i += 4; break;
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    default: out.append(e);
                }
            }
        }

        @Override
        public Seq<Path> rootPaths() {
            return root == null ? ArraySeq.unsafeWrapArray(new Path[0]) : ArraySeq.unsafeWrapArray(new Path[] {root});
        }

        @Override
        public Seq<PartitionDirectory> listFiles(Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            Seq<FileStatusWithMetadata> all = ArraySeq.unsafeWrapArray(files);
            return ArraySeq.unsafeWrapArray(new PartitionDirectory[] {new PartitionDirectory(InternalRow.empty(), all)});
        }

        @Override
        public String[] inputFiles() {
            String[] paths = new String[files.length];
            for (int i = 0; i < files.length; i++) {
                paths[i] = files[i].getPath().toUri().toString();  // as Spark shows them (percent-encoded)
            }
            return paths;
        }

        @Override
        public void refresh() {
        }

        @Override
        public long sizeInBytes() {
            return size;
        }

        @Override
        public StructType partitionSchema() {
            return new StructType();
        }

        @Override
        public String toString() {
            return "DuckLakeFileList(" + files.length + " files)";
        }
    }
}
