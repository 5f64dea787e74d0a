package local.freight.embeddedmongo;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.aggregation.stage.ProjectStage;
import de.bwaldvogel.mongo.exception.ErrorCode;
import de.bwaldvogel.mongo.exception.FailedToOptimizePipelineError;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.TypeMismatchException;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import io.netty.channel.Channel;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

/** {@link H2Database} whose collections store BSON (see {@link BsonStoreCollection}). */
final class BsonStoreDatabase extends H2Database {

    private static final String DATABASES_PREFIX = "databases.";
    private static final String META_PREFIX = "meta.";

    BsonStoreDatabase(String databaseName, MVStore mvStore, CursorRegistry cursorRegistry) {
        super(databaseName, mvStore, cursorRegistry);
    }

    // Called from H2Database's constructor: uses only its arguments and the store.
    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
        String fullName = getFullCollectionNamespace(collectionName);
        MVStore store = mvStoreOf(this);
        // Keys and values of any type (ObjectId _ids among them), compared from several threads at
        // once: the store's own thread-safe ObjectDataType (StoreObjectType), not H2's default.
        MVMap<Object, Object> dataMap = store.openMap(DATABASES_PREFIX + fullName, StoreObjectType.builder());
        MVMap<String, Object> metaMap = store.openMap(META_PREFIX + fullName, StoreObjectType.builder());
        return new BsonStoreCollection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    /**
     * Unique indexes keyed by their encoded bytes (see {@link StoreUniqueIndex}), not by serialised
     * objects. A compound one also keeps its keys as a {@link SecondaryIndex} (maps named with the
     * suffix {@code $plan}): the unique map only answers whole keys, and MongoDB serves a prefix and
     * its order from a unique index as from any other.
     */
    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        SecondaryIndex planned = keys.size() > 1 && !sparse ? secondaryIndex(collectionName, indexName, indexName + "$plan", keys) : null;
        return StoreUniqueIndex.open(mvStoreOf(this), getFullCollectionNamespace(collectionName), indexName, keys, sparse, planned);
    }

    /** The engine has no non-unique indexes: ours (see {@link SecondaryIndex}), kept in the store beside the collection. */
    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        return secondaryIndex(collectionName, indexName, indexName, keys);
    }

    private SecondaryIndex secondaryIndex(String collectionName, String indexName, String mapsName, List<IndexKey> keys) {
        MVStore store = mvStoreOf(this);
        String fullName = getFullCollectionNamespace(collectionName);
        MVMap<byte[], byte[]> entries = store.openMap(SecondaryIndex.entriesMapName(fullName, mapsName),
            new MVMap.Builder<byte[], byte[]>().keyType(IndexKeyType.INSTANCE).valueType(IndexKeyType.INSTANCE));
        MVMap<Object, Object> unindexed = store.openMap(SecondaryIndex.unindexedMapName(fullName, mapsName), StoreObjectType.builder());
        return new SecondaryIndex(indexName, keys, entries, unindexed);
    }

    // Dropping a collection, an index or the database removes maps; a store version must not hold
    // half of it (StoreCommits).

    @Override
    public void dropCollection(String collectionName, Oplog oplog) {
        StoreCommits.atomically(() -> super.dropCollection(collectionName, oplog));
    }

    @Override
    protected void dropIndex(MongoCollection<Object> collection, String indexName) {
        StoreCommits.atomically(() -> super.dropIndex(collection, indexName));
    }

    @Override
    public void drop(Oplog oplog) {
        StoreCommits.atomically(() -> super.drop(oplog));
    }

    /** The stock engine renames the data and meta maps only: the index maps move with them. */
    @Override
    public void moveCollection(MongoDatabase oldDatabase, MongoCollection<?> collection, String newCollectionName) {
        StoreCommits.atomically(() -> {
            String oldName = collection.getFullName();
            String newName = getFullCollectionNamespace(newCollectionName);
            super.moveCollection(oldDatabase, collection, newCollectionName);
            MVStore store = mvStoreOf(this);
            for (String map : store.getMapNames()) {
                String prefix = SecondaryIndex.entriesMapName(oldName, "");
                if (map.startsWith(prefix)) {
                    store.renameMap(store.openMap(map), SecondaryIndex.entriesMapName(newName, "") + map.substring(prefix.length()));
                }
            }
        });
    }

    /**
     * An aggregation reads the whole collection and then runs its stages; tell the collection the
     * pipeline's leading {@code $match} so it can skip documents that cannot match it before decoding
     * them, and the fields the pipeline reads ({@link NeededFields}), so it decodes only those. The
     * {@code $match} stage itself still runs on every document that is decoded.
     */
    @Override
    public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver, Oplog oplog) {
        if (isWrite(command) && isDurable(query.get("writeConcern"))) {
            Document reply;
            try {
                reply = super.handleCommand(channel, command, query, databaseResolver, oplog);
            } catch (RuntimeException e) {
                StoreCommits.awaitDurable(); // what the command did before failing (an ordered bulk's first writes)
                throw e;
            }
            StoreCommits.awaitDurable();
            return reply;
        }
        if (!"aggregate".equalsIgnoreCase(command)) {
            return super.handleCommand(channel, command, query, databaseResolver, oplog);
        }
        Object pipeline = query.get("pipeline");
        Document counted = countOnBytes(query, pipeline);
        if (counted != null) {
            return counted;
        }
        Document leadingMatch = null;
        if (pipeline instanceof List<?> stages && !stages.isEmpty() && stages.get(0) instanceof Document first
            && first.size() == 1 && first.get("$match") instanceof Document match) {
            leadingMatch = match;
        }
        NeededFields needs = pipeline instanceof List<?> stages ? NeededFields.ofPipeline(stages) : null;
        BsonStoreCollection.AGGREGATION_PREFILTER.set(leadingMatch == null && needs == null ? null
            : new BsonStoreCollection.Pending(String.valueOf(query.get(command)), leadingMatch == null ? new Document() : leadingMatch, needs));
        try {
            Document streamed = streamedAggregate(query, databaseResolver, oplog);
            if (streamed != null) {
                return streamed;
            }
            return AggregateBatches.split(query, super.handleCommand(channel, command, query, databaseResolver, oplog), cursorRegistry);
        } finally {
            BsonStoreCollection.AGGREGATION_PREFILTER.remove();
        }
    }

    private static boolean isWrite(String command) {
        return switch (command.toLowerCase(java.util.Locale.ROOT)) {
            case "insert", "update", "delete", "findandmodify" -> true;
            default -> false;
        };
    }

    /** A write concern that means "on disk" on MongoDB: journaled, or acknowledged by a majority. */
    private static boolean isDurable(Object writeConcern) {
        return writeConcern instanceof Document concern
            && (Boolean.TRUE.equals(concern.get("j")) || "majority".equals(concern.get("w")));
    }

    /**
     * An aggregation whose client reads it in batches ({@code cursor.batchSize}) and that writes
     * nothing: its rows are computed batch by batch, at each getMore ({@link StreamingCursor}), as
     * an unsorted find is. The engine's path collected every row first (an audit's rows for a
     * year: one per trip or payment, held in the heap until read). Stages that need every input
     * ({@code $group}, {@code $sort}) still take it all when the first row is asked for. Null:
     * the engine's own path (change streams, {@code $out}/{@code $merge}, no batch size).
     */
    private Document streamedAggregate(Document command, DatabaseResolver databaseResolver, Oplog oplog) {
        if (!(command.get("cursor") instanceof Document options) || !(options.get("batchSize") instanceof Number size)
            || size.intValue() <= 0) {
            return null;
        }
        String collectionName = String.valueOf(command.get("aggregate"));
        if (!(resolveCollection(collectionName, false) instanceof BsonStoreCollection collection)) {
            return null;
        }
        List<Document> pipeline = Aggregation.parse(command.get("pipeline"));
        if (pipeline.stream().anyMatch(stage -> stage.containsKey("$changeStream"))) {
            return null;
        }
        Aggregation aggregation = Aggregation.fromPipeline(pipeline, databaseResolver, this, collection, oplog);
        aggregation.validate(command);
        if (aggregation.isModifying()) {
            return null;
        }
        StreamingCursor cursor;
        List<Document> firstBatch;
        try {
            cursor = new StreamingCursor(cursorRegistry.generateCursorId(), aggregation.runStagesAsStream(collection.queryAllAsStream()).iterator(),
                batch -> batch);
            firstBatch = cursor.takeDocuments(size.intValue());
        } catch (TypeMismatchException | FailedToOptimizePipelineError | ProjectStage.InvalidProjectException e) {
            throw e;
        } catch (MongoServerError e) {
            // As Aggregation.computeResult reports a failure in a stage.
            if (e.hasCode(ErrorCode._15998, ErrorCode._40353)) {
                throw e;
            }
            throw new MongoServerError(e.getCode(), e.getCodeName(), "PlanExecutor error during aggregation :: caused by :: " + e.getMessageWithoutErrorCode(), e);
        }
        long id = 0;
        if (!cursor.isEmpty()) {
            cursorRegistry.add(cursor);
            id = cursor.getId();
        }
        Document reply = new Document("id", Long.valueOf(id)).append("ns", getFullCollectionNamespace(collectionName)).append("firstBatch", firstBatch);
        return new Document("cursor", reply).append("ok", Double.valueOf(1.0));
    }

    /**
     * The driver's countDocuments pipeline, {@code [{$match: q}, {$group: {_id: c, n: {$sum: 1}}}]},
     * counted on the documents' bytes when q is simple (BsonStoreCollection.countMatching); null
     * for any other command (the engine runs it).
     */
    private Document countOnBytes(Document command, Object pipeline) {
        if (!(pipeline instanceof List<?> stages) || stages.size() != 2
            || !(stages.get(0) instanceof Document first) || first.size() != 1 || !(first.get("$match") instanceof Document match)
            || !(stages.get(1) instanceof Document second) || second.size() != 1 || !(second.get("$group") instanceof Document group)
            || group.size() != 2 || !group.containsKey("_id") || group.get("_id") instanceof Document
            || (group.get("_id") instanceof String id && id.startsWith("$"))) {
            return null;
        }
        String countField = null;
        for (Map.Entry<String, Object> entry : group.entrySet()) {
            if (!entry.getKey().equals("_id")) {
                if (!(entry.getValue() instanceof Document sum) || sum.size() != 1 || !(sum.get("$sum") instanceof Number one)
                    || one.doubleValue() != 1.0) {
                    return null;
                }
                countField = entry.getKey();
            }
        }
        String collectionName = String.valueOf(command.get("aggregate"));
        if (!(resolveCollection(collectionName, false) instanceof BsonStoreCollection collection)) {
            return null;
        }
        Long n = collection.countMatching(match);
        if (n == null) {
            return null;
        }
        List<Document> batch = new ArrayList<>();
        if (n > 0) {
            Object count = n <= Integer.MAX_VALUE ? (Object) Integer.valueOf(n.intValue()) : (Object) n;
            batch.add(new Document("_id", group.get("_id")).append(countField, count));
        }
        Document cursor = new Document("id", Long.valueOf(0)).append("ns", getFullCollectionNamespace(collectionName)).append("firstBatch", batch);
        return new Document("cursor", cursor).append("ok", Double.valueOf(1.0));
    }

    private static final Field MV_STORE_FIELD;

    static {
        try {
            MV_STORE_FIELD = H2Database.class.getDeclaredField("mvStore");
            MV_STORE_FIELD.setAccessible(true);
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * H2Database keeps its store private and calls openOrCreateCollection from its constructor
     * (after setting the field, before this subclass could keep its own copy).
     */
    private static MVStore mvStoreOf(H2Database db) {
        try {
            return (MVStore) MV_STORE_FIELD.get(db);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
