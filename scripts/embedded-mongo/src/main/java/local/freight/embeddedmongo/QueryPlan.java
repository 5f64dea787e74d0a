package local.freight.embeddedmongo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

import de.bwaldvogel.mongo.bson.Document;

/**
 * Which {@link SecondaryIndex} narrows a query, and to which key ranges.
 *
 * <p>From the query it derives <em>necessary</em> conditions per path — every matching document
 * satisfies them — from top-level fields, {@code $and}, {@code $elemMatch} (each sub-condition
 * holds for some element), and {@code $or} (the hull of what every branch says about a path: the
 * keyset cursor's {@code (date < v) or (date = v and ...)} gives {@code date <= v}). It then picks
 * the index with the longest run of equalities ({@code $eq}, {@code $in}) from its first field, then
 * a range on the next one, as MongoDB's ESR rule does; ties go to the index whose order serves the
 * sort. The ranges may hold documents the query rejects; never the reverse.
 */
final class QueryPlan {

    private static final int MAX_POINT_PREFIXES = 1000;
    private static final byte[] TOP = {(byte) 0xFF};

    /** Necessary condition on one path: equality to one of {@code points}, or a range. */
    private static final class Cond {
        List<Object> points;
        Object lo;
        boolean loInclusive;
        Object hi;
        boolean hiInclusive;
        byte type;
        /** The query's own condition on a top-level path, represented exactly. */
        boolean exact;
        /**
         * Set when this is the one condition of a top-level {@code a: {$elemMatch: {b: ...}}} on path
         * {@code a.b}: {@code a}. Exact only where the index holds {@code a.b} element-exactly
         * ({@link SecondaryIndex#isElementExact}).
         */
        String elemMatchOf;

        boolean isRange() {
            return points == null;
        }
    }

    final SecondaryIndex index;
    private final List<byte[][]> ranges;
    private final int equalities;
    private final boolean range;
    /** The ranges hold exactly the matching documents, each once (besides the index's unindexed ones). */
    final boolean covered;
    /** The ranges hold exactly the matching documents, some more than once ({@code $elemMatch} on a multikey field): count them distinct. */
    final boolean coveredRepeating;

    private QueryPlan(SecondaryIndex index, List<byte[][]> ranges, int equalities, boolean range, Coverage coverage) {
        this.index = index;
        this.ranges = ranges;
        this.equalities = equalities;
        this.range = range;
        this.covered = coverage == Coverage.EXACT;
        this.coveredRepeating = coverage == Coverage.EXACT_REPEATING;
    }

    private enum Coverage { NONE, EXACT, EXACT_REPEATING }

    /** The best plan for {@code query} among the ready indexes, or null (scan). */
    static QueryPlan choose(Document query, List<SecondaryIndex> indexes, Document orderBy) {
        if (indexes.isEmpty() || query == null || query.isEmpty()) {
            return null;
        }
        Map<String, Cond> conditions = conditionsOf(query);
        if (conditions.isEmpty()) {
            return null;
        }
        QueryPlan best = null;
        int bestScore = 0;
        for (SecondaryIndex index : indexes) {
            if (!index.isReady()) {
                continue;
            }
            QueryPlan plan = plan(index, conditions, query);
            if (plan == null) {
                continue;
            }
            // Doubled, plus one for an index that ranks by the sort from its entries: the tie-break between otherwise equal plans.
            int score = 2 * (8 * plan.equalities + (plan.range ? 4 : 0) + (plan.orderFor(orderBy) != 0 ? 2 : 0) + (plan.covered ? 1 : 0))
                + (orderBy != null && plan.ranksBy(orderBy) ? 1 : 0);
            if (score > bestScore) {
                best = plan;
                bestScore = score;
            }
        }
        return best;
    }

