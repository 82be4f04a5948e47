// `CALL <catalog>.system.<name>(...)` for the lake catalog plugin (DuckLakeCatalog's ProcedureCatalog side).
//
// Thin like the rest of the plugin: the procedures, their parameters and what they do live in the Python catalog
// service (catalog_service/procedures.py, PROCEDURES). Loading a procedure asks the service for its parameters
// (`procedure`); a CALL is one `call` request with the arguments given, whose reply (a schema and rows) becomes
// the statement's result. Java only converts Spark's internal values to JSON and back.
package sparkducklake;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import org.apache.spark.unsafe.types.UTF8String;

final class DuckLakeProcedures {
    /** The namespace the procedures live in: `CALL lake.system.expire_snapshots(...)`. */
    static final String NAMESPACE = "system";
    private static final ObjectMapper JSON = new ObjectMapper();

    private DuckLakeProcedures() {
    }

    static Identifier[] list(DuckLakeCatalog catalog, String[] namespace) {
        if (namespace.length != 1 || !NAMESPACE.equals(namespace[0])) {
            return new Identifier[0];
        }
        List<Identifier> out = new ArrayList<>();
        for (JsonNode n : catalog.service().call(DuckLakeCatalog.request("procedures")).get("procedures")) {
            out.add(Identifier.of(namespace, n.asText()));
        }
        return out.toArray(new Identifier[0]);
    }

    static UnboundProcedure load(DuckLakeCatalog catalog, Identifier ident) {
        String subject = catalog.name() + "." + String.join(".", ident.namespace()) + "." + ident.name();
        if (ident.namespace().length != 1 || !NAMESPACE.equals(ident.namespace()[0])) {
            throw DuckLakeCatalog.analysis("NOT_FOUND", subject, "the lake catalog's procedures are "
                    + catalog.name() + "." + NAMESPACE + ".<name>");
        }
        ObjectNode ask = DuckLakeCatalog.request("procedure");
        ask.put("name", ident.name());
        JsonNode reply = catalog.service().ask(ask);
        if (reply.has("error")) {
            throw DuckLakeCatalog.Service.failure(reply, subject);
        }
        return new Unbound(catalog, subject, reply);
    }

    /** A procedure as the service describes it; bound to the types of the arguments a CALL gives. */
    static final class Unbound implements UnboundProcedure {
        private final DuckLakeCatalog catalog;
        private final String subject;
        private final JsonNode signature;

        Unbound(DuckLakeCatalog catalog, String subject, JsonNode signature) {
            this.catalog = catalog;
            this.subject = subject;
            this.signature = signature;
        }

        @Override
        public String name() {
            return signature.get("name").asText();
        }

        @Override
        public String description() {
            return signature.path("description").asText();
        }

        /** Each given argument is declared with its own type (the service checks values, Spark casts nothing);
         *  one not given keeps the service's type and defaults to NULL, unless required. */
        @Override
        public BoundProcedure bind(StructType input) {
            List<ProcedureParameter> params = new ArrayList<>();
            JsonNode declared = signature.get("parameters");
            for (int i = 0; i < declared.size(); i++) {
                JsonNode p = declared.get(i);
                String name = p.get("name").asText();
                DataType type = given(input, name, i);
                if (type == null || type instanceof NullType) {
                    type = DataType.fromDDL(p.get("type").asText());
                }
                ProcedureParameter.Builder builder = ProcedureParameter.in(name, type);
                if (!p.path("required").asBoolean(false)) {
                    builder = builder.defaultValue("NULL");
                }
                params.add(builder.build());
            }
            return new Bound(catalog, subject, name(), description(), params.toArray(new ProcedureParameter[0]));
        }

        /** The type of the argument given for parameter `name` (by name, or at `position`), null if none. */
        private static DataType given(StructType input, String name, int position) {
            for (StructField f : input.fields()) {
                if (f.metadata().contains(ProcedureParameter.BY_NAME_METADATA_KEY) && f.name().equals(name)) {
                    return f.dataType();
                }
            }
            if (position < input.fields().length) {
                StructField f = input.fields()[position];
                if (!f.metadata().contains(ProcedureParameter.BY_NAME_METADATA_KEY)) {
                    return f.dataType();
                }
            }
            return null;
        }
    }

    static final class Bound implements BoundProcedure {
        private final DuckLakeCatalog catalog;
        private final String subject;
        private final String name;
        private final String description;
        private final ProcedureParameter[] params;

        Bound(DuckLakeCatalog catalog, String subject, String name, String description, ProcedureParameter[] params) {
            this.catalog = catalog;
            this.subject = subject;
            this.name = name;
            this.description = description;
            this.params = params;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            return description;
        }

        @Override
        public ProcedureParameter[] parameters() {
            return params;
        }

        @Override
        public boolean isDeterministic() {
            return false;  // maintenance changes the lake; metadata changes with it
        }

