package local.freight.embeddedmongo;

import java.util.function.Supplier;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.wire.message.MongoMessage;

/**
 * Stack traces of the engine's own failures. mongo-java-server answers a RuntimeException that is
 * not a MongoServerException with "Unknown error: &lt;message&gt;" and logs it under the logger of
 * MongoWireProtocolHandler (MongoDatabaseHandler borrows that name), which the launcher turns off
 * so that ordinary command errors (duplicate keys, bad queries) do not dump traces. Such a failure
 * is a bug of the engine, and its message alone rarely says where: print the trace on stderr.
 */
final class EngineErrors {

    private EngineErrors() {
    }

    static Document handle(MongoMessage message, Supplier<Document> handler) {
        try {
            return handler.get();
        } catch (MongoServerException e) {
            throw e;
        } catch (RuntimeException e) {
            // A store that failed (disk full: MVStore closes it) is not a bug of the command: the engine
            // exits (StoreCommits.failed), and the client gets an error it retries on the restarted one.
            if (!StoreCommits.isShuttingDown() && (StoreCommits.failure() != null || StoreCommits.isBroken())) {
                StoreCommits.failed(e);
                throw new MongoServerError(91, "ShutdownInProgress", "store failed: " + StoreCommits.failure());
            }
            String command = "?";
            Document document = message.getDocument();
            if (document != null && !document.isEmpty()) {
                String name = document.keySet().iterator().next();
                command = name + " " + document.get(name) + " on " + document.get("$db");
            }
            synchronized (System.err) {
                System.err.println("embedded-mongo: unexpected error in " + command + " (the client gets \"Unknown error: "
                    + e.getMessage() + "\"):");
                e.printStackTrace(System.err);
            }
            throw e;
        }
    }
}
