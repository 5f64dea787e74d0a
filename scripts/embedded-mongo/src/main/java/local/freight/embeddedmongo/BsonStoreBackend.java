package local.freight.embeddedmongo;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

/**
 * mongo-java-server's H2/MVStore backend with documents stored as BSON bytes instead of
 * Java-serialised {@code Document} objects (see {@link BsonStoreCollection}), and without the
 * full-collection scans the stock backend runs at open for every (ignored) secondary index.
 * Same MVStore file and map names as {@link H2Backend}: an older store opens and is
 * converted once, in place.
 */
final class BsonStoreBackend extends H2Backend {

    BsonStoreBackend(MVStore store) {
        super(store); // opens every database found in the store through openOrCreateDatabase below
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        Progress.report("opening database " + databaseName);
        return new BsonStoreDatabase(databaseName, getMvStore(), getCursorRegistry());
    }
}
