package local.freight.embeddedmongo;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import io.netty.channel.Channel;

/**
 * The stock in-memory backend, with aggregation results in batches as the on-disk one ({@link AggregateBatches})
 * and long {@code $in} lists hashed ({@link HashedInMemoryCollection}).
 */
final class BatchedMemoryBackend extends MemoryBackend {

    @Override
    public Document handleMessage(MongoMessage message) {
        return EngineErrors.handle(message, () -> super.handleMessage(message));
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new MemoryDatabase(databaseName, getCursorRegistry()) {
            @Override
            protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
                return new HashedInMemoryCollection(this, collectionName, options, cursorRegistry);
            }

            @Override
            public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver, Oplog oplog) {
                Document response = super.handleCommand(channel, command, query, databaseResolver, oplog);
                return "aggregate".equalsIgnoreCase(command) ? AggregateBatches.split(query, response, cursorRegistry) : response;
            }
        };
    }
}
