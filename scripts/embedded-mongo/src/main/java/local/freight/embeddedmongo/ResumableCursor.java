package local.freight.embeddedmongo;

import java.util.AbstractMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Function;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStoreException;

/**
 * An MVMap's entries from a key on, in key order or reversed, for a query cursor that a client may
 * read for minutes (a 1M-trip backfill, an export). An MVMap cursor walks the B-tree of the moment
 * it opened; once the store has compacted the chunks that tree's pages lie in and their retention
 * has passed, the next page it loads fails ("Chunk N not found"), though every entry is still in
 * the map. Then the walk goes on from the last key it returned, in the map as it is now: as a
 * MongoDB cursor does, which sees the writes made while it is read, not a snapshot.
 */
final class ResumableCursor<K, V> implements Iterator<Map.Entry<K, V>> {

    /** Reopened at most this many times in a row without an entry between (a store that lost a chunk for good). */
    private static final int MAX_REOPENS = 3;

    private final MVMap<K, V> map;
    private final K from;
    private final boolean reverse;
    private Cursor<K, V> cursor;
    private K last;
    private boolean started;
    /** Reopened at the last key returned: its first key is that one, skipped. */
    private boolean reopened;
    private Map.Entry<K, V> next;
    private boolean fetched;

    /** From {@code from} (inclusive; null: the first or, reversed, the last key) to the end. */
    ResumableCursor(MVMap<K, V> map, K from, boolean reverse) {
        this.map = map;
        this.from = from;
        this.reverse = reverse;
        this.cursor = map.cursor(from, null, reverse);
    }

    /** Every value of the map, in key order. */
    static <K, V> Iterable<V> values(MVMap<K, V> map) {
        return () -> mapped(new ResumableCursor<>(map, null, false), Map.Entry::getValue);
    }

    /** The keys from {@code from} on (reversed: down from it). */
    static <K> Iterator<K> keys(MVMap<K, ?> map, K from, boolean reverse) {
        return mapped(new ResumableCursor<>(map, from, reverse), Map.Entry::getKey);
    }

    private static <T, R> Iterator<R> mapped(Iterator<T> source, Function<? super T, ? extends R> f) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return source.hasNext();
            }

            @Override
            public R next() {
                return f.apply(source.next());
            }
        };
    }

    @Override
    public boolean hasNext() {
        if (!fetched) {
            next = fetch();
            fetched = true;
        }
        return next != null;
    }

    @Override
    public Map.Entry<K, V> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        fetched = false;
        return next;
    }

    private Map.Entry<K, V> fetch() {
        for (int reopens = 0;; reopens++) {
            try {
                while (cursor.hasNext()) {
                    K key = cursor.next();
                    if (reopened) {
                        reopened = false;
                        if (map.getKeyType().compare(key, last) == 0) {
                            continue;
                        }
                    }
                    started = true;
                    last = key;
                    return new AbstractMap.SimpleImmutableEntry<>(key, cursor.getValue());
                }
                return null;
            } catch (MVStoreException e) {
                if (e.getErrorCode() != DataUtils.ERROR_CHUNK_NOT_FOUND || reopens >= MAX_REOPENS) {
                    throw e;
                }
                cursor = map.cursor(started ? last : from, null, reverse);
                reopened = started;
            }
        }
    }
}
