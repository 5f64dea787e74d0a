package local.freight.embeddedmongo;

import java.util.Arrays;

/**
 * A growable byte array for building index keys: {@code ByteArrayOutputStream} without its
 * synchronisation (every one-byte {@code write} took a monitor: 7 % of the engine's CPU in a
 * rebuild of kept totals, all in {@link IndexKeyCodec#write}). One thread builds each key.
 */
final class KeyBytes {

    private byte[] bytes;
    private int size;

    KeyBytes() {
        this(32);
    }

    KeyBytes(int capacity) {
        bytes = new byte[Math.max(capacity, 8)];
    }

    /** A copy of {@code prefix} with room for {@code more} bytes after it. */
    static KeyBytes copyOf(KeyBytes prefix, int more) {
        KeyBytes out = new KeyBytes(prefix.size + more);
        System.arraycopy(prefix.bytes, 0, out.bytes, 0, prefix.size);
        out.size = prefix.size;
        return out;
    }

    /** Room for {@code more} bytes more without growing. */
    void reserve(int more) {
        if (size + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
        }
    }

    void write(int b) {
        reserve(1);
        bytes[size++] = (byte) b;
    }

    void writeBytes(byte[] b) {
        reserve(b.length);
        System.arraycopy(b, 0, bytes, size, b.length);
        size += b.length;
    }

    int size() {
        return size;
    }

    /** Inverts every byte from {@code start} on (a descending component). */
    void invertFrom(int start) {
        for (int i = start; i < size; i++) {
            bytes[i] = (byte) ~bytes[i];
        }
    }

    byte[] toByteArray() {
        return Arrays.copyOf(bytes, size);
    }
}
