package local.freight.embeddedmongo;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import de.bwaldvogel.mongo.bson.BinData;
import de.bwaldvogel.mongo.bson.BsonJavaScript;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Decimal128;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.LegacyUUID;
import de.bwaldvogel.mongo.bson.MaxKey;
import de.bwaldvogel.mongo.bson.MinKey;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;

/**
 * Decodes a stored document's BSON bytes into the engine's {@link Document}, the same values as
 * mongo-java-server's {@link BsonDecoder}, read straight from the array.
 *
 * <p>Why: a report reads every document of a tenant, and decoding them was a quarter of the
 * engine's time (JFR, cash-inflow forecast at 100k invoices). The stock decoder reads through a
 * Netty buffer (bounds and reference-count checks on every byte, a search per field name) and
 * builds each array as a document first, then copies it into a list. Field names and strings of
 * ASCII bytes become strings without the UTF-8 decoder, and a field name seen before is the same
 * string again (FIELD_NAMES).
 */
final class StoredBsonDecoder {

    /**
     * Recently decoded field names by a hash of their bytes. A collection's documents repeat a few
     * dozen names; a name found here is not allocated again, and its hash (which every document
     * put and field lookup computes) is already cached in it. Entries are immutable strings, so
     * threads racing on a slot at worst miss. Names longer than MAX_CACHED_NAME are not kept.
     */
    private static final String[] FIELD_NAMES = new String[4096];
    private static final int MAX_CACHED_NAME = 48;

    private StoredBsonDecoder() {
    }

    /** The field name in bytes [from, to): a cached string when the same ASCII name was decoded before. */
    private static String fieldName(byte[] b, int from, int to) {
        int length = to - from;
        if (length > MAX_CACHED_NAME) {
            return string(b, from, to);
        }
        int h = length;
        for (int i = from; i < to; i++) {
            h = 31 * h + b[i];
        }
        int slot = (h ^ (h >>> 15)) & (FIELD_NAMES.length - 1);
        String cached = FIELD_NAMES[slot];
        if (cached != null && sameAscii(cached, b, from, length)) {
            return cached;
        }
        String name = string(b, from, to);
        if (name.length() == length) {
            // ASCII only (one char per byte): sameAscii can compare it with bytes.
            FIELD_NAMES[slot] = name;
        }
        return name;
    }

    private static boolean sameAscii(String s, byte[] b, int from, int length) {
        if (s.length() != length) {
            return false;
        }
        for (int k = 0; k < length; k++) {
            if (s.charAt(k) != b[from + k]) {
                return false;
            }
        }
        return true;
    }

    static Document decode(byte[] b) {
        return decode(b, null);
    }

    /** Only the fields {@code needs} names (all of them when it is null); the others are skipped unread. */
    static Document decode(byte[] b, NeededFields needs) {
        int[] at = {0};
        Document document = document(b, at, needs);
        if (at[0] != b.length) {
            throw new IllegalArgumentException("illegal BSON document: " + (b.length - at[0]) + " bytes after its end");
        }
        return document;
    }

    private static Document document(byte[] b, int[] at, NeededFields needs) {
        int start = at[0];
        int end = start + int32(b, start);
        int i = start + 4;
        Document document = new Document();
        while (true) {
            byte type = b[i++];
            if (type == 0) {
                if (i != end) {
                    throw new IllegalArgumentException("illegal BSON document: its length says " + (end - start) + " bytes, its end is at " + (i - start));
                }
                at[0] = i;
                return document;
            }
            int nameEnd = cstringEnd(b, i);
            String name = fieldName(b, i, nameEnd);
            at[0] = nameEnd + 1;
            NeededFields child = needs == null ? null : needs.child(name);
            if (needs != null && child == null) {
                at[0] += size(type, b, at[0]);
                i = at[0];
                continue;
            }
            Object value = child == null || child.isAll() ? value(type, b, at) : part(type, b, at, child);
            if (document.put(name, value) != null) {
                throw new IllegalArgumentException("Document already contains field '" + name + "'");
            }
            i = at[0];
        }
    }

    /** A sub-document or array of which only {@code needs} is read (MongoDB's paths reach into an array's documents); any other value whole. */
    private static Object part(byte type, byte[] b, int[] at, NeededFields needs) {
        return switch (type) {
            case 0x03 -> document(b, at, needs);
            case 0x04 -> array(b, at, needs);
            default -> value(type, b, at);
        };
    }

    /** An array's elements in order; their names ("0", "1", ...) are skipped. */
    private static List<Object> array(byte[] b, int[] at, NeededFields needs) {
        int start = at[0];
        int end = start + int32(b, start);
        int i = start + 4;
        List<Object> list = new ArrayList<>();
        while (true) {
            byte type = b[i++];
            if (type == 0) {
                if (i != end) {
                    throw new IllegalArgumentException("illegal BSON array: its length says " + (end - start) + " bytes, its end is at " + (i - start));
                }
                at[0] = i;
                return list;
            }
            at[0] = cstringEnd(b, i) + 1;
            list.add(needs == null ? value(type, b, at) : part(type, b, at, needs));
            i = at[0];
        }
    }

