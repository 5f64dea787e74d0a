package local.freight.embeddedmongo;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * The simple part of a query, evaluated on a document's BSON bytes without decoding it: top-level
 * fields compared to a string, a number or a date ({@code f: v}, {@code $eq}, {@code $gt},
 * {@code $gte}, {@code $lt}, {@code $lte}). Three answers: MATCH, NO_MATCH, or UNKNOWN (an array,
 * anything unusual: decode and ask the engine's matcher). Conditions are ANDed, so one NO_MATCH
 * rules a document out even when other conditions of the query are not compiled here.
 *
 * <p>Also reads top-level sort keys (numbers, strings, dates, ObjectIds) from the bytes, so a
 * sorted page can be chosen before decoding anything but the page itself.
 */
final class RawQuery {

    enum Answer { MATCH, NO_MATCH, UNKNOWN }

    private enum Op { EQ, GT, GTE, LT, LTE }

    private record Condition(byte[] field, Op op, Object value) {
    }

    private final List<Condition> conditions;
    /** Every top-level condition of the query is compiled: MATCH is the query's answer. */
    final boolean complete;

    private RawQuery(List<Condition> conditions, boolean complete) {
        this.conditions = conditions;
        this.complete = complete;
    }

    static RawQuery compile(Document query) {
        List<Condition> conditions = new ArrayList<>();
        boolean complete = true;
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String field = entry.getKey();
            Object value = entry.getValue();
            if (field.startsWith("$") || field.contains(".")) {
                complete = false;
                continue;
            }
            byte[] name = field.getBytes(StandardCharsets.UTF_8);
            if (isScalar(value)) {
                conditions.add(new Condition(name, Op.EQ, value));
            } else if (value instanceof Document operators && !operators.isEmpty()
                && operators.keySet().stream().allMatch(RawQuery::isCompiledOperator)
                && operators.values().stream().allMatch(RawQuery::isScalar)) {
                for (Map.Entry<String, Object> op : operators.entrySet()) {
                    conditions.add(new Condition(name, operatorOf(op.getKey()), op.getValue()));
                }
            } else {
                complete = false;
            }
        }
        return new RawQuery(conditions, complete);
    }

    boolean isEmpty() {
        return conditions.isEmpty();
    }

    private static boolean isCompiledOperator(String op) {
        return op.equals("$eq") || op.equals("$gt") || op.equals("$gte") || op.equals("$lt") || op.equals("$lte");
    }

    private static Op operatorOf(String op) {
        return switch (op) {
            case "$eq" -> Op.EQ;
            case "$gt" -> Op.GT;
            case "$gte" -> Op.GTE;
            case "$lt" -> Op.LT;
            default -> Op.LTE;
        };
    }

    private static boolean isScalar(Object v) {
        return v instanceof String || v instanceof Integer || v instanceof Long || v instanceof Double || v instanceof Instant;
    }

    Answer evaluate(byte[] bson) {
        Answer answer = Answer.MATCH;
        for (Condition c : conditions) {
            int at = Bson.find(bson, c.field());
            Answer one = at < 0 ? Answer.NO_MATCH : compare(bson, at, c);
            if (one == Answer.NO_MATCH) {
                return Answer.NO_MATCH;
            }
            if (one == Answer.UNKNOWN) {
                answer = Answer.UNKNOWN;
            }
        }
        return answer;
    }

    private static Answer compare(byte[] b, int at, Condition c) {
        byte type = b[at];
        int value = Bson.valueOffset(b, at);
        Object expected = c.value();
        int cmp;
        switch (type) {
            case 0x02 -> {
                if (!(expected instanceof String s)) {
                    return Answer.NO_MATCH; // MongoDB compares within a type class only
                }
                cmp = Bson.readString(b, value).compareTo(s);
            }
            case 0x01, 0x10, 0x12 -> {
                if (!(expected instanceof Number n)) {
                    return Answer.NO_MATCH;
                }
                double actual = Bson.readNumber(b, value, type);
                double wanted = n.doubleValue();
                if (Math.abs(actual) > 0x1p53 || Math.abs(wanted) > 0x1p53) {
                    return Answer.UNKNOWN; // beyond exact doubles: let the engine compare
                }
                if (Double.isNaN(actual) || Double.isNaN(wanted)) {
                    return Answer.UNKNOWN;
                }
                cmp = Double.compare(actual, wanted);
                if (actual == wanted) {
                    cmp = 0; // -0.0 == 0.0
                }
            }
            case 0x09 -> {
                if (!(expected instanceof Instant i)) {
                    return Answer.NO_MATCH;
                }
                cmp = Long.compare(Bson.readInt64(b, value), i.toEpochMilli());
            }
            default -> {
                return Answer.UNKNOWN; // arrays (element matching), null, other types: the engine decides
            }
        }
        boolean ok = switch (c.op()) {
            case EQ -> cmp == 0;
            case GT -> cmp > 0;
            case GTE -> cmp >= 0;
            case LT -> cmp < 0;
            case LTE -> cmp <= 0;
        };
        return ok ? Answer.MATCH : Answer.NO_MATCH;
    }

    /** A sort key read from the bytes: its type class and value, or null when it cannot be read simply. */
    static Comparable<?>[] sortKeys(byte[] b, byte[][] fields) {
        Comparable<?>[] keys = new Comparable<?>[fields.length];
        for (int i = 0; i < fields.length; i++) {
            int at = Bson.find(b, fields[i]);
            if (at < 0) {
                return null;
            }
            int value = Bson.valueOffset(b, at);
            keys[i] = switch (b[at]) {
                case 0x01, 0x10, 0x12 -> Double.valueOf(Bson.readNumber(b, value, b[at]));
                case 0x02 -> Bson.readString(b, value);
                case 0x09 -> Instant.ofEpochMilli(Bson.readInt64(b, value));
                case 0x07 -> new ObjectId(Arrays.copyOfRange(b, value, value + 12));
                default -> null;
            };
            if (keys[i] == null || (keys[i] instanceof Double d && d.isNaN())) {
                return null;
            }
        }
        return keys;
    }

    /** Minimal reader of top-level BSON elements. */
    static final class Bson {

        private Bson() {
        }

        /** Offset of the type byte of the top-level element named {@code name}, or -1. */
        static int find(byte[] b, byte[] name) {
            int i = 4;
            while (i < b.length && b[i] != 0) {
                int type = i;
                int nameStart = i + 1;
                int nameEnd = nameStart;
                while (b[nameEnd] != 0) {
                    nameEnd++;
                }
                if (nameEnd - nameStart == name.length && Arrays.equals(b, nameStart, nameEnd, name, 0, name.length)) {
                    return type;
                }
                i = nameEnd + 1 + valueSize(b, b[type], nameEnd + 1);
            }
            return -1;
        }

        static int valueOffset(byte[] b, int typeAt) {
            int i = typeAt + 1;
            while (b[i] != 0) {
                i++;
            }
            return i + 1;
        }

        private static int valueSize(byte[] b, byte type, int at) {
            return switch (type) {
                case 0x01, 0x09, 0x11, 0x12 -> 8;
                case 0x02, 0x0D, 0x0E -> 4 + readInt32(b, at);
                case 0x03, 0x04, 0x0F -> readInt32(b, at);
                case 0x05 -> 4 + 1 + readInt32(b, at);
                case 0x06, 0x0A, (byte) 0xFF, 0x7F -> 0;
                case 0x07 -> 12;
                case 0x08 -> 1;
                case 0x0B -> {
                    int j = at;
                    while (b[j] != 0) {
                        j++;
                    }
                    j++;
                    while (b[j] != 0) {
                        j++;
                    }
                    yield j + 1 - at;
                }
                case 0x0C -> 4 + readInt32(b, at) + 12;
                case 0x10 -> 4;
                case 0x13 -> 16;
                default -> throw new IllegalStateException("unknown BSON type " + type);
            };
        }

        static int readInt32(byte[] b, int at) {
            return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
        }

        static long readInt64(byte[] b, int at) {
            return (readInt32(b, at) & 0xffffffffL) | ((long) readInt32(b, at + 4)) << 32;
        }

        static double readNumber(byte[] b, int at, byte type) {
            return switch (type) {
                case 0x01 -> Double.longBitsToDouble(readInt64(b, at));
                case 0x10 -> readInt32(b, at);
                default -> readInt64(b, at);
            };
        }

        static String readString(byte[] b, int at) {
            int length = readInt32(b, at);
            return new String(b, at + 4, length - 1, StandardCharsets.UTF_8);
        }
    }
}
