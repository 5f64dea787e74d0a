package local.freight.embeddedmongo;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import org.h2.mvstore.MVStore;

/**
 * The store's commits, taken between whole operations: a document and its index entries live in
 * different maps, and MVStore's own background commit could persist one without the other. Every
 * write of a collection runs inside {@link #atomically} (a shared lock); a commit takes the lock
 * exclusively, so each store version on disk holds whole operations only. MVStore's own
 * auto-commit (by time and by unsaved memory) is disabled; {@link #start} commits instead, every
 * {@code delayMs} (the window a kill -9 can lose, plus the commit's own write), and rewrites sparse
 * chunks now and then as MVStore's background writer would have. A periodic commit holds writers
 * back only while MVStore captures the version ({@link #commitInBackground}); an insert batch is
 * one operation per document (BsonStoreCollection.insertDocuments), so it waits for one document.
 */
final class StoreCommits {

    private static final ReentrantReadWriteLock LOCK = new ReentrantReadWriteLock();
    /** Fill rate (percent) below which chunks are rewritten, and how much to rewrite per pass. */
    private static final int COMPACT_FILL_RATE = 50;
    private static final int COMPACT_WRITE_BYTES = 16 * 1024 * 1024;
    private static final long COMPACT_EVERY_MS = 10_000;

    private StoreCommits() {
    }

    static <T> T atomically(Supplier<T> operation) {
        LOCK.readLock().lock();
        try {
            return operation.get();
        } finally {
            LOCK.readLock().unlock();
        }
    }

    static void atomically(Runnable operation) {
        atomically(() -> {
            operation.run();
            return null;
        });
    }

    /** A commit slower than this (waiting for operations plus writing) is reported on stderr. */
    private static final long SLOW_COMMIT_MS = Long.getLong("embeddedMongo.slowCommitMs", 1000);

    /** Commits now, between operations (none may be running in this thread). */
    static void commit(MVStore store) {
        long asked = System.nanoTime();
        LOCK.writeLock().lock();
        long locked = System.nanoTime();
        try {
            if (!store.isClosed() && store.hasUnsavedChanges()) {
                store.commit();
            }
        } finally {
            LOCK.writeLock().unlock();
        }
        long waitedMs = (locked - asked) / 1_000_000;
        long wroteMs = (System.nanoTime() - locked) / 1_000_000;
        if (waitedMs + wroteMs >= SLOW_COMMIT_MS) {
            System.err.println("embedded-mongo: slow commit: " + waitedMs + " ms waiting for operations in flight, "
                + wroteMs + " ms writing");
        }
    }

    /**
     * A commit whose exclusive part is only the capture of every map's root: MVStore then
     * serialises and writes the captured version on its own threads while writers go on (they
     * change new copies of the pages, not the captured ones). The window a kill -9 can lose is
     * the interval plus that write. Skipped if MVStore's store lock is busy (the next one takes it).
     */
    static void commitInBackground(MVStore store) {
        long asked = System.nanoTime();
        LOCK.writeLock().lock();
        long locked = System.nanoTime();
        try {
            if (!store.isClosed() && store.hasUnsavedChanges()) {
                store.tryCommit();
            }
        } finally {
            LOCK.writeLock().unlock();
        }
        long waitedMs = (locked - asked) / 1_000_000;
        long heldMs = (System.nanoTime() - locked) / 1_000_000;
        if (waitedMs + heldMs >= SLOW_COMMIT_MS) {
            System.err.println("embedded-mongo: slow commit: " + waitedMs + " ms waiting for operations in flight, "
                + heldMs + " ms capturing the version");
        }
    }

    /** The background committer (a daemon thread); {@code delayMs} 0: commits only on shutdown. */
    static void start(MVStore store, int delayMs) {
        if (delayMs <= 0) {
            return;
        }
        Thread committer = new Thread(() -> {
            long lastCompact = System.nanoTime();
            while (!store.isClosed()) {
                try {
                    Thread.sleep(delayMs);
                    commitInBackground(store);
                    if (System.nanoTime() - lastCompact > COMPACT_EVERY_MS * 1_000_000) {
                        lastCompact = System.nanoTime();
                        compact(store);
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    if (!store.isClosed()) {
                        System.err.println("embedded-mongo: background commit failed: " + e);
                    }
                }
            }
        }, "embedded-mongo-commit");
        committer.setDaemon(true);
        committer.start();
    }

    private static void compact(MVStore store) {
        LOCK.writeLock().lock();
        try {
            if (!store.isClosed()) {
                store.compact(COMPACT_FILL_RATE, COMPACT_WRITE_BYTES);
            }
        } finally {
            LOCK.writeLock().unlock();
        }
    }
}