    /**
     * One plan per branch of the query's top-level {@code $or} (each branch with the query's other
     * conditions), when every branch narrows more than {@code single}, the best plan for the whole
     * query: MongoDB's OR stage, where each branch reads its own index and the documents are merged.
     * The tax summary's payment basis asks for {@code company} and (PUE invoices emitted in the
     * period, or invoices paid in it): the hull of the branches is the tenant alone, a read of all
     * its documents, where each branch has a date index. Null when some branch has no better plan.
     */
    static List<QueryPlan> chooseUnion(Document query, List<SecondaryIndex> indexes, QueryPlan single) {
        if (indexes.isEmpty() || query == null || !(query.get("$or") instanceof List<?> branches) || branches.size() < 2) {
            return null;
        }
        Document rest = new Document();
        query.forEach((key, value) -> {
            if (!key.equals("$or")) {
                rest.put(key, value);
            }
        });
        int floor = single == null ? 0 : single.narrowing();
        List<QueryPlan> plans = new ArrayList<>(branches.size());
        for (Object branch : branches) {
            if (!(branch instanceof Document d)) {
                return null;
            }
            Document both = new Document();
            both.put("$and", List.of(rest, d));
            QueryPlan plan = choose(both, indexes, null);
            if (plan == null || plan.narrowing() <= floor) {
                return null;
            }
            plans.add(plan);
        }
        return plans;
    }

    /** How much the plan narrows, as {@link #choose} ranks plans: equalities first, then a range. */
    private int narrowing() {
        return 8 * equalities + (range ? 4 : 0);
    }

    /** The candidate positions of several plans (an {@code $or}'s branches), each once, in {@code naturalOrder}. */
    static List<Object> positions(List<QueryPlan> plans, Comparator<Object> naturalOrder) {
        Set<Object> seen = new HashSet<>();
        List<Object> positions = new ArrayList<>();
        for (QueryPlan plan : plans) {
            for (Object position : plan.positions(naturalOrder)) {
                if (seen.add(position)) {
                    positions.add(position);
                }
            }
        }
        positions.sort(naturalOrder);
        return positions;
    }

    /**
     * The best plan among those whose index walk yields {@code orderBy}'s order (null if none): the
     * candidate for a sorted page when {@link #choose}'s plan narrows more but leaves the sort to do.
     */
    static QueryPlan chooseOrdered(Document query, List<SecondaryIndex> indexes, Document orderBy) {
        if (indexes.isEmpty() || query == null || query.isEmpty() || orderBy == null || orderBy.isEmpty()) {
            return null;
        }
        Map<String, Cond> conditions = conditionsOf(query);
        QueryPlan best = null;
        int bestScore = 0;
        for (SecondaryIndex index : indexes) {
            if (!index.isReady()) {
                continue;
            }
            QueryPlan plan = plan(index, conditions, query);
            if (plan == null || plan.orderFor(orderBy) == 0) {
                continue;
            }
            int score = 8 * plan.equalities + (plan.range ? 4 : 0) + (plan.covered ? 1 : 0);
            if (score > bestScore) {
                best = plan;
                bestScore = score;
            }
        }
        return best;
    }

    private static QueryPlan plan(SecondaryIndex index, Map<String, Cond> conditions, Document query) {
        int k = 0;
        long prefixes = 1;
        List<Cond> used = new ArrayList<>();
        while (k < index.size()) {
            Cond c = conditions.get(index.field(k));
            if (c == null || c.isRange() || prefixes * c.points.size() > MAX_POINT_PREFIXES) {
                break;
            }
            prefixes *= c.points.size();
            used.add(c);
            k++;
        }
        Cond rangeCond = null;
        if (k < index.size()) {
            Cond c = conditions.get(index.field(k));
            if (c != null && c.isRange()) {
                rangeCond = c;
            }
        }
        if (k == 0 && rangeCond == null) {
            return null;
        }
        List<KeyBytes> heads = new ArrayList<>();
        heads.add(new KeyBytes());
        for (int i = 0; i < k; i++) {
            List<KeyBytes> next = new ArrayList<>();
            for (KeyBytes head : heads) {
                for (Object point : used.get(i).points) {
                    KeyBytes extended = KeyBytes.copyOf(head, 24);
                    IndexKeyCodec.write(extended, point, index.isDescending(i));
                    next.add(extended);
                }
            }
            heads = next;
        }
        List<byte[][]> ranges = new ArrayList<>(heads.size());
        for (KeyBytes head : heads) {
            byte[] prefix = head.toByteArray();
            byte[] from;
            byte[] to;
            if (rangeCond == null) {
                from = prefix;
                to = concat(prefix, TOP);
            } else {
                byte[][] bounds = bounds(rangeCond, index.isDescending(k));
                from = concat(prefix, bounds[0]);
                to = concat(prefix, bounds[1]);
            }
            if (Arrays.compareUnsigned(from, to) <= 0) {
                ranges.add(new byte[][] {from, to});
            }
        }
        ranges.sort((a, b) -> Arrays.compareUnsigned(a[0], b[0]));
        return new QueryPlan(index, ranges, k, rangeCond != null, coverage(index, k, rangeCond, used, conditions, query));
    }

