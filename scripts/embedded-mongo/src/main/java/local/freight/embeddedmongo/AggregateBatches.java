package local.freight.embeddedmongo;

import java.util.ArrayList;
import java.util.List;

import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.InMemoryCursor;
import de.bwaldvogel.mongo.bson.Document;

/**
 * An aggregation's rows in batches of the {@code cursor.batchSize} the client asked for. The stock
 * engine returns every row in the first batch, whatever the client asks: a long audit then arrives
 * as one reply of many megabytes that the driver holds whole. Rows beyond the first batch go to a
 * cursor, as real MongoDB does, and the client reads them {@code batchSize} at a time with
 * {@code getMore} (the engine's own cursor registry serves it, and {@code killCursors} frees it).
 */
final class AggregateBatches {

    private AggregateBatches() {
    }

    static Document split(Document command, Document response, CursorRegistry cursors) {
        if (!(command.get("cursor") instanceof Document options) || !(options.get("batchSize") instanceof Number size)
            || size.intValue() <= 0 || !(response.get("cursor") instanceof Document cursor)
            || !(cursor.get("firstBatch") instanceof List<?> rows) || rows.size() <= size.intValue()
            || !(cursor.get("id") instanceof Number id) || id.longValue() != 0) {
            return response;
        }
        List<Document> all = new ArrayList<>(rows.size());
        for (Object row : rows) {
            all.add((Document) row);
        }
        InMemoryCursor rest = new InMemoryCursor(cursors.generateCursorId(), all.subList(size.intValue(), all.size()));
        cursors.add(rest);
        cursor.put("firstBatch", new ArrayList<>(all.subList(0, size.intValue())));
        cursor.put("id", Long.valueOf(rest.getId()));
        return response;
    }
}
