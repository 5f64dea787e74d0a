package local.freight.embeddedmongo;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * The stock in-memory collection, with {@code f: {$in: [...]}} of strings or ObjectIds decided by a
 * hash set. The engine's matcher compares a document's value with every listed one: a query of a
 * tenant's 1,000 held export slots ({@code _id: {$in: ids}}, {@code data.exportId: {$in: ids}}) over
 * 1,000 documents made a million comparisons, ~80 CPU-ms. Exact: only a field whose value is a single
 * string or ObjectId (no array, no sub-document, present) is decided here, where {@code $in} means
 * equal to one of the listed values (strings compare as their bytes, ObjectIds as theirs); the rest
 * of the query, and every other document, go to the engine's matcher as before.
 */
class HashedInMemoryCollection extends MemoryCollection {

    /** The last query's hashed {@code $in} (a find or an update matches one query against many documents). */
    private Document lastQuery;
    private HashedIn lastIn;

    /** {@code operators} and {@code size}: what the query held when compiled (a query changed in place is compiled again). */
    private record HashedIn(String path, Object operators, int size, Set<Object> values, Document rest) {
    }

    HashedInMemoryCollection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursorRegistry) {
        super(database, name, options, cursorRegistry);
    }

    @Override
    protected boolean documentMatchesQuery(Document document, Document query) {
        HashedIn in = hashedIn(query);
        if (in != null) {
            Object value = valueAt(document, in.path);
            if (value instanceof String || value instanceof ObjectId) {
                return in.values.contains(value) && (in.rest.isEmpty() || super.documentMatchesQuery(document, in.rest));
            }
        }
        return super.documentMatchesQuery(document, query);
    }

    private synchronized HashedIn hashedIn(Document query) {
        if (query != lastQuery || (lastIn != null && (query.size() != lastIn.size || query.get(lastIn.path) != lastIn.operators))) {
            lastQuery = query;
            lastIn = compile(query);
        }
        return lastIn;
    }

    /** The query's first top-level {@code f: {$in: [strings or ObjectIds]}} (20 values or more), with the rest of the query; else null. */
    private static HashedIn compile(Document query) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String path = entry.getKey();
            if (path.startsWith("$") || !(entry.getValue() instanceof Document operators) || operators.size() != 1
                || !(operators.get("$in") instanceof List<?> list) || list.size() < 20) {
                continue;
            }
            Set<Object> values = new HashSet<>(list.size() * 2);
            for (Object v : list) {
                if (!(v instanceof String) && !(v instanceof ObjectId)) {
                    values = null;
                    break;
                }
                values.add(v);
            }
            if (values == null) {
                continue;
            }
            Document rest = new Document();
            query.forEach((key, value) -> {
                if (!key.equals(path)) {
                    rest.put(key, value);
                }
            });
            return new HashedIn(path, operators, query.size(), values, rest);
        }
        return null;
    }

    /** The value at a dotted path through sub-documents only; null when missing or behind an array or another value. */
    private static Object valueAt(Document document, String path) {
        Object current = document;
        int start = 0;
        while (true) {
            if (!(current instanceof Document doc)) {
                return null;
            }
            int dot = path.indexOf('.', start);
            String key = dot < 0 ? path.substring(start) : path.substring(start, dot);
            if (!doc.containsKey(key)) {
                return null;
            }
            current = doc.get(key);
            if (dot < 0) {
                return current;
            }
            start = dot + 1;
        }
    }
}
