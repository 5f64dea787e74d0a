package local.freight.embeddedmongo;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;

/**
 * The fields of a stored document a find or an aggregation can read, as a tree of paths
 * ({@code invoice.uuid} under {@code invoice}); the rest of the document is not decoded
 * ({@link StoredBsonDecoder#decode(byte[], NeededFields)}). MongoDB does the same dependency
 * analysis (a pipeline that ends in {@code $group} or an inclusion {@code $project} reads only the
 * fields its stages name).
 *
 * <p>Why: a report reads every document of a tenant (the cash-inflow forecast's open invoices:
 * 100,000 invoices at the bench's size) and names a dozen of their fields; decoding whole
 * documents was a third of the engine's time there.
 *
 * <p>Conservative: anything not understood (a stage or query operator not listed here,
 * {@code $$ROOT}, {@code $$CURRENT}, {@code $getField}, an array index in a path, an exclusion
 * projection, a pipeline whose output is the whole document) gives null, and the whole document
 * is decoded. Naming a field that does not exist costs nothing, so the analysis may over-include.
 */
final class NeededFields {

    /** Every field under this one is needed. */
    private boolean all;
    private final Map<String, NeededFields> children = new HashMap<>();

    private NeededFields() {
    }

    /** The child for {@code name}: null when the field is not needed; a node with {@link #isAll()} when all of it is. */
    NeededFields child(String name) {
        return children.get(name);
    }

    boolean isAll() {
        return all;
    }

    /** Thrown inside the analysis when it meets something it does not understand. */
    private static final class Unknown extends RuntimeException {
        Unknown() {
            super(null, null, false, false);
        }
    }

    /** The fields a find reads: its query, its sort, its inclusion projection; null for all. */
    static NeededFields ofFind(Document query, Document orderBy, Document projection) {
        if (projection == null || projection.isEmpty()) {
            return null;
        }
        try {
            NeededFields needs = new NeededFields();
            needs.query(query);
            if (orderBy != null) {
                for (String key : orderBy.keySet()) {
                    needs.path(key);
                }
            }
            return needs.projection(projection) ? needs : null;
        } catch (Unknown e) {
            return null;
        }
    }

    /** The fields an aggregation pipeline reads from its input documents; null for all. */
    static NeededFields ofPipeline(List<?> pipeline) {
        try {
            NeededFields needs = new NeededFields();
            for (Object s : pipeline) {
                if (!(s instanceof Document stage) || stage.size() != 1) {
                    return null;
                }
                String name = stage.keySet().iterator().next();
                Object spec = stage.get(name);
                switch (name) {
                    case "$match" -> needs.query(asDocument(spec));
                    case "$addFields", "$set" -> needs.expression(spec);
                    case "$unset", "$limit", "$skip" -> {
                        // read nothing
                    }
                    case "$sort" -> asDocument(spec).keySet().forEach(needs::path);
                    case "$unwind" -> needs.expression(spec instanceof Document d ? d.get("path") : spec);
                    case "$lookup" -> {
                        Document lookup = asDocument(spec);
                        if (!(lookup.get("localField") instanceof String local) || lookup.containsKey("pipeline") || lookup.containsKey("let")) {
                            return null;
                        }
                        needs.path(local);
                    }
                    case "$group" -> {
                        needs.expression(spec);
                        return needs; // its output holds only what it computed
                    }
                    case "$count" -> {
                        return needs;
                    }
                    case "$project" -> {
                        // An inclusion projection ends what the input must hold; an exclusion passes the rest on.
                        return needs.projection(asDocument(spec)) ? needs : null;
                    }
                    default -> {
                        return null;
                    }
                }
            }
            return null; // the documents themselves are the output
        } catch (Unknown e) {
            return null;
        }
    }

    private static Document asDocument(Object spec) {
        if (spec instanceof Document d) {
            return d;
        }
        throw new Unknown();
    }

    /** Adds an inclusion projection's fields; false for an exclusion projection (every other field passes). */
    private boolean projection(Document projection) {
        boolean inclusion = false;
        boolean exclusion = false;
        boolean id = true;
        for (Map.Entry<String, Object> entry : projection.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            boolean off = (value instanceof Number n && n.doubleValue() == 0) || Boolean.FALSE.equals(value);
            if (key.equals("_id")) {
                if (off) {
                    id = false;
                } else {
                    expression(value);
                    path(key);
                }
                continue;
            }
            if (off) {
                exclusion = true;
            } else {
                inclusion = true;
                if (value instanceof Number || value instanceof Boolean) {
                    path(key);
                } else if (value instanceof Document d && !d.isEmpty() && d.keySet().stream().noneMatch(k -> k.startsWith("$"))) {
                    path(key); // a nested projection: the whole field, simply
                } else {
                    path(key); // a computed field or a projection operator ($elemMatch, $slice) on a field of that name
                    expression(value);
                }
            }
        }
        if (!inclusion || exclusion) {
            return false;
        }
        if (id) {
            path("_id");
        }
        return true;
    }

    private void query(Document query) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String key = entry.getKey();
            switch (key) {
                case "$and", "$or", "$nor" -> {
                    if (!(entry.getValue() instanceof List<?> branches)) {
                        throw new Unknown();
                    }
                    for (Object branch : branches) {
                        query(asDocument(branch));
                    }
                }
                case "$expr" -> expression(entry.getValue());
                case "$comment" -> {
                    // reads nothing
                }
                default -> {
                    if (key.startsWith("$")) {
                        throw new Unknown(); // $where, $text, $jsonSchema...
                    }
                    path(key); // the value's operators ($elemMatch included) read below this path only
                }
            }
        }
    }

    /** Field paths named by an aggregation expression ({@code "$a.b"}); variables other than ROOT/CURRENT read nothing of the document. */
    private void expression(Object value) {
        if (value instanceof String s) {
            if (s.startsWith("$$")) {
                String variable = s.substring(2);
                int dot = variable.indexOf('.');
                String name = dot < 0 ? variable : variable.substring(0, dot);
                if (name.equals("ROOT") || name.equals("CURRENT")) {
                    throw new Unknown();
                }
            } else if (s.startsWith("$")) {
                path(s.substring(1));
            }
        } else if (value instanceof Document d) {
            for (Map.Entry<String, Object> entry : d.entrySet()) {
                String key = entry.getKey();
                if (key.equals("$getField") || key.equals("$setField") || key.equals("$unsetField")) {
                    throw new Unknown(); // name fields without a '$'
                }
                if (!key.equals("$literal")) {
                    expression(entry.getValue());
                }
            }
        } else if (value instanceof List<?> list) {
            for (Object element : list) {
                expression(element);
            }
        }
    }

    /** Marks a dotted path needed, all of it below its end; a numeric part (an array index) or a positional {@code $} makes its parent needed whole. */
    private void path(String dotted) {
        if (dotted.isEmpty()) {
            throw new Unknown();
        }
        NeededFields node = this;
        for (String part : dotted.split("\\.", -1)) {
            if (node.all) {
                return;
            }
            if (part.isEmpty()) {
                throw new Unknown();
            }
            if (part.chars().allMatch(Character::isDigit) || part.startsWith("$")) { // an index, a positional "$"
                if (node == this) {
                    throw new Unknown();
                }
                node.setAll();
                return;
            }
            node = node.children.computeIfAbsent(part, k -> new NeededFields());
        }
        node.setAll();
    }

    private void setAll() {
        all = true;
        children.clear();
    }
}
