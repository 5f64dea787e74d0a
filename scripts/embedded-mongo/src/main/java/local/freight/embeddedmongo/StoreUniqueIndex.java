package local.freight.embeddedmongo;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ByteArrayInputStream;
import java.io.Serializable;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.KeyConstraintError;

/**
 * A unique index (the {@code _id} index of every collection, and the service's unique indexes) kept
 * in an MVMap whose keys are the {@link IndexKeyCodec} bytes of the key values, compared unsigned.
 *
 * <p>The stock {@code H2UniqueIndex} keys its map by the {@code KeyValue} objects themselves, which
 * MVStore can only compare by Java-serialising both sides on every comparison: with the
 * {@code _id} look-up and insert of every document that was half of an insert's CPU time and two
 * thirds of its garbage. A store written by the previous version (its map named
 * {@code <collection>._index_<name>}, KeyValue keys) is converted once when it is opened, with
 * {@code PROGRESS} lines; the old map is removed in the store version that marks the new one
 * complete, so a crash during the conversion leaves the old map to convert again.
 */
final class StoreUniqueIndex extends AbstractUniqueIndex<Object> {

    /** Bookkeeping keys start with 0x00, below every entry (whose first byte is a type byte). */
    private static final byte[] BUILT = {0x00, 0x00};
    private static final byte[] FIRST_ENTRY = {0x01};
    /** A value {@link IndexKeyCodec} cannot encode: this type byte, a length and its Java serialisation. */
    private static final byte SERIALIZED = 0x7E;
    private static final int CONVERT_BATCH = 50_000;

    private final MVMap<byte[], Object> entries;
    /**
     * For a compound index: the same keys as a {@link SecondaryIndex}, kept with every write, which
     * {@link QueryPlan} can range over (an export's chunks by {@code tenant, exportId} in order
     * {@code n}); this map only answers whole keys. Null for a single field.
     */
    private final SecondaryIndex planned;

    private StoreUniqueIndex(MVMap<byte[], Object> entries, String name, List<IndexKey> keys, boolean sparse, SecondaryIndex planned) {
        super(name, keys, sparse);
        this.entries = entries;
        this.planned = planned;
    }

    /** The index's twin for query plans (compound, not sparse), or null. */
    SecondaryIndex planned() {
        return planned;
    }

    /** The map name of an index: the stock engine's name for its map, plus this suffix. */
    static String mapName(String fullCollectionName, String indexName) {
        return SecondaryIndex.entriesMapName(fullCollectionName, indexName) + ".bytes";
    }

    /**
     * Opens the index of {@code fullCollectionName}, converting the previous version's map if the
     * store has one (at open: before the server listens, no other writer).
     */
    static StoreUniqueIndex open(MVStore store, String fullCollectionName, String indexName, List<IndexKey> keys, boolean sparse,
                                 SecondaryIndex planned) {
        MVMap<byte[], Object> entries = store.openMap(mapName(fullCollectionName, indexName),
            new MVMap.Builder<byte[], Object>().keyType(IndexKeyType.INSTANCE).valueType(StoreObjectType.INSTANCE));
        if (!entries.containsKey(BUILT)) {
            String oldName = SecondaryIndex.entriesMapName(fullCollectionName, indexName);
            boolean converting = store.hasMap(oldName);
            StoreCommits.atomically(entries::clear);
            if (converting) {
                convert(store, store.openMap(oldName), entries, fullCollectionName + " " + indexName);
            }
            StoreCommits.atomically(() -> {
                entries.put(BUILT, Boolean.TRUE);
                if (converting) {
                    store.removeMap(oldName);
                }
            });
            if (converting) {
                StoreCommits.commit(store); // at open only: no operation is running
            }
        }
        return new StoreUniqueIndex(entries, indexName, keys, sparse, planned);
    }

    private static void convert(MVStore store, MVMap<Object, Object> old, MVMap<byte[], Object> entries, String what) {
        long total = old.sizeAsLong();
        Progress.report("converting unique index " + what + " (" + total + " keys, once)");
        long done = 0;
        Cursor<Object, Object> cursor = old.cursor(null);
        while (cursor.hasNext()) {
            Object key = cursor.next();
            Object position = cursor.getValue();
            if (key instanceof KeyValue keyValue) {
                entries.put(encode(keyValue), position);
            } else if (key instanceof List<?> list) { // stores of older mongo-java-server versions
                entries.put(encode(new KeyValue(list)), position);
            }
            if (++done % CONVERT_BATCH == 0) {
                StoreCommits.commit(store);
                Progress.report("converted " + done + "/" + total + " keys of unique index " + what);
            }
        }
    }

