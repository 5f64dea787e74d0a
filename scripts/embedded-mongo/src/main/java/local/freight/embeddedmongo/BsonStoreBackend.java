package local.freight.embeddedmongo;

import java.util.ArrayList;
import java.util.List;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;

/**
 * mongo-java-server's H2/MVStore backend with documents stored as BSON bytes instead of
 * Java-serialised {@code Document} objects (see {@link BsonStoreCollection}), and without the
 * full-collection scans the stock backend runs at open for every (ignored) secondary index.
 * Same MVStore file and map names as {@link H2Backend}: an older store opens and is
 * converted once, in place.
 */
final class BsonStoreBackend extends H2Backend {

    /** Collections opened by the constructor whose indexes are not yet in the store: built once everything is open. */
    private static final ThreadLocal<List<BsonStoreCollection>> OPENING = new ThreadLocal<>();

    BsonStoreBackend(MVStore store) {
        super(opening(store)); // opens every database found in the store through openOrCreateDatabase below
        List<BsonStoreCollection> opened = OPENING.get();
        OPENING.remove();
        // One pass over each collection for all its indexes still to build (a store of the previous
        // version, or a build cut short), instead of one per index as they are opened.
        for (BsonStoreCollection collection : opened) {
            collection.buildIndexes();
        }
    }

    private static MVStore opening(MVStore store) {
        OPENING.set(new ArrayList<>());
        return store;
    }

    /** While the store opens, a collection's index build waits for the others of the collection (true); later it runs at once (false). */
    static boolean deferIndexBuild(BsonStoreCollection collection) {
        List<BsonStoreCollection> opened = OPENING.get();
        if (opened == null) {
            return false;
        }
        if (!opened.contains(collection)) {
            opened.add(collection);
        }
        return true;
    }

    @Override
    public Document handleMessage(MongoMessage message) {
        return EngineErrors.handle(message, () -> super.handleMessage(message));
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        Progress.report("opening database " + databaseName);
        return new BsonStoreDatabase(databaseName, getMvStore(), getCursorRegistry());
    }
}
