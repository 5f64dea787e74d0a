package local.freight.embeddedmongo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.Assert;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * A collection of the on-disk engine whose documents are stored as BSON bytes.
 *
 * <p>Why: the stock H2 backend stores {@code Document} objects, which MVStore writes with Java
 * serialisation; reading one back costs far more than decoding its BSON, and every query and
 * aggregation reads the whole collection (the engine has no secondary indexes). A stock store is
 * converted in place the first time it is opened (values are either {@code byte[]} or, before
 * conversion, {@code Document}; both are read correctly).
 *
 * <p>Query shortcuts, all exact (the engine's matcher still decides on every decoded document):
 * <ul>
 *   <li>a query that a {@link SecondaryIndex} narrows reads only the documents in its key ranges
 *       ({@link QueryPlan}); a sorted page whose sort is the index's order walks the index and stops
 *       after the page; a count the index decides exactly counts entries;</li>
 *   <li>string equalities on dotted paths of the query (a find, or an aggregation's leading
 *       {@code $match}) are looked for in the raw bytes first: a document whose BSON does not contain
 *       the encoded string cannot match, and is not decoded (top-level conditions: {@link RawQuery});</li>
 *   <li>a sort with a limit keeps only the best {@code skip + limit} documents (a bounded heap)
 *       instead of sorting everything that matched.</li>
 * </ul>
 */
final class BsonStoreCollection extends AbstractSynchronizedMongoCollection<Object> {

    private static final String DATA_SIZE_KEY = "dataSize";
    private static final String FORMAT_KEY = "valueFormat";
    private static final String FORMAT_BSON = "bson";

    /**
     * An aggregation's leading {@code $match} (empty for none) and the fields its pipeline reads
     * (null: all), set by {@link BsonStoreDatabase} for the command being run.
     */
    record Pending(String collectionName, Document match, NeededFields needs) {
    }

    static final ThreadLocal<Pending> AGGREGATION_PREFILTER = new ThreadLocal<>();

    private static final int BUILD_BATCH = 2000;

    private final MVMap<Object, Object> dataMap;
    private final MVMap<String, Object> metaMap;
    private final List<SecondaryIndex> secondaryIndexes = new CopyOnWriteArrayList<>();

    BsonStoreCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                        MVMap<Object, Object> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
        this.dataMap = dataMap;
        this.metaMap = metaMap;
        if (!metaMap.containsKey(DATA_SIZE_KEY)) {
            metaMap.put(DATA_SIZE_KEY, Long.valueOf(0));
        }
        if (!FORMAT_BSON.equals(metaMap.get(FORMAT_KEY))) {
            convertToBson();
        }
    }

    /**
     * One-time conversion of a stock store: Java-serialised documents → BSON, in place, in batches.
     * Each batch walks from a fresh iterator: an iterator held across commits may reach pages of
     * chunks the store has already reclaimed ("Chunk N not found").
     */
    private void convertToBson() {
        long total = dataMap.sizeAsLong();
        long done = 0;
        if (total > 0) {
            Progress.report("converting " + getFullName() + " to BSON storage (" + total + " documents, once)");
        }
        Object from = null;
        boolean first = true;
        for (;;) {
            List<Object> batch = new ArrayList<>(1000);
            Iterator<Object> keys = dataMap.keyIterator(from);
            while (keys.hasNext() && batch.size() < 1000) {
                Object key = keys.next();
                if (!first && batch.isEmpty() && key.equals(from)) {
                    continue; // the iterator starts at the last key of the previous batch
                }
                batch.add(key);
            }
            if (batch.isEmpty()) {
                break;
            }
            for (Object key : batch) {
                Object value = dataMap.get(key);
                if (value instanceof Document document) {
                    dataMap.put(key, encode(document));
                }
            }
            dataMap.getStore().commit();
            done += batch.size();
            from = batch.get(batch.size() - 1);
            first = false;
            Progress.report("converted " + done + "/" + total + " documents of " + getFullName());
        }
        metaMap.put(FORMAT_KEY, FORMAT_BSON);
    }

    @Override
    public void addIndex(Index<Object> index) {
        super.addIndex(index);
        if (getIndexes().stream().noneMatch(i -> i == index)) {
            return;
        }
        if (index instanceof SecondaryIndex secondary) {
            plan(secondary);
        } else if (index instanceof StoreUniqueIndex unique && unique.planned() != null && getIdField() != null) {
            plan(unique.planned()); // kept by the unique index's own write hooks
        }
    }

    /** Makes {@code secondary} one of the indexes {@link QueryPlan} chooses from, built first where the store lacks it. */
    private void plan(SecondaryIndex secondary) {
        if (getIdField() == null) {
            secondary.drop(); // documents without an _id key: nothing to point to
            return;
        }
        secondaryIndexes.add(secondary);
        if (secondary.isBuilt()) {
            return; // kept in the store with its documents: nothing to rebuild
        }
        if (dataMap.isEmpty()) {
            StoreCommits.atomically(() -> {
                secondary.clear();
                secondary.markBuilt(); // the write hooks keep it from the first document on
            });
        } else if (!BsonStoreBackend.deferIndexBuild(this)) {
            buildIndexes(); // createIndexes on a collection with documents: built before it answers
        }
    }

    @Override
    public void dropIndex(String indexName) {
        secondaryIndexes.removeIf(index -> index.getName().equals(indexName));
        super.dropIndex(indexName);
    }

    /**
     * Builds the indexes not yet complete in the store (a store of the previous version, whose
     * indexes lived in the heap; a build a crash cut short; createIndexes on existing documents),
     * decoding each document once for all of them, in batches under the collection's lock: a write
     * between two batches runs the index hooks itself (adding an entry twice is harmless, an entry
     * of a document deleted before its batch is never added). Committed every few batches, so the
     * unsaved pages stay small; an index is used (and marked complete in the store) once its last
     * batch is done; until then queries scan.
     */
    void buildIndexes() {
        List<SecondaryIndex> pending = secondaryIndexes.stream().filter(index -> !index.isBuilt()).toList();
        if (pending.isEmpty()) {
            return;
        }
        long started = System.nanoTime();
        long documents = 0;
        long total = dataMap.sizeAsLong();
        Progress.report("building " + pending.size() + " indexes of " + getFullName() + " in the store ("
            + total + " documents, once)");
        try {
            StoreCommits.atomically(() -> pending.forEach(SecondaryIndex::clear));
            Object[] from = {null};
            for (;;) {
                int n = StoreCommits.atomically(() -> buildBatch(pending, from));
                if (n == 0) {
                    break;
                }
                documents += n;
                if (documents % 20_000 < BUILD_BATCH) {
                    StoreCommits.commit(dataMap.getStore());
                    Progress.report("indexed " + documents + "/" + total + " documents of " + getFullName());
                }
            }
            StoreCommits.atomically(() -> pending.forEach(SecondaryIndex::markBuilt));
            StoreCommits.commit(dataMap.getStore());
        } catch (RuntimeException e) {
            System.err.println("embedded-mongo: index build of " + getFullName() + " failed, queries keep scanning: " + e);
            return;
        }
        Progress.report(pending.size() + " indexes of " + getFullName() + " built from " + documents + " documents in "
            + (System.nanoTime() - started) / 1_000_000 + " ms");
    }

    /** One batch of {@link #buildIndexes} after the key {@code from[0]}, which it advances; the number of documents. */
    private synchronized int buildBatch(List<SecondaryIndex> pending, Object[] from) {
        int n = 0;
        Cursor<Object, Object> cursor = dataMap.cursor(from[0]);
        while (cursor.hasNext() && n < BUILD_BATCH) {
            Object key = cursor.next();
            if (from[0] != null && n == 0 && key.equals(from[0])) {
                continue; // the cursor starts at the last key of the previous batch
            }
            Document document = decode(cursor.getValue());
            for (SecondaryIndex index : pending) {
                index.index(document, key);
            }
            from[0] = key;
            n++;
        }
        return n;
    }

    /**
     * The validate command: besides the engine's figures, each secondary index is checked against
     * every document (the entries it should hold, and nothing else); {@code valid: false} and the
     * differences in {@code errors} when they disagree.
     */
    @Override
    public synchronized Document validate() {
        Document response = super.validate();
        List<String> errors = new ArrayList<>();
        for (SecondaryIndex index : secondaryIndexes) {
            String problem = index.verify(() -> streamAllDocumentsWithPosition().iterator());
            if (problem != null) {
                errors.add(problem);
            }
        }
        if (!errors.isEmpty()) {
            response.put("valid", Boolean.FALSE);
            response.put("errors", errors);
        }
        return response;
    }

    // --- writes: each one whole in a store version (StoreCommits), with its index entries ---

    @Override
    public void addDocument(Document document) {
        StoreCommits.atomically(() -> super.addDocument(document));
    }

    @Override
    public void addDocuments(Stream<Document> documents) {
        StoreCommits.atomically(() -> super.addDocuments(documents));
    }

    /**
     * The stock loop (write errors by index; an ordered insert stops at the first), but each
     * document is its own whole operation for {@link StoreCommits} and for the collection's lock:
     * a commit waits for one document and its index entries, not for a batch of a thousand, so
     * the window a kill -9 can lose stays the commit interval plus one commit (docs/reliability.md).
     * Other operations may run between two documents of a batch, as on MongoDB.
     */
    @Override
    public List<Document> insertDocuments(List<Document> documents, boolean isOrdered) {
        List<Document> errors = new ArrayList<>();
        int index = 0;
        // The stored bytes and index entries of each document, worked out before any lock is taken:
        // another connection's batch is written meanwhile (the seed's two tenants, an import's batches).
        java.util.IdentityHashMap<Document, Prepared> prepared = prepare(documents);
        PREPARED.set(prepared);
        try {
            for (Document document : documents) {
                try {
                    addDocument(document);
                } catch (MongoServerError e) {
                    Document error = new Document();
                    error.put("index", Integer.valueOf(index));
                    error.put("errmsg", e.getMessageWithoutErrorCode());
                    error.put("code", Integer.valueOf(e.getCode()));
                    error.putIfNotNull("codeName", e.getCodeName());
                    errors.add(error);
                    if (isOrdered) {
                        break;
                    }
                }
                index++;
            }
        } finally {
            PREPARED.remove();
        }
        return errors;
    }

    /** What {@link #insertDocuments} worked out for a document: its stored bytes and each index's entries. */
    record Prepared(byte[] bytes, java.util.IdentityHashMap<SecondaryIndex, SecondaryIndex.Keys> keys) {
    }

    private static final ThreadLocal<java.util.IdentityHashMap<Document, Prepared>> PREPARED = new ThreadLocal<>();

    /** The prepared entries of {@code index} for {@code document} in this thread's insert, or null. */
    static SecondaryIndex.Keys preparedKeys(SecondaryIndex index, Document document) {
        java.util.IdentityHashMap<Document, Prepared> prepared = PREPARED.get();
        Prepared p = prepared == null ? null : prepared.get(document);
        return p == null ? null : p.keys().get(index);
    }

    private java.util.IdentityHashMap<Document, Prepared> prepare(List<Document> documents) {
        java.util.IdentityHashMap<Document, Prepared> prepared = new java.util.IdentityHashMap<>();
        String idField = getIdField();
        if (idField == null) {
            return prepared;
        }
        List<SecondaryIndex> indexes = List.copyOf(secondaryIndexes);
        // Pure computation on documents no other thread sees yet: split over the cores when the batch is large.
        java.util.stream.Stream<Document> stream = documents.size() >= 64 ? documents.parallelStream() : documents.stream();
        List<Prepared> each = stream.map(document -> prepareOne(document, idField, indexes)).toList();
        for (int i = 0; i < documents.size(); i++) {
            if (each.get(i) != null) {
                prepared.put(documents.get(i), each.get(i));
            }
        }
        return prepared;
    }

    private static Prepared prepareOne(Document document, String idField, List<SecondaryIndex> indexes) {
        Object id = document.get(idField);
        if (!(id instanceof String) && !(id instanceof de.bwaldvogel.mongo.bson.ObjectId)) {
            return null; // an _id the engine adds or checks itself: nothing prepared
        }
        try {
            java.util.IdentityHashMap<SecondaryIndex, SecondaryIndex.Keys> keys = new java.util.IdentityHashMap<>();
            for (SecondaryIndex index : indexes) {
                keys.put(index, index.prepare(document, id));
            }
            return new Prepared(encode(document), keys);
        } catch (RuntimeException e) {
            return null; // left to the engine's own path, which reports what is wrong with the document
        }
    }


    @Override
    public Document findAndModify(Document query) {
        return StoreCommits.atomically(() -> super.findAndModify(query));
    }

    /** Documents a deleteMany removes per store operation: a commit may come between two of them. */
    private static final int DELETE_MANY_CHUNK = 256;

    /**
     * A deleteOne as the engine does it. A deleteMany reads its matches as a stream and removes each
     * as it comes, {@link #DELETE_MANY_CHUNK} per operation, so neither the matches nor the unsaved
     * pages of their removal fill the heap: the engine's own path decoded every match into one list
     * first, and one tenant's 650,000 shrinkage findings at 1M/1M (or its few hundred fleet days of
     * ~1 MB each) ran the 1 GB heap out. Each operation takes the store's lock, then the
     * collection's, as every other does; between two, other writes may change the collection, so
     * each document is removed as it is then, if it still matches (a scan reads the version of its
     * start). MongoDB's deleteMany is not one atomic operation either.
     */
    @Override
    public int deleteDocuments(Document selector, int limit, Oplog oplog) {
        if (limit > 0 || getIdField() == null) {
            // A deleteOne; or a collection without _id (the engine's index list), whose keys are not its documents'.
            return StoreCommits.atomically(() -> super.deleteDocuments(selector, limit, oplog));
        }
        List<Object> ids = idLookup(selector);
        // As matchDocuments does: ids looked up are the _id condition's, the rest is left to check.
        Document rest = ids != null ? withoutId(selector) : selector;
        List<Iterator<Document>> matching = new ArrayList<>(1);
        List<Object> deletedIds = new ArrayList<>();
        int[] deleted = {0};
        boolean more = true;
        while (more) {
            more = StoreCommits.atomically(() -> {
                synchronized (this) {
                    if (matching.isEmpty()) {
                        matching.add((ids != null ? byIds(ids) : candidates(selector)).filter(document -> documentMatchesQuery(document, rest)).iterator());
                    }
                    Iterator<Document> documents = matching.get(0);
                    for (int n = 0; n < DELETE_MANY_CHUNK && documents.hasNext(); n++) {
                        Object key = Missing.ofNullable(Utils.getSubdocumentValue(documents.next(), getIdField()));
                        Document current = getDocument(key);
                        if (current == null || !documentMatchesQuery(current, rest)) {
                            continue;
                        }
                        if (!(oplog instanceof NoopOplog)) {
                            deletedIds.add(current.get(getIdField()));
                        }
                        removeDocument(current);
                        deleted[0]++;
                    }
                    return documents.hasNext();
                }
            });
        }
        oplog.handleDelete(getFullName(), selector, deletedIds);
        return deleted[0];
    }

    @Override
    public Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters, boolean isMulti,
                                    boolean isUpsert, Oplog oplog) {
        return StoreCommits.atomically(() -> super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog));
    }

    @Override
    public void removeDocument(Document document) {
        StoreCommits.atomically(() -> super.removeDocument(document));
    }

    private QueryPlan planFor(Document query, Document orderBy) {
        return QueryPlan.choose(query, secondaryIndexes, orderBy);
    }

    /** The stored values at {@code positions}, in their order (a document deleted meanwhile is skipped). */
    private Stream<Object> storedValues(List<Object> positions) {
        return positions.stream().map(dataMap::get).filter(java.util.Objects::nonNull);
    }

    /** The stored values a plan selects (all of them without one), in the store's key order. */
    private Iterable<Object> storedValues(QueryPlan plan) {
        if (plan == null) {
            return ResumableCursor.values(dataMap);
        }
        List<Object> positions = plan.positions(dataMap.getKeyType()::compare);
        return () -> positions.stream().map(dataMap::get).filter(java.util.Objects::nonNull).iterator();
    }

    static byte[] encode(Document document) {
        ByteBuf buffer = Unpooled.buffer(512);
        try {
            BsonEncoder.encodeDocument(document, buffer);
            byte[] bytes = new byte[buffer.readableBytes()];
            buffer.readBytes(bytes);
            return bytes;
        } finally {
            buffer.release();
        }
    }

    static Document decode(Object stored) {
        return decode(stored, null);
    }

    /** The stored document, only the fields {@code needs} names when it is not null. */
    static Document decode(Object stored, NeededFields needs) {
        if (stored instanceof byte[] bytes) {
            return StoredBsonDecoder.decode(bytes, needs);
        }
        return (Document) stored;
    }

    /**
     * The data size is counted here from the stored bytes ({@link #addDocumentInternal},
     * {@link #removeDocument(Object)}, {@link #handleUpdate}): the engine's own count encoded every
     * inserted, updated or removed document once more only to measure it, a quarter of an insert's
     * time (JFR, the seed).
     */
    @Override
    protected boolean tracksDataSize() {
        return false;
    }

    /** The BSON size of a stored value (a document of a store not yet converted is encoded to measure it). */
    private static int storedSize(Object stored) {
        return stored instanceof byte[] bytes ? bytes.length : encode((Document) stored).length;
    }

    @Override
    protected void updateDataSize(int sizeDelta) {
        synchronized (metaMap) {
            Number value = (Number) metaMap.get(DATA_SIZE_KEY);
            metaMap.put(DATA_SIZE_KEY, Long.valueOf(value.longValue() + sizeDelta));
        }
    }

    @Override
    protected int getDataSize() {
        return ((Number) metaMap.get(DATA_SIZE_KEY)).intValue();
    }

    @Override
    protected Object addDocumentInternal(Document document) {
        final Object key = getIdField() != null ? Utils.getSubdocumentValue(document, getIdField()) : UUID.randomUUID();
        java.util.IdentityHashMap<Document, Prepared> prepared = PREPARED.get();
        Prepared p = prepared == null ? null : prepared.get(document);
        byte[] bytes = p != null ? p.bytes() : encode(document);
        Object previous = dataMap.put(Missing.ofNullable(key), bytes);
        Assert.isNull(previous, () -> "Document with key '" + key + "' already existed in " + this);
        updateDataSize(bytes.length);
        return key;
    }

    @Override
    public int count() {
        return dataMap.size();
    }

    @Override
    public boolean isEmpty() {
        return dataMap.isEmpty();
    }

    @Override
    protected Document getDocument(Object position) {
        Object stored = dataMap.get(position);
        return stored == null ? null : decode(stored);
    }

    @Override
    protected void removeDocument(Object position) {
        Object removed = dataMap.remove(position);
        if (removed == null) {
            throw new NoSuchElementException("No document with key " + position);
        }
        updateDataSize(-storedSize(removed));
    }

    @Override
    protected void handleUpdate(Object position, Document oldDocument, Document newDocument) {
        byte[] bytes = encode(newDocument);
        Object previous = dataMap.put(Missing.ofNullable(position), bytes);
        updateDataSize(bytes.length - (previous == null ? 0 : storedSize(previous)));
    }

    @Override
    protected Stream<DocumentWithPosition<Object>> streamAllDocumentsWithPosition() {
        return dataMap.entrySet().stream()
            .map(entry -> new DocumentWithPosition<>(decode(entry.getValue()), entry.getKey()));
    }

    /**
     * The string or ObjectId {@code _id}s a query names ({@code _id: v} or {@code _id: {$in: [...]}}),
     * or null. The stock engine reads the whole collection for {@code {tenant, _id: {$in}}}; these
     * are fetched by key instead (the query is still applied to them).
     */
    private static List<Object> idLookup(Document query) {
        Object id = query.get("_id");
        List<?> ids;
        if (id instanceof String || id instanceof de.bwaldvogel.mongo.bson.ObjectId) {
            ids = List.of(id);
        } else if (id instanceof Document operators && operators.size() == 1 && operators.get("$in") instanceof List<?> in) {
            ids = in;
        } else {
            return null;
        }
        List<Object> keys = new ArrayList<>(ids.size());
        for (Object value : ids) {
            if (!(value instanceof String) && !(value instanceof de.bwaldvogel.mongo.bson.ObjectId)) {
                return null; // numbers: 1, 1L and 1.0 are one _id but different keys
            }
            keys.add(value);
        }
        return keys;
    }

    /** The query without its {@code _id} condition (a copy; the same document when it has none). */
    private static Document withoutId(Document query) {
        if (!query.containsKey("_id")) {
            return query;
        }
        Document rest = new Document();
        query.forEach((key, value) -> {
            if (!key.equals("_id")) {
                rest.put(key, value);
            }
        });
        return rest;
    }

    /** The stored documents with these keys, in the store's key order (its natural order), decoded. */
    private Stream<Document> byIds(List<Object> keys) {
        return keys.stream()
            .distinct()
            .filter(dataMap::containsKey)
            .sorted(dataMap.getKeyType()::compare)
            .map(dataMap::get)
            .map(BsonStoreCollection::decode);
    }

    /** Every document that may match {@code query}, decoded; the caller still applies the query. */
    private Stream<Document> candidates(Document query) {
        return candidates(query, null);
    }

    /** As {@link #candidates(Document)}, each decoded as far as {@code needs} reads (whole when null). */
    private Stream<Document> candidates(Document query, NeededFields needs) {
        List<Object> ids = idLookup(query);
        if (ids != null) {
            return byIds(ids);
        }
        List<byte[]> needles = StringNeedles.of(query);
        RawQuery raw = RawQuery.compile(query);
        QueryPlan plan = planFor(query, null);
        List<QueryPlan> union = QueryPlan.chooseUnion(query, secondaryIndexes, plan);
        Stream<Object> values = union != null ? storedValues(QueryPlan.positions(union, dataMap.getKeyType()::compare))
            : plan == null ? java.util.stream.StreamSupport.stream(ResumableCursor.values(dataMap).spliterator(), false)
            : java.util.stream.StreamSupport.stream(storedValues(plan).spliterator(), false);
        if (!needles.isEmpty()) {
            values = values.filter(v -> !(v instanceof byte[] bytes) || StringNeedles.containsAll(bytes, needles));
        }
        if (!raw.isEmpty()) {
            values = values.filter(v -> !(v instanceof byte[] bytes) || raw.evaluate(bytes) != RawQuery.Answer.NO_MATCH);
        }
        return values.map(v -> decode(v, needs));
    }

    /**
     * Number of documents matching {@code query} when its top-level conditions are all simple
     * (see {@link RawQuery}): counted on the bytes, decoding only documents the bytes cannot decide.
     * Null when the query is not simple (the caller runs the engine's pipeline).
     */
    synchronized Long countMatching(Document query) {
        Long covered = countCovered(query);
        if (covered != null) {
            return covered;
        }
        RawQuery raw = RawQuery.compile(query);
        if (!raw.complete) {
            return null;
        }
        List<byte[]> needles = StringNeedles.of(query);
        QueryPlan plan = planFor(query, null);
        long n = 0;
        for (Object value : storedValues(plan)) {
            if (value instanceof byte[] bytes) {
                if (!needles.isEmpty() && !StringNeedles.containsAll(bytes, needles)) {
                    continue;
                }
                RawQuery.Answer answer = raw.evaluate(bytes);
                if (answer == RawQuery.Answer.MATCH
                    || (answer == RawQuery.Answer.UNKNOWN && documentMatchesQuery(decode(bytes), query))) {
                    n++;
                }
            } else if (documentMatchesQuery((Document) value, query)) {
                n++;
            }
        }
        return n;
    }

    /**
     * The count of a query an index decides exactly ({@link QueryPlan#covered}: equalities, {@code $in}
     * and ranges on its fields), from its entries alone; null otherwise. {@code f: {$ne: v}} is
     * counted as (the rest of the query) − (the rest with {@code f: v}) when both are covered: the
     * "not cancelled" list filter. {@code $ne} matches a document exactly when no value of {@code f}
     * (one, several in an array, or none) is {@code v}: exactly those the second count leaves out.
     */
    private Long countCovered(Document query) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            if (entry.getValue() instanceof Document op && op.size() == 1 && op.containsKey("$ne")
                && (op.get("$ne") instanceof String || op.get("$ne") instanceof Number)) {
                Document rest = new Document(query);
                rest.remove(entry.getKey());
                Document equal = new Document(rest).append(entry.getKey(), op.get("$ne"));
                Long all = countCovered(rest);
                Long excluded = all == null ? null : countCovered(equal);
                return excluded == null ? null : all - excluded;
            }
        }
        QueryPlan plan = planFor(query, null);
        if (plan == null || !(plan.covered || plan.coveredRepeating)) {
            return null;
        }
        long n = plan.covered ? plan.entryCount() : plan.distinctCount();
        for (Object position : plan.index.unindexed()) {
            Object value = dataMap.get(position);
            if (value != null && documentMatchesQuery(decode(value), query)) {
                n++;
            }
        }
        return n;
    }

    /** Signals that the bytes cannot decide a sorted page: run the engine's own path instead. */
    private static final class NotSimple extends RuntimeException {
        NotSimple() {
            super(null, null, false, false);
        }
    }

    /**
     * The page ({@code skip}, then {@code limit}) of a simple query and a sort on top-level fields,
     * chosen on the bytes (a bounded heap of skip + limit); only the page's documents are decoded,
     * so a deep page costs about what the first one does. Null when the bytes cannot decide (the
     * caller falls back to the engine's path).
     */
    private List<Document> pageOnBytes(Document query, Document orderBy, int skip, int limit, QueryPlan plan) {
        int keep = skip + limit;
        RawQuery raw = RawQuery.compile(query);
        if (!raw.complete) {
            return null;
        }
        byte[][] fields = new byte[orderBy.size()][];
        int[] directions = new int[orderBy.size()];
        int i = 0;
        for (Map.Entry<String, Object> entry : orderBy.entrySet()) {
            if (entry.getKey().startsWith("$") || entry.getKey().contains(".") || !(entry.getValue() instanceof Number n)) {
                return null;
            }
            fields[i] = entry.getKey().getBytes(StandardCharsets.UTF_8);
            directions[i++] = n.intValue() < 0 ? -1 : 1;
        }
        record Candidate(Comparable<?>[] keys, long arrival, byte[] bytes) {
        }
        Comparator<Candidate> order = (a, b) -> {
            for (int k = 0; k < directions.length; k++) {
                int c = compareKeys(a.keys()[k], b.keys()[k]);
                if (c != 0) {
                    return c * directions[k];
                }
            }
            return Long.compare(a.arrival(), b.arrival());
        };
        List<byte[]> needles = StringNeedles.of(query);
        PriorityQueue<Candidate> worstFirst = new PriorityQueue<>(keep + 1, order.reversed());
        long arrival = 0;
        List<Candidate> best;
        try {
            for (Object value : storedValues(plan)) {
                if (!(value instanceof byte[] bytes)) {
                    return null;
                }
                long position = arrival++;
                if (!needles.isEmpty() && !StringNeedles.containsAll(bytes, needles)) {
                    continue;
                }
                RawQuery.Answer answer = raw.evaluate(bytes);
                if (answer == RawQuery.Answer.NO_MATCH) {
                    continue;
                }
                if (answer == RawQuery.Answer.UNKNOWN) {
                    return null;
                }
                Comparable<?>[] keys = RawQuery.sortKeys(bytes, fields);
                if (keys == null) {
                    return null;
                }
                Candidate candidate = new Candidate(keys, position, bytes);
                if (worstFirst.size() < keep) {
                    worstFirst.add(candidate);
                } else if (order.compare(candidate, worstFirst.peek()) < 0) {
                    worstFirst.poll();
                    worstFirst.add(candidate);
                }
            }
            best = new ArrayList<>(worstFirst);
            best.sort(order); // compares too: mixed types can still surface here
        } catch (NotSimple e) {
            return null;
        }
        List<Document> documents = new ArrayList<>(Math.min(limit, best.size()));
        for (Candidate c : best.subList(Math.min(skip, best.size()), best.size())) {
            documents.add(decode(c.bytes()));
        }
        return documents;
    }

    /**
     * A sorted page read in the index's order: entries are visited in sort order and the walk stops
     * once {@code skip + limit} documents matched, so the first page of a tenant's list reads about
     * a page of documents, whatever the collection's size.
     */
    private List<Document> walkInOrder(QueryPlan plan, int direction, Document query, int skip, int limit, int maxReads) {
        return pageInOrder(plan.walkPositions(direction, dataMap.getKeyType()::compare), plan.covered, query, skip, limit, maxReads);
    }

    /**
     * The plan's documents along its index in the sort's order, read as the stream is: a sorted find
     * without a limit that its index orders (an export's file, chunk by chunk in order {@code n}) is
     * streamed batch by batch as an unsorted one is, where the engine's path gathered and sorted
     * every match before the first batch (a 1.4 GB file in a 1.28 GB heap).
     */
    private Stream<Document> inIndexOrder(QueryPlan plan, int direction) {
        Iterable<Object> positions = plan.walkPositions(direction, dataMap.getKeyType()::compare);
        return java.util.stream.StreamSupport.stream(positions.spliterator(), false)
            .map(dataMap::get)
            .filter(java.util.Objects::nonNull)
            .map(BsonStoreCollection::decode);
    }

    /**
     * A sorted page whose plan narrows through an index that cannot give the sort's order but holds
     * the sort's fields (legs offloaded in a month, newest trip first: {@code company,
     * shipments.unloadDate, createdAt, _id}): the candidates are ranked from the index entries'
     * bytes, without reading a document, then read in that order until the page is full. A month of
     * a large tenant's trips reads about a page of documents instead of every trip of the month.
     */
    private List<Document> pageByIndexKeys(QueryPlan plan, Document orderBy, Document query, int skip, int limit) {
        Iterable<Object> ranked = plan == null ? null : plan.positionsInOrder(orderBy, MAX_RANKED_ENTRIES, dataMap.getKeyType()::compare);
        if (ranked == null) {
            return null;
        }
        // Each document once: an exact plan's skipped candidates need not be read.
        return pageInOrder(ranked, plan.covered || plan.coveredRepeating, query, skip, limit, Integer.MAX_VALUE);
    }

    /** Entries a ranked page may sort in memory (about 40 bytes each): beyond it the engine's own paths. */
    private static final long MAX_RANKED_ENTRIES = 2_000_000L;

    /** Ranges up to this many entries are ranked before any walk (a month of a large tenant's legs). */
    private static final long RANK_FIRST_ENTRIES = 100_000L;

    /**
     * The page of documents at {@code positions} (in the sort's order) that match {@code query}:
     * {@code skip} matches, then up to {@code limit}. {@code exact}: every position matches, so a
     * skipped one is not even read. Null when {@code maxReads} documents were read before the page
     * filled (the caller takes another plan).
     */
    private List<Document> pageInOrder(Iterable<Object> positions, boolean exact, Document query, int skip, int limit, int maxReads) {
        RawQuery raw = RawQuery.compile(query);
        List<Document> page = new ArrayList<>(limit);
        int matched = 0;
        int reads = 0;
        for (Object position : positions) {
            if (exact && matched < skip) {
                matched++;
                continue;
            }
            if (reads++ == maxReads) {
                return null;
            }
            Object stored = dataMap.get(position);
            if (stored == null) {
                continue;
            }
            byte[] bytes = stored instanceof byte[] b ? b : null;
            RawQuery.Answer answer = bytes == null || raw.isEmpty() ? RawQuery.Answer.UNKNOWN : raw.evaluate(bytes);
            if (answer == RawQuery.Answer.NO_MATCH) {
                continue;
            }
            Document document = null;
            if (answer != RawQuery.Answer.MATCH || !raw.complete) {
                document = decode(stored);
                if (!documentMatchesQuery(document, query)) {
                    continue;
                }
            }
            if (matched++ >= skip) {
                page.add(document != null ? document : decode(stored));
                if (page.size() == limit) {
                    break;
                }
            }
        }
        return page;
    }

    /**
     * A sorted page whose best-narrowing plan leaves the sort to do ({@code client} and a leg date
     * range: the client's trips in the range, sorted newest first): first a bounded walk of an index
     * that yields the sort's order, stopping at the page, as MongoDB's plan trial lets the plan that
     * fills the page first win. Recent pages of a large range fill in a few reads there instead of
     * reading and sorting the whole range; a selective query exhausts the budget and falls back
     * (null). The budget bounds what the trial adds to the fallback.
     */
    private List<Document> trialInOrder(Document query, Document orderBy, int skip, int limit) {
        QueryPlan ordered = QueryPlan.chooseOrdered(query, secondaryIndexes, orderBy);
        if (ordered == null) {
            return null;
        }
        int budget = (int) Math.min(10_000L, 1_000L + 10L * (skip + limit));
        return walkInOrder(ordered, ordered.orderFor(orderBy), query, skip, limit, budget);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compareKeys(Comparable a, Comparable b) {
        if (a.getClass() != b.getClass()) {
            throw new NotSimple(); // mixed types in one sort field: the engine's type order decides
        }
        return a.compareTo(b);
    }

    @Override
    public Stream<Document> queryAllAsStream() {
        Pending pending = AGGREGATION_PREFILTER.get();
        if (pending != null && pending.collectionName().equals(getCollectionName())) {
            AGGREGATION_PREFILTER.remove(); // one use: a $lookup into this same collection reads it whole
            return candidates(pending.match(), pending.needs());
        }
        return candidates(new Document());
    }

    /**
     * {@code _id} look-ups go straight to the store, which is keyed by {@code _id}: the stock engine
     * asks its unique {@code _id} index first, whose keys H2 compares by Java-serialising them —
     * about half the cost of each {@code $lookup} row (profiled: discounts-and-shrinkage audit).
     */
    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        if (idLookup(query) != null) {
            return matchDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        final Stream<Document> documentStream;
        if (isNaturalDescending(orderBy)) {
            documentStream = streamAllDocumentsWithPosition()
                .sorted((o1, o2) -> ValueComparator.desc().compare(o1.getPosition(), o2.getPosition()))
                .map(DocumentWithPosition::getDocument);
        } else if (idLookup(query) != null) {
            documentStream = byIds(idLookup(query));
            // The keys read are exactly the _id condition's (string and ObjectId keys only): the rest of
            // the query is what is left to check. The engine's $in compares each document's _id with
            // every listed id, a batch delete of 5,000 ids 25 million comparisons.
            query = withoutId(query);
        } else {
            QueryPlan plan = planFor(query, orderBy);
            if (orderBy != null && !orderBy.isEmpty() && limit > 0 && (long) numberToSkip + limit <= 100_000) {
                int direction = plan == null ? 0 : plan.orderFor(orderBy);
                List<Document> page;
                if (direction != 0) {
                    page = walkInOrder(plan, direction, query, numberToSkip, limit, Integer.MAX_VALUE);
                } else {
                    // A modest range is ranked from its index entries at once; a large one first tries a
                    // bounded walk in the sort's order (recent pages fill in a few reads), then the ranking.
                    boolean small = plan != null && plan.entryCount() <= RANK_FIRST_ENTRIES;
                    page = small ? pageByIndexKeys(plan, orderBy, query, numberToSkip, limit) : null;
                    if (page == null) {
                        page = trialInOrder(query, orderBy, numberToSkip, limit);
                    }
                    if (page == null && !small) {
                        page = pageByIndexKeys(plan, orderBy, query, numberToSkip, limit);
                    }
                    if (page == null) {
                        page = pageOnBytes(query, orderBy, numberToSkip, limit, plan);
                    }
                }
                if (page != null) {
                    // The engine's own path for the rest (re-checks the page's documents, projects).
                    return super.matchDocumentsFromStream(query, page.stream(), 0, limit, batchSize, null, fieldSelector);
                }
            }
            int direction = plan == null || batchSize <= 0 ? 0 : plan.orderFor(orderBy);
            if (direction != 0) {
                return streamed(query, inIndexOrder(plan, direction), numberToSkip, limit, batchSize, fieldSelector);
            }
            documentStream = candidates(query, NeededFields.ofFind(query, orderBy, fieldSelector));
        }
        return matchDocumentsFromStream(documentStream, query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /**
     * An unsorted find read as the client asks for it: the first batch now, each further one at its
     * getMore ({@link StreamingCursor}). The engine's own path matched, decoded and projected every
     * document into one list first: a year of a tenant's invoices (100,000 documents) held in the
     * heap until the client had read them, and young collections promoting them to the old
     * generation, then full collections, most of a 366-day tax summary's time. MongoDB isolates no
     * cursor either: on an index's plan a document changed between two batches is read as it is
     * then (a deleted one skipped); a whole-collection scan reads the store's version of the find.
     */
    private QueryResult streamed(Document query, Stream<Document> documentStream, int numberToSkip, int limit, int batchSize,
                                 Document fieldSelector) {
        Stream<Document> matching = documentStream.filter(document -> documentMatchesQuery(document, query));
        if (numberToSkip > 0) {
            matching = matching.skip(numberToSkip);
        }
        if (limit > 0) {
            matching = matching.limit(limit);
        }
        // The engine's projection class is not public: its own path projects each batch.
        java.util.function.UnaryOperator<List<Document>> project = fieldSelector == null || fieldSelector.keySet().isEmpty() ? batch -> batch
            : batch -> super.matchDocumentsFromStream(new Document(), batch.stream(), 0, 0, 0, null, fieldSelector).collectDocuments();
        project.apply(List.of()); // a malformed projection fails the find, as on the engine's path
        Iterator<Document> documents = matching.iterator();
        StreamingCursor cursor = new StreamingCursor(cursorRegistry.generateCursorId(), documents, project);
        List<Document> firstBatch = cursor.takeDocuments(batchSize);
        if (cursor.isEmpty()) {
            return new QueryResult(firstBatch);
        }
        cursorRegistry.add(cursor);
        return new QueryResult(firstBatch, cursor);
    }

    /** As the engine's, but a sort with a limit keeps a bounded heap of the best skip+limit documents. */
    @Override
    protected QueryResult matchDocumentsFromStream(Document query, Stream<Document> documentStream, int numberToSkip,
                                                   int limit, int batchSize, Comparator<Document> comparator,
                                                   Document fieldSelector) {
        if (comparator == null && batchSize > 0) {
            return streamed(query, documentStream, numberToSkip, limit, batchSize, fieldSelector);
        }
        if (comparator == null || limit <= 0 || (long) numberToSkip + limit > 100_000) {
            return super.matchDocumentsFromStream(query, documentStream, numberToSkip, limit, batchSize, comparator, fieldSelector);
        }
        int keep = numberToSkip + limit;
        // Ties broken by arrival order, as the stable sort of the engine does.
        Comparator<Ranked> order = Comparator.<Ranked, Document>comparing(Ranked::document, comparator)
            .thenComparingLong(Ranked::arrival);
        PriorityQueue<Ranked> worstFirst = new PriorityQueue<>(keep + 1, order.reversed());
        long[] arrival = {0};
        documentStream.filter(document -> documentMatchesQuery(document, query)).forEach(document -> {
            Ranked ranked = new Ranked(document, arrival[0]++);
            if (worstFirst.size() < keep) {
                worstFirst.add(ranked);
            } else if (order.compare(ranked, worstFirst.peek()) < 0) {
                worstFirst.poll();
                worstFirst.add(ranked);
            }
        });
        List<Ranked> best = new ArrayList<>(worstFirst);
        best.sort(order);
        // The engine's own path for the rest (re-checks the few kept documents, skips, projects).
        return super.matchDocumentsFromStream(query, best.stream().map(Ranked::document), numberToSkip, limit, batchSize,
            null, fieldSelector);
    }

    private record Ranked(Document document, long arrival) {
    }

    /** BSON encodings of a query's string equalities on dotted paths: each must occur in a matching document's bytes. */
    static final class StringNeedles {

        private StringNeedles() {
        }

        static List<byte[]> of(Document query) {
            List<byte[]> needles = new ArrayList<>();
            for (Map.Entry<String, Object> entry : query.entrySet()) {
                String field = entry.getKey();
                // Top-level fields are decided exactly (and faster) by RawQuery; a needle is for a
                // dotted path, whose value sits somewhere inside a sub-document.
                if (field.startsWith("$") || !field.contains(".")) {
                    continue;
                }
                Object value = entry.getValue();
                if (value instanceof Document operators && operators.size() == 1 && operators.get("$eq") instanceof String s) {
                    value = s;
                }
                if (value instanceof String s) {
                    needles.add(encodeString(s));
                }
            }
            return needles;
        }

        /** A BSON string value: int32 length (bytes + NUL), UTF-8 bytes, NUL. Equal strings encode equally. */
        private static byte[] encodeString(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            int length = utf8.length + 1;
            byte[] out = new byte[utf8.length + 5];
            out[0] = (byte) length;
            out[1] = (byte) (length >>> 8);
            out[2] = (byte) (length >>> 16);
            out[3] = (byte) (length >>> 24);
            System.arraycopy(utf8, 0, out, 4, utf8.length);
            out[out.length - 1] = 0;
            return out;
        }

        static boolean containsAll(byte[] haystack, List<byte[]> needles) {
            for (byte[] needle : needles) {
                if (!contains(haystack, needle)) {
                    return false;
                }
            }
            return true;
        }

        private static boolean contains(byte[] haystack, byte[] needle) {
            byte first = needle[0];
            int last = haystack.length - needle.length;
            outer:
            for (int i = 0; i <= last; i++) {
                if (haystack[i] != first) {
                    continue;
                }
                for (int j = 1; j < needle.length; j++) {
                    if (haystack[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return true;
            }
            return false;
        }
    }
}