    /**
     * Whether every top-level condition of the query is one this plan's ranges decide exactly. A
     * multikey field repeats a document's entries: allowed where an equality names its values (each
     * document holds a value once: one point counts entries, several count distinct documents), or a
     * {@code $elemMatch} condition sits on an element-exact field (distinct documents), and only there.
     */
    private static Coverage coverage(SecondaryIndex index, int k, Cond rangeCond, List<Cond> used, Map<String, Cond> conditions,
                                     Document query) {
        List<Cond> byField = new ArrayList<>(used);
        if (rangeCond != null) {
            byField.add(rangeCond);
        }
        boolean repeating = false;
        for (int i = 0; i < index.size(); i++) {
            if (!index.isMultikey(i)) {
                continue;
            }
            Cond c = i < byField.size() ? byField.get(i) : null;
            if (c != null && c.elemMatchOf == null && c.exact && !c.isRange() && index.field(i).indexOf('.') < 0) {
                // f: v (or $in) on a top-level field of scalars or arrays of them: a document has one entry per
                // distinct value, so exactly the matching documents hold an entry of a point; once for one point.
                repeating |= c.points.size() > 1;
                continue;
            }
            if (c == null || c.elemMatchOf == null || !index.isElementExact(i)) {
                return Coverage.NONE;
            }
            repeating = true;
        }
        Set<Cond> exactlyUsed = new HashSet<>(byField);
        for (String key : query.keySet()) {
            Cond c = conditions.get(key);
            if (c == null && !key.startsWith("$")) {
                c = byField.stream().filter(u -> key.equals(u.elemMatchOf)).findFirst().orElse(null);
                if (c != null && !index.isElementExact(byField.indexOf(c))) {
                    return Coverage.NONE;
                }
            }
            if (key.startsWith("$") || c == null || !c.exact || !exactlyUsed.contains(c)) {
                return Coverage.NONE;
            }
        }
        return repeating ? Coverage.EXACT_REPEATING : Coverage.EXACT;
    }

