package local.freight.embeddedmongo;

import java.nio.ByteBuffer;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.ObjectDataType;

/**
 * H2's {@link ObjectDataType} (same order, same bytes on disk: a store written with either reads
 * with the other), safe to use from several threads at once.
 *
 * <p>Why: {@code ObjectDataType} remembers the type of the last value it handled in a plain field,
 * which its {@code write} and {@code getMemory} change and its comparison of two serialised objects
 * (our ObjectId {@code _id}s) reads twice, expecting it unchanged. MVStore serialises a captured
 * version on its own thread while operations go on (StoreCommits.commitInBackground), so a
 * document map's keys were written there (a string {@code _id}: the field says "string") while a
 * query or update compared two ObjectIds here: the two reads saw different types and the
 * comparison threw {@code UnsupportedOperationException: Can not compare} (the client got
 * "Unknown error: Can not compare [2.3.232/0]"). Here each thread has its own {@code ObjectDataType}
 * (its cache is all the state it has).
 */
final class StoreObjectType extends ObjectDataType {

    static final StoreObjectType INSTANCE = new StoreObjectType();

    private static final ThreadLocal<ObjectDataType> OWN = ThreadLocal.withInitial(ObjectDataType::new);

    private StoreObjectType() {
    }

    /** The builder of every map of the store keyed (or valued) by arbitrary objects: documents, meta, unindexed positions. */
    static <K, V> MVMap.Builder<K, V> builder() {
        return new MVMap.Builder<K, V>().keyType(INSTANCE).valueType(INSTANCE);
    }

    @Override
    public int compare(Object a, Object b) {
        if (a instanceof String x && b instanceof String y) {
            return x.compareTo(y); // what ObjectDataType does for two strings, without the look-up
        }
        return OWN.get().compare(a, b);
    }

    @Override
    public int getMemory(Object obj) {
        return OWN.get().getMemory(obj);
    }

    @Override
    public void write(WriteBuffer buff, Object obj) {
        OWN.get().write(buff, obj);
    }

    /** H2's tags (ObjectDataType): an array, its class id of {@code byte} (COMMON_CLASSES), a string, a string of 0–15 chars. */
    private static final byte TYPE_ARRAY = 14;
    private static final byte BYTE_CLASS = 1;
    private static final byte TYPE_STRING = 11;
    private static final int TAG_STRING_0_15 = 88;

    /**
     * A stored document is a byte[] (its BSON): H2 reads an array of 16 bytes or more one
     * {@code get()} at a time, testing the element class at each (6 % of the engine's CPU reading
     * documents); the same bytes are read here at once. A string (an {@code _id}) is read as H2
     * reads it, without its per-thread type switch. Anything else is H2's own read.
     */
    @Override
    public Object read(ByteBuffer buff) {
        int at = buff.position();
        byte tag = buff.get(at);
        if (tag == TYPE_ARRAY && buff.get(at + 1) == BYTE_CLASS) {
            buff.position(at + 2);
            byte[] data = new byte[DataUtils.readVarInt(buff)];
            buff.get(data);
            return data;
        }
        if (tag == TYPE_STRING) {
            buff.position(at + 1);
            return DataUtils.readString(buff, DataUtils.readVarInt(buff));
        }
        if (tag >= TAG_STRING_0_15 && tag <= TAG_STRING_0_15 + 15) {
            buff.position(at + 1);
            return DataUtils.readString(buff, tag - TAG_STRING_0_15);
        }
        return OWN.get().read(buff);
    }
}
