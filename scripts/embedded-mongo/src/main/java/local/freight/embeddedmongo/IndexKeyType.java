package local.freight.embeddedmongo;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;

/**
 * MVStore type of an index map's keys and values: byte arrays compared unsigned, byte by byte, so
 * the map's order is the {@link IndexKeyCodec} order (H2's own byte[] handling compares signed or
 * not at all).
 */
final class IndexKeyType extends BasicDataType<byte[]> {

    static final IndexKeyType INSTANCE = new IndexKeyType();

    private IndexKeyType() {
    }

    @Override
    public int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    @Override
    public int getMemory(byte[] value) {
        return 24 + value.length;
    }

    @Override
    public void write(WriteBuffer buffer, byte[] value) {
        buffer.putVarInt(value.length).put(value);
    }

    @Override
    public byte[] read(ByteBuffer buffer) {
        byte[] value = new byte[DataUtils.readVarInt(buffer)];
        buffer.get(value);
        return value;
    }

    @Override
    public byte[][] createStorage(int size) {
        return new byte[size][];
    }
}