    /** [from, to] of one component's range in the index's byte order, bounds exact. */
    private static byte[][] bounds(Cond c, boolean descending) {
        byte[] low;
        byte[] high;
        if (!descending) {
            low = c.lo == null ? new byte[] {c.type}
                : c.loInclusive ? IndexKeyCodec.encode(c.lo, false) : concat(IndexKeyCodec.encode(c.lo, false), TOP);
            high = c.hi == null ? new byte[] {(byte) (c.type + 1)}
                : c.hiInclusive ? concat(IndexKeyCodec.encode(c.hi, false), TOP) : IndexKeyCodec.encode(c.hi, false);
        } else {
            low = c.hi == null ? new byte[] {(byte) (0xFF - c.type)}
                : c.hiInclusive ? IndexKeyCodec.encode(c.hi, true) : concat(IndexKeyCodec.encode(c.hi, true), TOP);
            high = c.lo == null ? new byte[] {(byte) (0xFF - c.type + 1)}
                : c.loInclusive ? concat(IndexKeyCodec.encode(c.lo, true), TOP) : IndexKeyCodec.encode(c.lo, true);
        }
        return new byte[][] {low, high};
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    // --- reading the plan ---

    /** The entries of the plan's ranges, in index order (a document may appear more than once). */
    Iterable<byte[]> entries() {
        return () -> ranges.stream()
            .flatMap(r -> java.util.stream.StreamSupport.stream(index.range(r[0], r[1], false).spliterator(), false))
            .iterator();
    }

    /** The candidate documents' positions, each once, in {@code naturalOrder} (the order a scan reads them). */
    List<Object> positions(Comparator<Object> naturalOrder) {
        PositionSet seen = new PositionSet(entryCount());
        List<Object> positions = new ArrayList<>();
        for (byte[] entry : entries()) {
            int keyLength = index.keyLength(entry);
            if (seen.add(entry, keyLength)) {
                positions.add(IndexKeyCodec.readPosition(entry, keyLength));
            }
        }
        for (Object position : index.unindexed()) {
            positions.add(position); // an unindexed document has no entry: never among the ranges' positions
        }
        positions.sort(naturalOrder);
        return positions;
    }

    /** Number of distinct documents in the ranges (the match count when {@link #coveredRepeating}, plus the unindexed documents). */
    long distinctCount() {
        PositionSet seen = new PositionSet(entryCount());
        for (byte[] entry : entries()) {
            seen.add(entry, index.keyLength(entry));
        }
        return seen.size();
    }

    /** Number of entries in the ranges (the match count when {@link #covered}, plus the unindexed documents). */
    long entryCount() {
        long n = 0;
        for (byte[][] r : ranges) {
            n += index.count(r[0], r[1]);
        }
        return n;
    }

    /**
     * +1 when walking the single range forward yields documents in {@code orderBy}'s order (ties in
     * the scan's order: {@link #walkPositions}), -1 when walking it backward does, 0 otherwise. The
     * sort must be exactly the index's fields after the equalities; each document must appear once
     * (no multikey field there, no unindexed document).
     */
    int orderFor(Document orderBy) {
        if (orderBy == null || orderBy.isEmpty() || ranges.size() > 1 || index.hasUnindexed()
            || orderBy.size() != index.size() - equalities) {
            return 0;
        }
        int direction = 0;
        int i = equalities;
        for (Map.Entry<String, Object> entry : orderBy.entrySet()) {
            if (!(entry.getValue() instanceof Number n) || !entry.getKey().equals(index.field(i)) || index.isMultikey(i)) {
                return 0;
            }
            int wanted = n.intValue() < 0 ? -1 : 1;
            int same = (wanted < 0) == index.isDescending(i) ? 1 : -1;
            if (direction != 0 && direction != same) {
                return 0;
            }
            direction = same;
            i++;
        }
        // Backward, equal keys come in reverse scan order: walkPositions puts each run of them back in natural order.
        return direction;
    }

    /**
     * Whether the index holds every field of {@code orderBy} as a plain component (top-level name,
     * never an array element, no unindexed document), so entries can be ranked in the sort's order
     * from their own bytes ({@link #positionsInOrder}).
     */
    boolean ranksBy(Document orderBy) {
        return sortComponents(orderBy) != null;
    }

    /** Per sort field: its component's index and +1 when ascending bytes give the sort's order, -1 when reversed. */
    private int[][] sortComponents(Document orderBy) {
        if (orderBy == null || orderBy.isEmpty() || index.hasUnindexed()) {
            return null;
        }
        int[][] out = new int[orderBy.size()][];
        int k = 0;
        for (Map.Entry<String, Object> entry : orderBy.entrySet()) {
            if (!(entry.getValue() instanceof Number n) || entry.getKey().startsWith("$")) {
                return null;
            }
            int at = -1;
            for (int i = 0; i < index.size(); i++) {
                if (index.field(i).equals(entry.getKey()) && !index.isMultikey(i)) {
                    at = i;
                }
            }
            if (at < 0) {
                return null;
            }
            out[k++] = new int[] {at, (n.intValue() < 0) == index.isDescending(at) ? 1 : -1};
        }
        return out;
    }

    /**
     * The candidate documents' positions, each once, ranked by {@code orderBy} read from the index
     * entries (the components' bytes order as their values, inverted when descending), ties in
     * {@code naturalOrder}. Only the ranking: the caller reads documents in this order and checks
     * the query on each, so a page reads about its own documents, not every candidate. Null when the
     * index cannot rank them ({@link #ranksBy}) or the ranges hold more than {@code maxEntries}.
     */
    Iterable<Object> positionsInOrder(Document orderBy, long maxEntries, Comparator<Object> naturalOrder) {
        int[][] sort = sortComponents(orderBy);
        long count = sort == null ? 0 : entryCount();
        if (sort == null || count > maxEntries) {
            return null;
        }
        // Each candidate keeps its entry and its components' offsets (the last one: where its position
        // starts); the position is decoded only for the documents a page reads, or to break a tie.
        final class Ranked {
            final byte[] entry;
            final int[] offsets;
            private Object position;

            Ranked(byte[] entry, int[] offsets) {
                this.entry = entry;
                this.offsets = offsets;
            }

            Object position() {
                if (position == null) {
                    position = IndexKeyCodec.readPosition(entry, offsets[offsets.length - 1]);
                }
                return position;
            }
        }
        int components = index.size();
        PositionSet seen = new PositionSet(count);
        List<Ranked> candidates = new ArrayList<>((int) count);
        int[] offsets = new int[components + 1];
        for (byte[] entry : entries()) {
            int at = 0;
            for (int i = 0; i < components; i++) {
                offsets[i] = at;
                at = IndexKeyCodec.skip(entry, at, index.isDescending(i));
            }
            offsets[components] = at;
            if (seen.add(entry, at)) { // else a multikey repeat: the sort's components are the same in every entry of a document
                candidates.add(new Ranked(entry, offsets.clone()));
            }
        }
        Comparator<Ranked> order = (a, b) -> {
            for (int[] c : sort) {
                int i = c[0];
                int cmp = Arrays.compareUnsigned(a.entry, a.offsets[i], a.offsets[i + 1], b.entry, b.offsets[i], b.offsets[i + 1]);
                if (cmp != 0) {
                    return cmp * c[1];
                }
            }
            return naturalOrder.compare(a.position(), b.position());
        };
        // A binary heap taken in order as the page reads: built in linear time, and a page polls its skip
        // and limit from it instead of sorting every candidate (tens of thousands for a page of 20).
        return () -> new Iterator<>() {
            private final Ranked[] heap = candidates.toArray(new Ranked[0]);
            private int size = heap.length;

            {
                for (int i = size / 2 - 1; i >= 0; i--) {
                    siftDown(i);
                }
            }

            private void siftDown(int i) {
                Ranked x = heap[i];
                for (int child = 2 * i + 1; child < size; child = 2 * i + 1) {
                    if (child + 1 < size && order.compare(heap[child + 1], heap[child]) < 0) {
                        child++;
                    }
                    if (order.compare(heap[child], x) >= 0) {
                        break;
                    }
                    heap[i] = heap[child];
                    i = child;
                }
                heap[i] = x;
            }

            @Override
            public boolean hasNext() {
                return size > 0;
            }

            @Override
            public Object next() {
                if (size == 0) {
                    throw new NoSuchElementException();
                }
                Ranked top = heap[0];
                heap[0] = heap[--size];
                heap[size] = null;
                if (size > 0) {
                    siftDown(0);
                }
                return top.position();
            }
        };
    }

    /** The single range's entries, in the direction {@link #orderFor} gave. */
    Iterable<byte[]> walk(int direction) {
        if (ranges.isEmpty()) {
            return List.of();
        }
        return index.range(ranges.get(0)[0], ranges.get(0)[1], direction < 0);
    }

    /**
     * The documents' positions along {@link #walk} in {@code direction}, documents with equal keys in
     * {@code naturalOrder} as a sort of the scan gives them. Forward they come so already (an entry
     * ends with its position); backward, each run of equal keys is read whole and put back in
     * natural order (an index ending with the unique {@code _id} has no such runs). MongoDB walks an
     * index backward for a descending sort whatever its last field: ranking the whole range instead
     * (the open spans' {@code tenant, month, date, timestamp, docId}) read 12,000 entries for a page of 20.
     */
    Iterable<Object> walkPositions(int direction, Comparator<Object> naturalOrder) {
        Iterable<byte[]> entries = walk(direction);
        if (direction >= 0 || "_id".equals(index.field(index.size() - 1))) {
            return () -> java.util.stream.StreamSupport.stream(entries.spliterator(), false).map(index::positionOf).iterator();
        }
        return () -> new java.util.Iterator<>() {
            private final java.util.Iterator<byte[]> it = entries.iterator();
            private byte[] pending = it.hasNext() ? it.next() : null;
            private final java.util.ArrayDeque<Object> run = new java.util.ArrayDeque<>();

            @Override
            public boolean hasNext() {
                if (run.isEmpty() && pending != null) {
                    byte[] first = pending;
                    int keyLength = index.keyLength(first);
                    List<Object> tied = new ArrayList<>();
                    tied.add(index.positionOf(first));
                    pending = null;
                    while (it.hasNext()) {
                        byte[] next = it.next();
                        if (index.keyLength(next) != keyLength || Arrays.compareUnsigned(first, 0, keyLength, next, 0, keyLength) != 0) {
                            pending = next;
                            break;
                        }
                        tied.add(index.positionOf(next));
                    }
                    if (tied.size() > 1) {
                        tied.sort(naturalOrder);
                    }
                    run.addAll(tied);
                }
                return !run.isEmpty();
            }

            @Override
            public Object next() {
                if (!hasNext()) {
                    throw new java.util.NoSuchElementException();
                }
                return run.poll();
            }
        };
    }

    // --- necessary conditions of a query ---

    static Map<String, Cond> conditionsOf(Document query) {
        Map<String, List<Cond>> all = new LinkedHashMap<>();
        addConditions(query, "", all, true);
        Map<String, Cond> merged = new LinkedHashMap<>();
        for (Map.Entry<String, List<Cond>> entry : all.entrySet()) {
            Cond c = merge(entry.getValue());
            if (c != null) {
                merged.put(entry.getKey(), c);
            }
        }
        return merged;
    }

    /** One condition from several on a path: the equality with fewest points, else the intersected range. */
    private static Cond merge(List<Cond> conds) {
        Cond best = null;
        for (Cond c : conds) {
            if (!c.isRange() && (best == null || best.isRange() || c.points.size() < best.points.size())) {
                best = c;
            }
        }
        if (best == null) {
            for (Cond c : conds) {
                if (best == null) {
                    best = c;
                } else if (c.type == best.type) {
                    best = intersect(best, c);
                }
            }
        }
        if (best != null && conds.size() > 1) {
            Cond copy = copy(best);
            copy.exact = false;
            return copy;
        }
        return best;
    }

    private static Cond intersect(Cond a, Cond b) {
        Cond c = copy(a);
        c.exact = false;
        if (b.lo != null && (c.lo == null || compare(b.lo, c.lo) > 0 || (compare(b.lo, c.lo) == 0 && !b.loInclusive))) {
            c.lo = b.lo;
            c.loInclusive = b.loInclusive;
        }
        if (b.hi != null && (c.hi == null || compare(b.hi, c.hi) < 0 || (compare(b.hi, c.hi) == 0 && !b.hiInclusive))) {
            c.hi = b.hi;
            c.hiInclusive = b.hiInclusive;
        }
        return c;
    }

    private static Cond copy(Cond a) {
        Cond c = new Cond();
        c.points = a.points;
        c.lo = a.lo;
        c.loInclusive = a.loInclusive;
        c.hi = a.hi;
        c.hiInclusive = a.hiInclusive;
        c.type = a.type;
        c.exact = a.exact;
        c.elemMatchOf = a.elemMatchOf;
        return c;
    }

    private static int compare(Object a, Object b) {
        return Arrays.compareUnsigned(IndexKeyCodec.encode(a, false), IndexKeyCodec.encode(b, false));
    }

    private static void addConditions(Document query, String prefix, Map<String, List<Cond>> out, boolean topLevel) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            if (key.equals("$and") && value instanceof List<?> clauses) {
                for (Object clause : clauses) {
                    if (clause instanceof Document d) {
                        addConditions(d, prefix, out, false);
                    }
                }
            } else if (key.equals("$or") && value instanceof List<?> branches) {
                addHull(branches, prefix, out);
            } else if (!key.startsWith("$")) {
                fieldConditions(prefix.isEmpty() ? key : prefix + "." + key, value, out, topLevel);
            }
        }
    }

    /** What every branch of an {@code $or} requires of a path: the union of their points, or the hull of their ranges. */
    private static void addHull(List<?> branches, String prefix, Map<String, List<Cond>> out) {
        Map<String, Cond> hull = null;
        for (Object branch : branches) {
            if (!(branch instanceof Document d)) {
                return;
            }
            Map<String, List<Cond>> mine = new LinkedHashMap<>();
            addConditions(d, prefix, mine, false);
            Map<String, Cond> merged = new LinkedHashMap<>();
            mine.forEach((path, conds) -> {
                Cond c = merge(conds);
                if (c != null) {
                    merged.put(path, c);
                }
            });
            if (hull == null) {
                hull = merged;
            } else {
                Map<String, Cond> next = new LinkedHashMap<>();
                for (Map.Entry<String, Cond> e : hull.entrySet()) {
                    Cond other = merged.get(e.getKey());
                    Cond joined = other == null ? null : union(e.getValue(), other);
                    if (joined != null) {
                        next.put(e.getKey(), joined);
                    }
                }
                hull = next;
            }
        }
        if (hull != null) {
            hull.forEach((path, c) -> out.computeIfAbsent(path, p -> new ArrayList<>()).add(c));
        }
    }

    private static Cond union(Cond a, Cond b) {
        Cond c = new Cond();
        if (!a.isRange() && !b.isRange()) {
            List<Object> points = new ArrayList<>(a.points);
            points.addAll(b.points);
            c.points = points;
            return c;
        }
        Cond ra = asRange(a);
        Cond rb = asRange(b);
        if (ra == null || rb == null || ra.type != rb.type) {
            return null;
        }
        c.type = ra.type;
        if (ra.lo != null && rb.lo != null) {
            int cmp = compare(ra.lo, rb.lo);
            c.lo = cmp <= 0 ? ra.lo : rb.lo;
            c.loInclusive = cmp < 0 ? ra.loInclusive : cmp > 0 ? rb.loInclusive : ra.loInclusive || rb.loInclusive;
        }
        if (ra.hi != null && rb.hi != null) {
            int cmp = compare(ra.hi, rb.hi);
            c.hi = cmp >= 0 ? ra.hi : rb.hi;
            c.hiInclusive = cmp > 0 ? ra.hiInclusive : cmp < 0 ? rb.hiInclusive : ra.hiInclusive || rb.hiInclusive;
        }
        return c;
    }

    /** A condition as a range (points of one type become [min, max]); null when its points mix types. */
    private static Cond asRange(Cond a) {
        if (a.isRange()) {
            return a;
        }
        Cond c = new Cond();
        for (Object p : a.points) {
            byte type = IndexKeyCodec.typeOf(p);
            if (c.type != 0 && c.type != type) {
                return null;
            }
            c.type = type;
            if (c.lo == null || compare(p, c.lo) < 0) {
                c.lo = p;
            }
            if (c.hi == null || compare(p, c.hi) > 0) {
                c.hi = p;
            }
        }
        c.loInclusive = true;
        c.hiInclusive = true;
        return c;
    }

    private static boolean plannable(Object v) {
        return v != null && IndexKeyCodec.typeOf(v) != 0;
    }

    private static void fieldConditions(String path, Object value, Map<String, List<Cond>> out, boolean topLevel) {
        if (plannable(value)) {
            Cond c = new Cond();
            c.points = List.of(value);
            c.exact = topLevel;
            out.computeIfAbsent(path, p -> new ArrayList<>()).add(c);
            return;
        }
        if (!(value instanceof Document operators) || operators.isEmpty()
            || !operators.keySet().stream().allMatch(k -> k.startsWith("$"))) {
            return; // sub-document equality, arrays, null, regular expressions: no condition derived
        }
        boolean onlyRangeOrEquality = true;
        Cond points = null;
        Cond range = new Cond();
        boolean hasRange = false;
        for (Map.Entry<String, Object> op : operators.entrySet()) {
            Object v = op.getValue();
            switch (op.getKey()) {
                case "$eq" -> {
                    if (plannable(v)) {
                        points = new Cond();
                        points.points = List.of(v);
                    } else {
                        onlyRangeOrEquality = false;
                    }
                }
                case "$in" -> {
                    if (v instanceof List<?> list && !list.isEmpty() && list.stream().allMatch(QueryPlan::plannable)) {
                        points = new Cond();
                        points.points = new ArrayList<>(list);
                    } else {
                        onlyRangeOrEquality = false;
                    }
                }
                case "$gt", "$gte", "$lt", "$lte" -> {
                    if (!plannable(v) || (range.type != 0 && range.type != IndexKeyCodec.typeOf(v))) {
                        onlyRangeOrEquality = false;
                        hasRange = false;
                        range.type = -1; // mixed types: match nothing in MongoDB; derive nothing here
                        continue;
                    }
                    if (range.type == -1) {
                        continue;
                    }
                    range.type = IndexKeyCodec.typeOf(v);
                    hasRange = true;
                    Cond one = new Cond();
                    one.type = range.type;
                    if (op.getKey().startsWith("$g")) {
                        one.lo = v;
                        one.loInclusive = op.getKey().equals("$gte");
                    } else {
                        one.hi = v;
                        one.hiInclusive = op.getKey().equals("$lte");
                    }
                    Cond merged = range.lo == null && range.hi == null ? one : intersect(range, one);
                    range.lo = merged.lo;
                    range.loInclusive = merged.loInclusive;
                    range.hi = merged.hi;
                    range.hiInclusive = merged.hiInclusive;
                }
                case "$elemMatch" -> {
                    onlyRangeOrEquality = false;
                    if (topLevel && operators.size() == 1 && !path.contains(".") && v instanceof Document sub && sub.size() == 1) {
                        String field = sub.keySet().iterator().next();
                        if (!field.startsWith("$") && !field.contains(".")) {
                            // a: {$elemMatch: {b: <equality or range>}}: exact on a.b where the index holds it element-exactly
                            Map<String, List<Cond>> one = new LinkedHashMap<>();
                            fieldConditions(path + "." + field, sub.get(field), one, true);
                            List<Cond> derived = one.get(path + "." + field);
                            if (derived != null && derived.size() == 1) {
                                derived.get(0).elemMatchOf = derived.get(0).exact ? path : null;
                                out.computeIfAbsent(path + "." + field, p -> new ArrayList<>()).add(derived.get(0));
                            }
                            continue;
                        }
                    }
                    if (v instanceof Document sub && !sub.isEmpty()) {
                        if (sub.keySet().stream().allMatch(k -> k.startsWith("$"))) {
                            fieldConditions(path, sub, out, false); // conditions on the elements themselves
                        } else {
                            addConditions(sub, path, out, false);
                        }
                    }
                }
                default -> onlyRangeOrEquality = false;
            }
        }
        if (points != null) {
            points.exact = topLevel && onlyRangeOrEquality && !hasRange;
            out.computeIfAbsent(path, p -> new ArrayList<>()).add(points);
        } else if (hasRange && range.type > 0) {
            range.exact = topLevel && onlyRangeOrEquality;
            out.computeIfAbsent(path, p -> new ArrayList<>()).add(range);
        }
    }
}
