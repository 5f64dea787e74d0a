package local.freight.embeddedmongo;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.exception.MongoServerError;

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
 * A write with {@code j: true} or {@code w: "majority"} waits ({@link #awaitDurable}) for a commit
 * captured after it to be in the file; it wakes the committer, and the writers that arrive during a
 * commit share the next one (group commit). A commit that fails ends the engine ({@link #failed}).
 */
final class StoreCommits {

    private static final ReentrantReadWriteLock LOCK = new ReentrantReadWriteLock();
    /** Live share (percent) of the chunks below which they are rewritten, and how much one rewrite writes. */
    private static final int COMPACT_FILL_RATE = 50;
    private static final int COMPACT_WRITE_BYTES = 16 * 1024 * 1024;
    static final long DEFAULT_COMPACT_EVERY_MS = 10_000;
    /** Writes begun so far (atomically): a store none has touched since the last compaction is idle. */
    private static final AtomicLong OPERATIONS = new AtomicLong();

    private StoreCommits() {
    }

    static <T> T atomically(Supplier<T> operation) {
        OPERATIONS.incrementAndGet();
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

    // Durable writes (group commit). A commit is numbered when it captures the version (under the
    // exclusive lock); `durable` is the number of the last one whose pages are in the file. A write
    // done before a writer reads `captured` is in commit captured + 1 or later.
    private static final Object DURABLE = new Object();
    private static long captured;
    private static long durable;
    private static long requested;
    private static volatile String failure;
    private static volatile boolean shuttingDown;
    private static volatile boolean started;
    private static volatile MVStore committed;

    /** Exit status of an engine whose store failed (disk full, I/O error, store closed by a panic). */
    static final int STORE_FAILED_EXIT_STATUS = 4;

    /**
     * Returns once a commit captured after the caller's writes has been written to the file (by
     * the committer, asked to commit now); throws if the store fails first. The file is written,
     * not fsynced: a kill -9 of the JVM loses nothing acknowledged (the pages are in the OS page
     * cache), a power loss may.
     */
    static void awaitDurable() {
        if (!started) {
            throw new IllegalStateException("durable write without a committer");
        }
        synchronized (DURABLE) {
            long need = captured + 1;
            if (requested < need) {
                requested = need;
                DURABLE.notifyAll();
            }
            while (durable < need) {
                if (failure != null || shuttingDown) {
                    throw new MongoServerError(91, "ShutdownInProgress",
                        failure != null ? "store failed: " + failure + "; the write was not made durable" : "shutting down; the write was not made durable");
                }
                try {
                    DURABLE.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new MongoServerError(91, "ShutdownInProgress", "interrupted while waiting for the write to be durable");
                }
            }
        }
    }

    /**
     * A commit whose exclusive part is only the capture of every map's root: MVStore serialises and
     * writes the captured version on its own threads while writers go on (they change new copies of
     * the pages, not the captured ones); then this thread waits for that write (tryCommit returns
     * before it), so the commit's number can be published as durable. True when it captured the
     * version; false when MVStore's store lock was busy (the next one takes it).
     */
    static boolean commitInBackground(MVStore store) {
        long asked = System.nanoTime();
        long number;
        boolean changed;
        LOCK.writeLock().lock();
        long locked = System.nanoTime();
        try {
            if (store.isClosed()) {
                throw store.getPanicException() != null ? store.getPanicException() : new IllegalStateException("the store was closed");
            }
            synchronized (DURABLE) {
                number = ++captured;
            }
            changed = store.hasUnsavedChanges();
            if (changed && store.tryCommit() < 0 && store.hasUnsavedChanges()) {
                return false;
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
        // Waits for MVStore's serialisation and write threads to finish what was submitted (this
        // capture and earlier ones); a failed write has made the store panic, which this rethrows.
        if (changed) {
            store.executeFilestoreOperation(() -> {
            });
            if (store.getPanicException() != null) {
                throw store.getPanicException();
            }
        }
        synchronized (DURABLE) {
            durable = Math.max(durable, number);
            DURABLE.notifyAll();
        }
        return true;
    }

    /** The committer: every {@code delayMs} (0: never by time), and at once when a durable write waits. */
    static void start(MVStore store, int delayMs, long compactEveryMs) {
        started = true;
        committed = store;
        Thread committer = new Thread(() -> {
            long lastCompact = System.nanoTime();
            long operationsAtCompact = OPERATIONS.get();
            while (!store.isClosed() && !shuttingDown) {
                try {
                    synchronized (DURABLE) {
                        long until = System.nanoTime() + delayMs * 1_000_000L;
                        while (requested <= durable && !shuttingDown) {
                            long left = delayMs > 0 ? (until - System.nanoTime()) / 1_000_000 : 0;
                            if (delayMs > 0 && left <= 0) {
                                break;
                            }
                            DURABLE.wait(Math.max(left, 0));
                        }
                    }
                    if (shuttingDown) {
                        return;
                    }
                    if (!commitInBackground(store)) {
                        Thread.sleep(5);
                        continue;
                    }
                    // Busy: a tenth of the time every compactEveryMs. Idle (no write since the last pass):
                    // half of it, every second at most, until the chunks are half live again.
                    boolean idle = OPERATIONS.get() == operationsAtCompact;
                    long every = idle ? Math.min(compactEveryMs, IDLE_COMPACT_EVERY_MS) : compactEveryMs;
                    if (System.nanoTime() - lastCompact > every * 1_000_000) {
                        compact(store, idle ? every / 2 : every / 10);
                        lastCompact = System.nanoTime();
                        operationsAtCompact = OPERATIONS.get();
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    if (!shuttingDown) {
                        failed(e);
                    }
                    return;
                }
            }
            if (!shuttingDown) {
                failed(store.getPanicException() != null ? store.getPanicException() : new IllegalStateException("the store was closed"));
            }
        }, "embedded-mongo-commit");
        committer.setDaemon(true);
        committer.start();
    }

    /** The launcher is stopping the engine: the store is closed on purpose; waiting writers get an error. */
    static void shuttingDown() {
        shuttingDown = true;
        synchronized (DURABLE) {
            DURABLE.notifyAll();
        }
    }

    static boolean isShuttingDown() {
        return shuttingDown;
    }

    /** The store was closed, or MVStore gave up on it (a panic), while not shutting down. */
    static boolean isBroken() {
        MVStore store = committed;
        return store != null && !shuttingDown && (store.isClosed() || store.getPanicException() != null);
    }

    /** Why the store failed, or null. */
    static String failure() {
        return failure;
    }

    /**
     * The store cannot go on (a failed write closes it): one line on stderr, waiting writers get an
     * error, and the JVM exits with {@link #STORE_FAILED_EXIT_STATUS} so that the service restarts
     * it on the last version on disk (once there is space again). Idempotent; ignored while
     * shutting down.
     */
    static void failed(Throwable cause) {
        if (shuttingDown) {
            return;
        }
        MVStore store = committed;
        if (store != null && store.getPanicException() != null) {
            cause = store.getPanicException(); // the write that failed, not a later "store is closed"
        }
        synchronized (DURABLE) {
            if (failure != null) {
                return;
            }
            failure = describe(cause);
            DURABLE.notifyAll();
        }
        System.err.println("embedded-mongo: store failed: " + failure);
        System.err.flush();
        // A moment for the error replies of the writers that waited, then no more answers from a dead store.
        Thread exit = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException ignored) {
                // exit now
            }
            Runtime.getRuntime().halt(STORE_FAILED_EXIT_STATUS);
        }, "embedded-mongo-store-failed");
        exit.setDaemon(false);
        exit.start();
    }

    /** The innermost cause (an IOException's "No space left on device"), then where it surfaced. */
    private static String describe(Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = root.getClass().getName() + ": " + root.getMessage();
        if (root != cause) {
            text += " (" + cause.getMessage() + ")";
        }
        return text.replaceAll("\\s+", " ");
    }

    /** How often an idle store is compacted, at most. */
    private static final long IDLE_COMPACT_EVERY_MS = 1_000;

    /**
     * Rewrites the sparsest chunks while the chunks are less than COMPACT_FILL_RATE live, for about
     * {@code budgetMs} (one rewrite at least), each rewrite committed before the next is chosen.
     * Writers wait during a rewrite only (the exclusive lock), and a writer waiting ends the pass. MVStore
     * reuses the space of the chunks a rewrite empties once their retention has passed: the file
     * stops growing, it does not shrink. One rewrite of {@code COMPACT_WRITE_BYTES} every 10 s,
     * as before, fell far behind a bulk load: a 1M/1M seed left a 78 GB file whose chunks were 31 %
     * live, and an idle store was never compacted further (docs/benchmarks.md).
     */
    private static void compact(MVStore store, long budgetMs) {
        long stopAt = System.nanoTime() + budgetMs * 1_000_000L;
        do {
            boolean rewrote;
            LOCK.writeLock().lock();
            try {
                rewrote = !store.isClosed() && store.compact(COMPACT_FILL_RATE, COMPACT_WRITE_BYTES);
            } finally {
                LOCK.writeLock().unlock();
            }
            if (!rewrote || shuttingDown || !commitInBackground(store)) {
                return;
            }
            // Writers waiting (the lock's queue) end the pass: one waits for one rewrite at most.
        } while (System.nanoTime() - stopAt < 0 && !LOCK.hasQueuedThreads());
    }
}
