package local.freight.embeddedmongo;

import java.util.Arrays;

/**
 * The positions seen along an index range, each kept as the tail of its entry (an entry ends with
 * its position's bytes, the same for every entry of a document): a multikey range is deduplicated
 * without decoding a position. A {@code HashSet} of decoded ids made a String per entry and took
 * most of the count and the ranking of a month of trips by offload date (issue 37).
 *
 * <p>One {@code long} per slot (the hash, and where the entry is in the list of those added), so a
 * probe touches one slot; the entries' bytes are compared only when the hashes are equal.
 */
final class PositionSet {

    private long[] slots;
    private byte[][] entries;
    private int[] starts;
    private int size;

    /** Room for {@code expected} positions before the table grows. */
    PositionSet(long expected) {
        int capacity = Integer.highestOneBit((int) Math.min(1 << 30, Math.max(16, expected * 2)) - 1) << 1;
        slots = new long[capacity];
        int listed = (int) Math.min(1 << 30, Math.max(16, expected));
        entries = new byte[listed][];
        starts = new int[listed];
    }

    /** Adds the position held in {@code entry} from {@code start} to its end; false when already there. */
    boolean add(byte[] entry, int start) {
        int hash = hash(entry, start);
        int mask = slots.length - 1;
        for (int slot = hash & mask; ; slot = (slot + 1) & mask) {
            long v = slots[slot];
            if (v == 0) {
                if (size == entries.length) {
                    entries = Arrays.copyOf(entries, size * 2);
                    starts = Arrays.copyOf(starts, size * 2);
                }
                entries[size] = entry;
                starts[size] = start;
                slots[slot] = ((long) hash << 32) | (++size & 0xFFFFFFFFL);
                if (size * 2 > slots.length) {
                    grow();
                }
                return true;
            }
            if ((int) (v >>> 32) == hash) {
                int other = (int) v - 1;
                if (Arrays.equals(entry, start, entry.length, entries[other], starts[other], entries[other].length)) {
                    return false;
                }
            }
        }
    }

    int size() {
        return size;
    }

    private static int hash(byte[] entry, int start) {
        int h = 1;
        for (int i = start; i < entry.length; i++) {
            h = 31 * h + entry[i];
        }
        return h ^ (h >>> 16) ^ (h >>> 7);
    }

    private void grow() {
        long[] old = slots;
        slots = new long[old.length * 2];
        int mask = slots.length - 1;
        for (long v : old) {
            if (v != 0) {
                int slot = (int) (v >>> 32) & mask;
                while (slots[slot] != 0) {
                    slot = (slot + 1) & mask;
                }
                slots[slot] = v;
            }
        }
    }
}