    static byte[] encode(KeyValue keyValue) {
        KeyBytes out = new KeyBytes(24);
        for (Object value : keyValue) {
            if (IndexKeyCodec.typeOf(value) != 0) {
                IndexKeyCodec.write(out, value, false);
            } else {
                byte[] serialized = serialize(value);
                out.write(SERIALIZED);
                for (int shift = 24; shift >= 0; shift -= 8) {
                    out.write(serialized.length >>> shift);
                }
                out.writeBytes(serialized);
            }
        }
        return out.toByteArray();
    }

    private static KeyValue decode(byte[] key) {
        List<Object> values = new ArrayList<>(2);
        int at = 0;
        while (at < key.length) {
            if (key[at] == SERIALIZED) {
                int length = ((key[at + 1] & 0xFF) << 24) | ((key[at + 2] & 0xFF) << 16) | ((key[at + 3] & 0xFF) << 8) | (key[at + 4] & 0xFF);
                values.add(deserialize(key, at + 5, length));
                at += 5 + length;
            } else {
                values.add(IndexKeyCodec.readValue(key, at));
                at = IndexKeyCodec.skip(key, at, false);
            }
        }
        return new KeyValue(values);
    }

    private static byte[] serialize(Object value) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject((Serializable) value);
        } catch (IOException | ClassCastException e) {
            throw new IllegalArgumentException("cannot index value " + value, e);
        }
        return bytes.toByteArray();
    }

    private static Object deserialize(byte[] key, int offset, int length) {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(key, offset, length))) {
            return in.readObject();
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("corrupt unique index key", e);
        }
    }

    @Override
    protected Object removeDocument(KeyValue keyValue) {
        return entries.remove(encode(keyValue));
    }

    @Override
    protected boolean putKeyPosition(KeyValue keyValue, Object position) {
        return entries.putIfAbsent(encode(keyValue), position) == null;
    }

    @Override
    protected Object getPosition(KeyValue keyValue) {
        return entries.get(encode(keyValue));
    }

    /** Only a regular-expression query on the key walks the index: its keys decoded. */
    @Override
    protected Iterable<Map.Entry<KeyValue, Object>> getIterable() {
        return () -> new Iterator<>() {
            private final Cursor<byte[], Object> cursor = entries.cursor(FIRST_ENTRY);

            @Override
            public boolean hasNext() {
                return cursor.hasNext();
            }

            @Override
            public Map.Entry<KeyValue, Object> next() {
                byte[] key = cursor.next();
                return new AbstractMap.SimpleImmutableEntry<>(decode(key), cursor.getValue());
            }
        };
    }

    @Override
    public synchronized void add(Document document, Object position, MongoCollection<Object> collection) {
        super.add(document, position, collection);
        if (planned != null) {
            planned.add(document, position, collection);
        }
    }

    @Override
    public synchronized Object remove(Document document) {
        Object position = super.remove(document);
        if (planned != null) {
            planned.remove(document);
        }
        return position;
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Object position, MongoCollection<Object> collection)
        throws KeyConstraintError {
        super.updateInPlace(oldDocument, newDocument, position, collection);
        if (planned != null) {
            planned.updateInPlace(oldDocument, newDocument, position, collection);
        }
    }

    @Override
    public long getCount() {
        return entries.sizeAsLong() - firstEntryIndex();
    }

    @Override
    public boolean isEmpty() {
        return getCount() == 0;
    }

    private long firstEntryIndex() {
        long i = entries.getKeyIndex(FIRST_ENTRY);
        return i >= 0 ? i : -i - 1;
    }

    @Override
    public long getDataSize() {
        return getCount();
    }

    @Override
    public void drop() {
        super.drop();
        if (planned != null) {
            planned.drop();
        }
        if (!entries.isClosed()) {
            entries.getStore().removeMap(entries);
        }
    }
}