    private static Object value(byte type, byte[] b, int[] at) {
        int i = at[0];
        switch (type) {
            case 0x01 -> {
                at[0] = i + 8;
                return Double.longBitsToDouble(int64(b, i));
            }
            case 0x02 -> {
                return lengthPrefixedString(b, at);
            }
            case 0x03 -> {
                return document(b, at, null);
            }
            case 0x04 -> {
                return array(b, at, null);
            }
            case 0x05 -> {
                return binary(b, at);
            }
            case 0x06, 0x0A -> {
                return null;
            }
            case 0x07 -> {
                at[0] = i + 12;
                byte[] id = new byte[12];
                System.arraycopy(b, i, id, 0, 12);
                return new ObjectId(id);
            }
            case 0x08 -> {
                at[0] = i + 1;
                return switch (b[i]) {
                    case 0 -> Boolean.FALSE;
                    case 1 -> Boolean.TRUE;
                    default -> throw new IllegalArgumentException("Illegal boolean value:" + b[i]);
                };
            }
            case 0x09 -> {
                at[0] = i + 8;
                return Instant.ofEpochMilli(int64(b, i));
            }
            case 0x0B -> {
                int patternEnd = cstringEnd(b, i);
                int optionsEnd = cstringEnd(b, patternEnd + 1);
                at[0] = optionsEnd + 1;
                return new BsonRegularExpression(string(b, i, patternEnd), string(b, patternEnd + 1, optionsEnd));
            }
            case 0x0D -> {
                return new BsonJavaScript(lengthPrefixedString(b, at));
            }
            case 0x10 -> {
                at[0] = i + 4;
                return int32(b, i);
            }
            case 0x11 -> {
                at[0] = i + 8;
                return new BsonTimestamp(int64(b, i));
            }
            case 0x12 -> {
                at[0] = i + 8;
                return int64(b, i);
            }
            case 0x13 -> {
                at[0] = i + 16;
                return new Decimal128(int64(b, i), int64(b, i + 8));
            }
            case 0x7F -> {
                return MaxKey.getInstance();
            }
            case (byte) 0xFF -> {
                return MinKey.getInstance();
            }
            default -> throw new IllegalArgumentException("unknown type: 0x" + Integer.toHexString(type));
        }
    }

    /** Bytes of a value of this type starting at {@code i}. */
    private static int size(byte type, byte[] b, int i) {
        return switch (type) {
            case 0x01, 0x09, 0x11, 0x12 -> 8;
            case 0x02, 0x0D, 0x0E -> 4 + int32(b, i);
            case 0x03, 0x04, 0x0F -> int32(b, i);
            case 0x05 -> 4 + 1 + int32(b, i);
            case 0x06, 0x0A, 0x7F, (byte) 0xFF -> 0;
            case 0x07 -> 12;
            case 0x08 -> 1;
            case 0x0B -> {
                int patternEnd = cstringEnd(b, i);
                yield cstringEnd(b, patternEnd + 1) + 1 - i;
            }
            case 0x0C -> 4 + int32(b, i) + 12;
            case 0x10 -> 4;
            case 0x13 -> 16;
            default -> throw new IllegalArgumentException("unknown type: 0x" + Integer.toHexString(type));
        };
    }

    private static Object binary(byte[] b, int[] at) {
        int i = at[0];
        int length = int32(b, i);
        byte subtype = b[i + 4];
        int data = i + 5;
        at[0] = data + length;
        switch (subtype) {
            case 0x00, (byte) 0x80 -> {
                byte[] bytes = new byte[length];
                System.arraycopy(b, data, bytes, 0, length);
                return new BinData(bytes);
            }
            case 0x03 -> {
                uuidLength(length);
                return new LegacyUUID(int64(b, data), int64(b, data + 8));
            }
            case 0x04 -> {
                uuidLength(length);
                return new UUID(int64BigEndian(b, data), int64BigEndian(b, data + 8));
            }
            default -> throw new IllegalArgumentException("Unknown subtype: " + subtype);
        }
    }

    private static void uuidLength(int length) {
        if (length != 16) {
            throw new IllegalArgumentException("Illegal length: " + length);
        }
    }

    private static String lengthPrefixedString(byte[] b, int[] at) {
        int i = at[0];
        int length = int32(b, i);
        int end = i + 4 + length - 1;
        if (b[end] != 0) {
            throw new IllegalArgumentException("Unexpected trailing byte: " + b[end]);
        }
        at[0] = end + 1;
        return string(b, i + 4, end);
    }

    private static int cstringEnd(byte[] b, int i) {
        while (b[i] != 0) {
            i++;
        }
        return i;
    }

    /** Bytes [from, to) as UTF-8; ASCII (most names and values) is copied as Latin-1, which is the same text. */
    private static String string(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] < 0) {
                return new String(b, from, to - from, StandardCharsets.UTF_8);
            }
        }
        return new String(b, from, to - from, StandardCharsets.ISO_8859_1);
    }

    private static int int32(byte[] b, int i) {
        return (b[i] & 0xff) | (b[i + 1] & 0xff) << 8 | (b[i + 2] & 0xff) << 16 | (b[i + 3] & 0xff) << 24;
    }

    private static long int64(byte[] b, int i) {
        return (int32(b, i) & 0xffffffffL) | ((long) int32(b, i + 4)) << 32;
    }

    private static long int64BigEndian(byte[] b, int i) {
        long v = 0;
        for (int k = 0; k < 8; k++) {
            v = (v << 8) | (b[i + k] & 0xff);
        }
        return v;
    }
}