        @Override
        public Iterator<Scan> call(InternalRow input) {
            ObjectNode ask = DuckLakeCatalog.request("call");
            ask.put("name", name);
            ObjectNode args = ask.putObject("args");
            for (int i = 0; i < params.length; i++) {
                if (!input.isNullAt(i)) {
                    DataType type = params[i].dataType();
                    ObjectNode arg = args.putObject(params[i].name());
                    arg.put("type", type.typeName());
                    arg.set("value", toJson(input.get(i, type), type));
                }
            }
            JsonNode reply = catalog.service().ask(ask);
            if (reply.has("error")) {
                throw DuckLakeCatalog.Service.failure(reply, subject);
            }
            StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
            List<InternalRow> rows = new ArrayList<>();
            for (JsonNode row : reply.get("rows")) {
                Object[] values = new Object[schema.fields().length];
                for (int c = 0; c < values.length; c++) {
                    values[c] = fromJson(row.get(c), schema.fields()[c].dataType());
                }
                rows.add(new GenericInternalRow(values));
            }
            return Collections.<Scan>singletonList(new Result(schema, rows.toArray(new InternalRow[0]))).iterator();
        }
    }

    /** A procedure's rows: Spark shows a LocalScan as the CALL statement's result. */
    static final class Result implements LocalScan {
        private final StructType schema;
        private final InternalRow[] rows;

        Result(StructType schema, InternalRow[] rows) {
            this.schema = schema;
            this.rows = rows;
        }

        @Override
        public StructType readSchema() {
            return schema;
        }

        @Override
        public InternalRow[] rows() {
            return rows;
        }
    }

    /** Spark's internal value as JSON: timestamps in microseconds, dates in days, intervals in their units. */
    static JsonNode toJson(Object value, DataType type) {
        JsonNodeFactory f = JSON.getNodeFactory();
        if (value == null) {
            return f.nullNode();
        }
        if (type instanceof StringType) {
            return f.textNode(value.toString());
        }
        if (type instanceof BooleanType) {
            return f.booleanNode((Boolean) value);
        }
        if (type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
                || type instanceof LongType || type instanceof TimestampType || type instanceof TimestampNTZType
                || type instanceof DateType || type instanceof DayTimeIntervalType
                || type instanceof YearMonthIntervalType) {
            return f.numberNode(((Number) value).longValue());
        }
        if (type instanceof FloatType || type instanceof DoubleType) {
            return f.numberNode(((Number) value).doubleValue());
        }
        if (type instanceof DecimalType) {
            return f.numberNode(((Decimal) value).toJavaBigDecimal());
        }
        if (type instanceof ArrayType array) {
            ArrayData data = (ArrayData) value;
            ArrayNode out = f.arrayNode();
            for (int i = 0; i < data.numElements(); i++) {
                out.add(data.isNullAt(i) ? f.nullNode() : toJson(data.get(i, array.elementType()),
                                                                  array.elementType()));
            }
            return out;
        }
        if (type instanceof MapType map) {
            MapData data = (MapData) value;
            ObjectNode out = f.objectNode();
            for (int i = 0; i < data.numElements(); i++) {
                Object v = data.valueArray().isNullAt(i) ? null : data.valueArray().get(i, map.valueType());
                out.set(data.keyArray().get(i, map.keyType()).toString(), toJson(v, map.valueType()));
            }
            return out;
        }
        return f.textNode(value.toString());  // anything else by its text; the service names what it expected
    }

    /** A JSON value of the service's reply as Spark's internal value of `type`. */
    static Object fromJson(JsonNode value, DataType type) {
        if (value == null || value.isNull()) {
            return null;
        }
        if (type instanceof StringType) {
            return UTF8String.fromString(value.isTextual() ? value.asText() : value.toString());
        }
        if (type instanceof LongType || type instanceof TimestampType || type instanceof TimestampNTZType) {
            return value.asLong();
        }
        if (type instanceof IntegerType || type instanceof DateType) {
            return value.asInt();
        }
        if (type instanceof BooleanType) {
            return value.asBoolean();
        }
        if (type instanceof DoubleType) {
            return value.asDouble();
        }
        if (type instanceof DecimalType) {
            return Decimal.apply(new BigDecimal(value.asText()));
        }
        if (type instanceof BinaryType) {
            return Base64.getDecoder().decode(value.asText());
        }
        if (type instanceof ArrayType array) {
            Object[] out = new Object[value.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = fromJson(value.get(i), array.elementType());
            }
            return new GenericArrayData(out);
        }
        if (type instanceof MapType map) {
            List<Object> keys = new ArrayList<>();
            List<Object> values = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                keys.add(UTF8String.fromString(e.getKey()));
                values.add(fromJson(e.getValue(), map.valueType()));
            }
            return new ArrayBasedMapData(new GenericArrayData(keys.toArray()), new GenericArrayData(values.toArray()));
        }
        throw DuckLakeCatalog.analysis("ERROR", "lake catalog (call)", "a result column of type " + type.simpleString()
                + " the plugin cannot show");
    }
}
