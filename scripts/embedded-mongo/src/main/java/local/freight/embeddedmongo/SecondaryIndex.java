package local.freight.embeddedmongo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Iterator;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * A non-unique (compound, multikey) index of the on-disk engine, which mongo-java-server does not
 * have: without it every query of the service walks both tenants' whole collection.
 *
 * <p>Kept in the store, beside the collection's documents: its entries are the keys of an MVMap
 * (read through the store's bounded page cache, so the heap does not grow with the data) and the
 * engine's write hooks (insert, update, delete, all under the collection's lock and inside
 * {@link StoreCommits#atomically}) change them in the same store version as the document, so a
 * kill -9 can never leave an index disagreeing with its collection. A map is complete once it
 * holds {@link #BUILT}; one without it (a store of the previous version, whose indexes lived in
 * the heap, or a build cut short by a crash) is built again from the documents when it is opened.
 *
 * <p>It only narrows the documents a query reads: the engine's matcher still decides every
 * candidate, so an index must return a superset of the matches. Each entry is the
 * {@link IndexKeyCodec} encoding of the key fields followed by the document's {@code _id}; a field
 * reached through arrays gives one entry per value (the product over fields); a missing field is
 * null. A document whose key cannot be encoded exactly (a sub-document or nested array as a value,
 * Decimal128, a non-String/ObjectId {@code _id}, ...) is kept in {@link #unindexed} and is a
 * candidate of every look-up.
 */
final class SecondaryIndex extends Index<Object> {

    private static final int MAX_ENTRIES_PER_DOCUMENT = 1000;
    private static final byte[] NOTHING = new byte[0];
    /** Bookkeeping keys start with 0x00, below every entry (whose first byte is a type byte, plain or inverted). */
    private static final byte[] BUILT = {0x00, 0x00};
    private static final byte MULTIKEY = 0x01;
    /** Written when the index is built by a version that records {@link #irregular} shapes (older stores: not exact for $elemMatch). */
    private static final byte[] SHAPES_TRACKED = {0x00, 0x02};
    private static final byte IRREGULAR = 0x03;
    private static final byte[] FIRST_ENTRY = {0x01};

    private final String[][] paths;
    private final boolean[] descending;
    private final MVMap<byte[], byte[]> entries;
    private final MVMap<Object, Object> unindexed;
    /** Fields that have had more than one value in one document: not usable for an ordered walk. */
    private final boolean[] multikey;
    /**
     * Fields {@code a.b} whose values some document held other than as one scalar per element of an
     * array {@code a} ({@code a} a sub-document, or {@code b} an array in an element): while false,
     * the entries in a range decide {@code a: {$elemMatch: {b: <range>}}} exactly.
     */
    private final boolean[] irregular;
    private volatile boolean shapesTracked;
    private volatile boolean ready;
    private volatile boolean usable = true;

    SecondaryIndex(String name, List<IndexKey> keys, MVMap<byte[], byte[]> entries, MVMap<Object, Object> unindexed) {
        // "sparse" as the engine's placeholder says, so a removal that finds no position is not an error.
        super(name, keys, true);
        this.entries = entries;
        this.unindexed = unindexed;
        paths = new String[keys.size()][];
        descending = new boolean[keys.size()];
        multikey = new boolean[keys.size()];
        irregular = new boolean[keys.size()];
        shapesTracked = entries.containsKey(SHAPES_TRACKED);
        for (int i = 0; i < keys.size(); i++) {
            irregular[i] = entries.containsKey(flag(IRREGULAR, i));
            paths[i] = keys.get(i).getKey().split("\\.");
            descending[i] = !keys.get(i).isAscending();
            multikey[i] = entries.containsKey(multikeyFlag(i));
            for (String part : paths[i]) {
                if (!part.isEmpty() && part.chars().allMatch(Character::isDigit)) {
                    usable = false; // positional paths ("a.0.b"): not worth the semantics
                }
            }
        }
        ready = entries.containsKey(BUILT);
    }

    /** The map names of an index of a collection: the stock engine's name for an index map (so its dropIndex and database drop remove ours too), and its unindexed positions. */
    static String entriesMapName(String fullCollectionName, String indexName) {
        return fullCollectionName + "._index_" + indexName;
    }

    static String unindexedMapName(String fullCollectionName, String indexName) {
        return entriesMapName(fullCollectionName, indexName) + ".unindexed";
    }

    private static byte[] multikeyFlag(int field) {
        return flag(MULTIKEY, field);
    }

    private static byte[] flag(byte kind, int field) {
        return new byte[] {0x00, kind, (byte) field};
    }

    int size() {
        return paths.length;
    }

    String field(int i) {
        return String.join(".", paths[i]);
    }

    boolean isDescending(int i) {
        return descending[i];
    }

    boolean isMultikey(int i) {
        return multikey[i];
    }

    /**
     * Field {@code i} is {@code a.b} and every document of the index held it as one scalar (or
     * nothing) per element of an array {@code a}: a document has an entry in a range of it exactly
     * when {@code a: {$elemMatch: {b: <that range>}}} matches it (entries may repeat a document).
     */
    boolean isElementExact(int i) {
        return shapesTracked && paths[i].length == 2 && !irregular[i];
    }

    boolean isReady() {
        return ready && usable;
    }

    /** Complete in the store (its entries were written with every document there). */
    boolean isBuilt() {
        return ready;
    }

    /** Before a build: whatever a previous, unfinished build left. */
    void clear() {
        ready = false;
        entries.clear();
        unindexed.clear();
        java.util.Arrays.fill(multikey, false);
        java.util.Arrays.fill(irregular, false);
    }

    /** Complete: written in the store version that holds the last entries of the build. */
    void markBuilt() {
        entries.put(BUILT, NOTHING);
        entries.put(SHAPES_TRACKED, NOTHING);
        shapesTracked = true;
        ready = true;
    }

    boolean hasUnindexed() {
        return !unindexed.isEmpty();
    }

    Iterable<Object> unindexed() {
        return unindexed.keySet();
    }

    /**
     * The entries in [from, to] (both inclusive), in index order or reversed; read from the
     * store's B-tree as they are visited.
     */
    Iterable<byte[]> range(byte[] from, byte[] to, boolean reverse) {
        return () -> new Iterator<>() {
            private final Iterator<byte[]> keys = ResumableCursor.keys(entries, reverse ? to : from, reverse);
            private byte[] next = advance();

            private byte[] advance() {
                while (keys.hasNext()) {
                    byte[] key = keys.next();
                    if (reverse ? Arrays.compareUnsigned(key, to) > 0 : Arrays.compareUnsigned(key, from) < 0) {
                        continue; // before the range (a start at the nearest key)
                    }
                    if (reverse ? Arrays.compareUnsigned(key, from) < 0 : Arrays.compareUnsigned(key, to) > 0) {
                        return null;
                    }
                    return key;
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public byte[] next() {
                if (next == null) {
                    throw new java.util.NoSuchElementException();
                }
                byte[] current = next;
                next = advance();
                return current;
            }
        };
    }

    /** Number of entries in [from, to], from the B-tree's counts (two look-ups, whatever the range holds). */
    long count(byte[] from, byte[] to) {
        return Math.max(0, firstAbove(to) - firstAtOrAbove(from));
    }

    private long firstAtOrAbove(byte[] key) {
        long i = entries.getKeyIndex(key);
        return i >= 0 ? i : -i - 1;
    }

    private long firstAbove(byte[] key) {
        long i = entries.getKeyIndex(key);
        return i >= 0 ? i + 1 : -i - 1;
    }

    /**
     * How the stored entries differ from those of {@code documents} (all of the collection's), or
     * null when they agree: the validate command's full check.
     */
    String verify(Iterable<DocumentWithPosition<Object>> documents) {
        long expected = 0;
        long missing = 0;
        long expectedUnindexed = 0;
        long missingUnindexed = 0;
        boolean[] multikeySeen = new boolean[paths.length];
        boolean[] irregularSeen = new boolean[paths.length];
        for (DocumentWithPosition<Object> document : documents) {
            for (int i = 0; i < paths.length; i++) {
                irregularSeen[i] |= isIrregular(document.getDocument(), paths[i]);
            }
            List<byte[]> keys = keysOf(document.getDocument(), document.getPosition(), multikeySeen);
            if (keys == null) {
                expectedUnindexed++;
                missingUnindexed += unindexed.containsKey(document.getPosition()) ? 0 : 1;
                continue;
            }
            for (byte[] key : keys) {
                expected++;
                missing += entries.containsKey(key) ? 0 : 1;
            }
        }
        long extra = entries.sizeAsLong() - firstAtOrAbove(FIRST_ENTRY) - (expected - missing);
        long extraUnindexed = unindexed.sizeAsLong() - (expectedUnindexed - missingUnindexed);
        List<String> problems = new ArrayList<>();
        if (missing + extra + missingUnindexed + extraUnindexed > 0) {
            problems.add(missing + " entries missing, " + extra + " entries of no document, " + missingUnindexed
                + " unindexed documents missing, " + extraUnindexed + " unindexed positions of no document");
        }
        for (int i = 0; i < paths.length; i++) {
            if (multikeySeen[i] && !multikey[i]) {
                problems.add(field(i) + " has several values in a document but is not marked multikey");
            }
            if (irregularSeen[i] && !irregular[i]) {
                problems.add(field(i) + " is held irregularly by a document but is not marked so");
            }
        }
        if (!ready) {
            problems.add("not built");
        }
        return problems.isEmpty() ? null : "index " + getName() + ": " + String.join("; ", problems);
    }

    /** The position (the {@code _id}) an entry points to. */
    Object positionOf(byte[] entry) {
        return IndexKeyCodec.readPosition(entry, keyLength(entry));
    }

    /** Length of an entry's key (its components), before the position. */
    int keyLength(byte[] entry) {
        int at = 0;
        for (boolean desc : descending) {
            at = IndexKeyCodec.skip(entry, at, desc);
        }
        return at;
    }

    // --- maintenance (the engine calls these under the collection's lock, inside StoreCommits.atomically) ---

    /** A document's entries worked out ahead (no lock held): its keys (null: unindexed) and the fields seen with several values. */
    record Keys(List<byte[]> keys, boolean[] multikeySeen) {
    }

    Keys prepare(Document document, Object position) {
        boolean[] seen = new boolean[paths.length];
        return new Keys(keysOf(document, position, seen), seen);
    }

    void index(Document document, Object position) {
        noteShape(document);
        Keys prepared = BsonStoreCollection.preparedKeys(this, document);
        List<byte[]> keys;
        if (prepared != null) {
            keys = prepared.keys();
            boolean[] seen = prepared.multikeySeen();
            for (int i = 0; i < seen.length; i++) {
                if (seen[i] && !multikey[i]) {
                    multikey[i] = true;
                    entries.put(multikeyFlag(i), NOTHING);
                }
            }
        } else {
            keys = keysOf(document, position, multikey);
        }
        if (keys == null) {
            unindexed.put(position, Boolean.TRUE);
        } else {
            for (byte[] key : keys) {
                entries.put(key, NOTHING);
            }
        }
    }

    private void unindex(Document document, Object position) {
        List<byte[]> keys = keysOf(document, position, null);
        if (keys == null) {
            unindexed.remove(position);
        } else {
            for (byte[] key : keys) {
                entries.remove(key);
            }
        }
    }

    /** Records (with the document's entries, in the same store version) a field it holds irregularly. */
    private void noteShape(Document document) {
        for (int i = 0; i < paths.length; i++) {
            if (!irregular[i] && isIrregular(document, paths[i])) {
                irregular[i] = true;
                entries.put(flag(IRREGULAR, i), NOTHING);
            }
        }
    }

    /** {@code a.b} held other than as one scalar per element of an array {@code a} (see {@link #irregular}). */
    static boolean isIrregular(Document document, String[] path) {
        if (path.length != 2) {
            return false;
        }
        Object parent = document.get(path[0]);
        if (parent instanceof Document sub) {
            return sub.containsKey(path[1]);
        }
        if (parent instanceof List<?> elements) {
            for (Object element : elements) {
                if (element instanceof List<?> || (element instanceof Document e && e.get(path[1]) instanceof List<?>)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The entries of a document, or null when it cannot be indexed exactly; a field with several
     * values is marked in {@code multikeySeen} (the index's own flags: also recorded in the store).
     */
    private List<byte[]> keysOf(Document document, Object position, boolean[] multikeySeen) {
        if (!(position instanceof String) && !(position instanceof ObjectId)) {
            return null;
        }
        List<List<Object>> values = new ArrayList<>(paths.length);
        long combinations = 1;
        for (int i = 0; i < paths.length; i++) {
            List<Object> found = new ArrayList<>(2);
            if (!collect(document, paths[i], 0, found)) {
                return null;
            }
            if (found.isEmpty()) {
                found.add(null); // missing: sorts and matches like null
            } else if (found.size() > 1) {
                List<Object> distinct = new ArrayList<>(new java.util.LinkedHashSet<>(found));
                if (distinct.size() > 1 && multikeySeen != null && !multikeySeen[i]) {
                    multikeySeen[i] = true;
                    if (multikeySeen == multikey) {
                        entries.put(multikeyFlag(i), NOTHING); // with the entries that made it so
                    }
                }
                found = distinct;
            }
            combinations *= found.size();
            if (combinations > MAX_ENTRIES_PER_DOCUMENT) {
                return null;
            }
            values.add(found);
        }
        List<byte[]> keys = new ArrayList<>((int) combinations);
        product(values, 0, new KeyBytes(64), position, keys);
        return keys;
    }

    private void product(List<List<Object>> values, int field, KeyBytes prefix, Object position, List<byte[]> out) {
        if (field == values.size()) {
            KeyBytes key = KeyBytes.copyOf(prefix, 32);
            IndexKeyCodec.write(key, position, false);
            out.add(key.toByteArray());
            return;
        }
        for (Object value : values.get(field)) {
            KeyBytes next = KeyBytes.copyOf(prefix, 24);
            IndexKeyCodec.write(next, value, descending[field]);
            product(values, field + 1, next, position, out);
        }
    }

    /**
     * The scalar values at {@code path} (through arrays of sub-documents, and the elements of an
     * array at the end of the path); false when a value there cannot be encoded exactly.
     */
    private static boolean collect(Object node, String[] path, int depth, List<Object> out) {
        if (depth == path.length) {
            if (node instanceof List<?> list) {
                for (Object element : list) {
                    if (element instanceof List<?> || element instanceof Document || IndexKeyCodec.typeOf(element) == 0) {
                        return false;
                    }
                    out.add(element);
                }
                if (list.isEmpty()) {
                    out.add(null);
                }
                return true;
            }
            if (node instanceof Document || IndexKeyCodec.typeOf(node) == 0) {
                return false;
            }
            out.add(node);
            return true;
        }
        if (node instanceof Document document) {
            Object child = document.get(path[depth]);
            if (child == null && !document.containsKey(path[depth])) {
                return true; // missing: contributes nothing
            }
            return collect(child, path, depth + 1, out);
        }
        if (node instanceof List<?> list) {
            for (Object element : list) {
                if (element instanceof List<?>) {
                    return false;
                }
                if (element instanceof Document && !collect(element, path, depth, out)) {
                    return false;
                }
            }
            return true;
        }
        return true; // a scalar before the end of the path: nothing there
    }

    @Override
    public Object getPosition(Document document) {
        return null;
    }

    @Override
    public void checkAdd(Document document, MongoCollection<Object> collection) {
    }

    @Override
    public void add(Document document, Object position, MongoCollection<Object> collection) {
        index(document, position);
    }

    @Override
    public Object remove(Document document) {
        unindex(document, document.get("_id"));
        return null; // not a unique index: the _id index gives the position
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Object> collection) {
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Object position, MongoCollection<Object> collection) {
        noteShape(newDocument);
        List<byte[]> oldKeys = keysOf(oldDocument, position, null);
        List<byte[]> newKeys = keysOf(newDocument, position, multikey);
        if (oldKeys == null || newKeys == null) {
            unindex(oldDocument, position);
            index(newDocument, position);
            return;
        }
        // Only the entries that change: most updates leave most indexed fields alone.
        java.util.TreeSet<byte[]> kept = new java.util.TreeSet<>(Arrays::compareUnsigned);
        kept.addAll(newKeys);
        for (byte[] key : oldKeys) {
            if (!kept.remove(key)) {
                entries.remove(key);
            }
        }
        for (byte[] key : kept) {
            entries.put(key, NOTHING);
        }
    }

    /** Never chosen by the engine's own planner: {@link QueryPlan} picks among these indexes. */
    @Override
    public boolean canHandle(Document query) {
        return false;
    }

    @Override
    public Iterable<Object> getPositions(Document query) {
        throw new UnsupportedOperationException();
    }

    @Override
    public long getCount() {
        return entries.sizeAsLong() - firstAtOrAbove(FIRST_ENTRY) + unindexed.sizeAsLong();
    }

    /** Built or being built: the engine must not "build" it again with two full scans. */
    @Override
    public boolean isEmpty() {
        return false;
    }

    @Override
    public long getDataSize() {
        return 0;
    }

    /** The maps go with the index (the stock engine's dropIndex then finds none to remove). */
    @Override
    public void drop() {
        usable = false;
        MVStore store = entries.getStore();
        if (!entries.isClosed()) {
            store.removeMap(entries);
        }
        if (!unindexed.isClosed()) {
            store.removeMap(unindexed);
        }
    }
}
