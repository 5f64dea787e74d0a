package local.freight.embeddedmongo;

import java.nio.charset.StandardCharsets;

import java.time.Instant;

import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * Order-preserving binary encoding of index key components: comparing two encoded keys byte by byte
 * (unsigned) gives the engine's own order of the values they encode (its {@code ValueComparator}:
 * null &lt; numbers &lt; strings &lt; ObjectId &lt; booleans &lt; dates; numbers by value, whatever
 * their Java type; strings by UTF-16 code unit, as {@code String.compareTo}). A descending component
 * is the same bytes inverted.
 *
 * <p>Each component is a type byte and a prefix-free body, so a key followed by anything still sorts
 * by its components first, and a bound made of a key's prefix plus {@code 0xFF} is above every key
 * that starts with that prefix (no type byte, plain or inverted, is 0xFF).
 */
final class IndexKeyCodec {

    static final byte NULL = 0x10;
    static final byte NUMBER = 0x20;
    static final byte STRING = 0x30;
    static final byte OBJECT_ID = 0x50;
    static final byte BOOLEAN = 0x60;
    static final byte DATE = 0x70;

    private static final double MAX_EXACT = 0x1p53;

    private IndexKeyCodec() {
    }

    /** The type byte of a value this codec can encode exactly, or 0 (then the document is not indexable on it). */
    static byte typeOf(Object value) {
        if (value == null) {
            return NULL;
        }
        if (value instanceof String) {
            return STRING;
        }
        if (value instanceof Integer) {
            return NUMBER;
        }
        if (value instanceof Long l) {
            return Math.abs((double) l) <= MAX_EXACT ? NUMBER : 0;
        }
        if (value instanceof Double d) {
            return d.isNaN() ? 0 : NUMBER;
        }
        if (value instanceof Instant) {
            return DATE;
        }
        if (value instanceof ObjectId) {
            return OBJECT_ID;
        }
        if (value instanceof Boolean) {
            return BOOLEAN;
        }
        return 0;
    }

    /** Appends one component (value of a type {@link #typeOf} accepts), inverted when {@code descending}. */
    static void write(KeyBytes out, Object value, boolean descending) {
        int start = out.size();
        byte type = typeOf(value);
        out.write(type);
        switch (type) {
            case NULL -> {
            }
            case NUMBER -> {
                double d = ((Number) value).doubleValue();
                long bits = Double.doubleToLongBits(d == 0 ? 0.0 : d); // -0.0 == 0.0
                writeLong(out, bits < 0 ? ~bits : bits ^ Long.MIN_VALUE);
            }
            case DATE -> writeLong(out, ((Instant) value).toEpochMilli() ^ Long.MIN_VALUE);
            case STRING -> writeString(out, (String) value);
            case OBJECT_ID -> out.writeBytes(((ObjectId) value).toByteArray());
            case BOOLEAN -> out.write(((Boolean) value) ? 1 : 0);
            default -> throw new IllegalArgumentException("not indexable: " + value);
        }
        if (descending) {
            out.invertFrom(start);
        }
    }

    static byte[] encode(Object value, boolean descending) {
        KeyBytes out = new KeyBytes(16);
        write(out, value, descending);
        return out.toByteArray();
    }

    private static void writeLong(KeyBytes out, long v) {
        for (int shift = 56; shift >= 0; shift -= 8) {
            out.write((int) (v >>> shift));
        }
    }

    /**
     * Chars 0x01–0x7F are one byte; NUL is 00 01 and every other char F0 hi lo; the string ends with
     * 00 00. The codes are prefix-free and ordered as the chars, so the bytes order as String.compareTo.
     */
    private static void writeString(KeyBytes out, String s) {
        out.reserve(s.length() + 2); // ASCII, the usual case: one growth at most
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x01 && c <= 0x7F) {
                out.write(c);
            } else if (c == 0) {
                out.write(0);
                out.write(1);
            } else {
                out.write(0xF0);
                out.write(c >>> 8);
                out.write(c & 0xFF);
            }
        }
        out.write(0);
        out.write(0);
    }

    /** Offset just past the component starting at {@code at}. */
    static int skip(byte[] key, int at, boolean descending) {
        int mask = descending ? 0xFF : 0;
        byte type = (byte) ((key[at] & 0xFF) ^ mask);
        int i = at + 1;
        return switch (type) {
            case NULL -> i;
            case NUMBER, DATE -> i + 8;
            case OBJECT_ID -> i + 12;
            case BOOLEAN -> i + 1;
            case STRING -> {
                for (;;) {
                    int b = (key[i] & 0xFF) ^ mask;
                    if (b == 0) {
                        if (((key[i + 1] & 0xFF) ^ mask) == 0) {
                            yield i + 2;
                        }
                        i += 2;
                    } else if (b == 0xF0) {
                        i += 3;
                    } else {
                        i += 1;
                    }
                }
            }
            default -> throw new IllegalStateException("corrupt index key at " + at);
        };
    }

    /** The value of the ascending component at {@code at} (numbers as Double). */
    static Object readValue(byte[] key, int at) {
        byte type = key[at];
        return switch (type) {
            case NULL -> null;
            case NUMBER -> {
                long v = readLong(key, at + 1);
                yield Double.longBitsToDouble(v < 0 ? v ^ Long.MIN_VALUE : ~v);
            }
            case DATE -> Instant.ofEpochMilli(readLong(key, at + 1) ^ Long.MIN_VALUE);
            case BOOLEAN -> key[at + 1] != 0;
            case STRING, OBJECT_ID -> readPosition(key, at);
            default -> throw new IllegalStateException("corrupt index key at " + at);
        };
    }

    private static long readLong(byte[] key, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (key[at + i] & 0xFF);
        }
        return v;
    }

    /** The value of the ascending String or ObjectId component at {@code at} (document positions). */
    static Object readPosition(byte[] key, int at) {
        byte type = key[at];
        int i = at + 1;
        if (type == OBJECT_ID) {
            byte[] id = new byte[12];
            System.arraycopy(key, i, id, 0, 12);
            return new ObjectId(id);
        }
        if (type != STRING) {
            throw new IllegalStateException("not a position component: " + type);
        }
        // Most positions (trip and document ids) hold no escaped byte: one Latin-1 copy of their bytes.
        for (int j = i; ; j++) {
            int b = key[j] & 0xFF;
            if (b == 0 && key[j + 1] == 0) {
                return new String(key, i, j - i, StandardCharsets.ISO_8859_1);
            }
            if (b == 0 || b == 0xF0) {
                break;
            }
        }
        StringBuilder s = new StringBuilder();
        for (;;) {
            int b = key[i] & 0xFF;
            if (b == 0) {
                if (key[i + 1] == 0) {
                    return s.toString();
                }
                s.append('\0');
                i += 2;
            } else if (b == 0xF0) {
                s.append((char) (((key[i + 1] & 0xFF) << 8) | (key[i + 2] & 0xFF)));
                i += 3;
            } else {
                s.append((char) b);
                i += 1;
            }
        }
    }
}
