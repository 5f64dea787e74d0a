package local.freight.embeddedmongo;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.ServerVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

/**
 * Launcher for the embedded MongoDB-compatible engine (mongo-java-server).
 *
 * <pre>
 *   java -jar embedded-mongo.jar [--host 127.0.0.1] [--port 0] [--data-dir DIR]
 *                                [--server-version 5.0] [--no-stdin-watch]
 * </pre>
 *
 * <ul>
 *   <li>{@code --port 0} binds an ephemeral port.</li>
 *   <li>{@code --data-dir DIR}: H2 MVStore backend in {@code DIR/embedded-mongo.mv.db} (survives restarts);
 *       without it the in-memory backend is used.</li>
 *   <li>While a store opens, {@code PROGRESS <what>} lines; after binding, exactly one line
 *       {@code LISTENING <port>} is printed to stdout.</li>
 *   <li>{@code --cache-mb N}: MVStore page cache (default a quarter of the max heap); the store is
 *       read once in the background after start to fill it ({@code --no-warm-up} to skip).</li>
 *   <li>Documents are stored as BSON ({@link BsonStoreBackend}); a store written by the stock H2
 *       backend is converted once when opened. Secondary indexes are maps of the same store
 *       ({@link SecondaryIndex}), built once when missing.</li>
 *   <li>{@code --compact-every-ms N} (default 10000) and {@code --retention-ms N} (MVStore's 45 s): how
 *       often a changed store is compacted, and how long a chunk it no longer uses is kept (tests of
 *       query cursors read across compactions set both low).</li>
 *   <li>{@code --commit-delay-ms N} (default 200): the store commits every N ms between whole
 *       operations ({@link StoreCommits}), what a kill -9 can lose of writes without a durable write
 *       concern; 0: only on shutdown and for durable writes.</li>
 *   <li>Durability: a write command (insert, update, delete, findAndModify, one or a batch) whose
 *       writeConcern has {@code j: true} or {@code w: "majority"} is answered only once a commit that
 *       holds it has been written to the store file (group commit: the waiting writers wake the
 *       committer and share a commit). Written, not fsynced: a kill -9 of the JVM, or its crash,
 *       loses no such write (the OS has the pages); a power loss or an OS crash may lose the last
 *       ones. Other writes are committed within the commit delay.</li>
 *   <li>A store that fails (disk full, I/O error: MVStore closes it) makes the engine print
 *       {@code embedded-mongo: store failed: <cause>} and exit with status 4; durable writes waiting
 *       for it get an error, never an acknowledgement. Restarted once there is space, it opens the last
 *       version written.</li>
 *   <li>A JVM that spends 90% of 10 s collecting garbage prints a line naming EMBEDDED_MONGO_XMX
 *       and exits with status 3, as -XX:+ExitOnOutOfMemoryError does ({@link GcWatchdog}).</li>
 *   <li>SIGTERM/SIGINT and EOF on stdin shut the server down cleanly (H2 store committed and closed).
 *       The stdin watch makes a JVM whose parent died exit by itself; disable with {@code --no-stdin-watch}
 *       when running it by hand with stdin redirected from /dev/null.</li>
 * </ul>
 *
 * Logging goes to stderr at WARN unless -Dorg.slf4j.simpleLogger.defaultLogLevel=... is given.
 */
public final class EmbeddedMongo {

    private static final String DATA_FILE_NAME = "embedded-mongo.mv.db";

    private EmbeddedMongo() {
    }

    private static final class Options {
        String host = "127.0.0.1";
        int port = 0;
        String dataDir;
        String serverVersion = "5.0";
        boolean stdinWatch = true;
        int commitDelayMs = 200;
        /** MVStore page cache in MB; 0 = a quarter of the JVM's max heap. */
        int cacheMb = 0;
        boolean warmUp = true;
        /** Write the stock H2 backend's format (tests of the one-time conversion only). */
        boolean stockStore = false;
        /** How often the committer compacts a changed store. */
        long compactEveryMs = StoreCommits.DEFAULT_COMPACT_EVERY_MS;
        /** How long a chunk the store no longer uses is kept before its space is reused; -1: MVStore's default (45 s). */
        int retentionMs = -1;
    }

    public static void main(String[] args) {
        // Must happen before any class with an slf4j logger is initialised.
        setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setIfAbsent("org.slf4j.simpleLogger.logFile", "System.err");
        setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
        setIfAbsent("org.slf4j.simpleLogger.showThreadName", "false");
        setIfAbsent("org.slf4j.simpleLogger.showShortLogName", "true");
        // Command failures are already returned to the client as errors; don't also dump stack traces.
        // (MongoDatabaseHandler logs under this name too: the engine's own failures, "Unknown error",
        // are printed with their stack trace by EngineErrors instead.)
        setIfAbsent("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoWireProtocolHandler", "off");
        // "Connection reset" whenever a driver drops a pooled socket.
        setIfAbsent("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoExceptionHandler", "off");
        // "Closing N clients" on every shutdown.
        setIfAbsent("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.MongoServer", "error");
        // "adding secondary index ... is not yet implemented. ignoring" on every createIndex of a
        // non-unique index (they are no-ops in this engine), and "Non-empty cursor is not yet implemented".
        setIfAbsent("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase", "error");
        setIfAbsent("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.aggregation.Aggregation", "error");
        // Netty: no need for the leak detector or unsafe probing noise in a dev/test engine.
        setIfAbsent("io.netty.leakDetection.level", "disabled");

        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("embedded-mongo: " + e.getMessage());
            usage(System.err);
            System.exit(2);
            return;
        }

        try {
            run(options);
        } catch (Throwable t) {
            System.err.println("embedded-mongo: failed to start: " + t);
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, 12); i++) {
                System.err.println("    at " + frames[i]);
            }
            Throwable cause = t.getCause();
            while (cause != null) {
                System.err.println("  caused by: " + cause);
                cause = cause.getCause();
            }
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
    }

    private static void run(Options options) throws Exception {
        GcWatchdog.start();
        MVStore store = null;
        MongoBackend backend;
        if (options.dataDir != null) {
            Path dir = Paths.get(options.dataDir).toAbsolutePath();
            Files.createDirectories(dir);
            Path file = dir.resolve(DATA_FILE_NAME);
            int cacheMb = options.cacheMb > 0 ? options.cacheMb : defaultCacheMb();
            Progress.report("opening " + file + " (" + (Files.exists(file) ? Files.size(file) / (1024 * 1024) : 0)
                + " MB, page cache " + cacheMb + " MB)");
            // MVStore's default 16 MB page cache makes every collection scan re-read and re-parse pages.
            // MVStore's own auto-commit is off (by time and by unsaved memory): a commit in the middle of
            // an operation could persist a document without its index entries. StoreCommits commits
            // between operations instead; opening (a conversion, an index build) commits its own batches.
            MVStore.Builder builder = new MVStore.Builder().fileName(file.toString()).cacheSize(cacheMb);
            if (!options.stockStore) {
                // A write that fails (disk full, I/O error) makes MVStore close the store: the engine exits.
                builder.backgroundExceptionHandler((thread, e) -> StoreCommits.failed(e));
            }
            store = (options.stockStore ? builder : builder.autoCommitDisabled().autoCommitBufferSize(0).autoCompactFillRate(0)).open();
            backend = options.stockStore ? new H2Backend(store) : new BsonStoreBackend(store);
            store.commit();
            if (!options.stockStore) {
                // MVStore's serialisation and write threads, without its timer: a "delay" it never reaches
                // (StoreCommits commits; auto-commit by unsaved memory and auto-compaction stay off).
                store.setAutoCommitDelay(Integer.MAX_VALUE);
            }
            if (options.stockStore) {
                store.setAutoCommitDelay(options.commitDelayMs);
            } else {
                if (options.retentionMs >= 0) {
                    store.setRetentionTime(options.retentionMs);
                }
                StoreCommits.start(store, options.commitDelayMs, options.compactEveryMs);
            }
        } else {
            backend = new BatchedMemoryBackend();
        }
        backend.version(resolveVersion(options.serverVersion));

        ConnectionThreadsServer server = new ConnectionThreadsServer(backend);
        try {
            server.bind(new InetSocketAddress(options.host, options.port));
        } catch (Exception e) {
            closeQuietly(store);
            throw new IOException("cannot bind " + options.host + ":" + options.port, e);
        }
        int port = server.getLocalAddress().getPort();

        CountDownLatch stopped = new CountDownLatch(1);
        final MVStore finalStore = store;
        Thread hook = new Thread(() -> {
            try {
                shutdown(server, finalStore);
            } finally {
                stopped.countDown();
            }
        }, "embedded-mongo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        Progress.listening(port);
        if (store != null && options.warmUp) {
            startWarmUp(store);
        }

        if (options.stdinWatch) {
            Thread watcher = new Thread(EmbeddedMongo::watchStdin, "embedded-mongo-stdin-watch");
            watcher.setDaemon(true);
            watcher.start();
        }

        stopped.await();
    }

    /** A quarter of the heap: the rest is for the documents a query decodes and an aggregation's stages. */
    private static int defaultCacheMb() {
        return (int) Math.max(16, Runtime.getRuntime().maxMemory() / (4L * 1024 * 1024));
    }

    /**
     * Reads every collection once in the background after the server listens, so the page cache
     * is filled before the first requests (up to its size) without delaying start-up.
     */
    private static void startWarmUp(MVStore store) {
        Thread warm = new Thread(() -> {
            long budget = (long) store.getCacheSize() * 1024 * 1024 * 8 / 10;
            long read = 0;
            try {
                for (String name : store.getMapNames()) {
                    if (!name.startsWith("databases.")) {
                        continue;
                    }
                    for (Object value : store.openMap(name, StoreObjectType.<Object, Object>builder()).values()) {
                        read += value instanceof byte[] bytes ? bytes.length : 1024;
                        if (read > budget || store.isClosed()) {
                            return;
                        }
                    }
                }
            } catch (RuntimeException ignored) {
                // best effort: the store may be closing
            }
        }, "embedded-mongo-warm-up");
        warm.setDaemon(true);
        warm.setPriority(Thread.MIN_PRIORITY);
        warm.start();
    }

    /** Exit (running the shutdown hook) once stdin reaches EOF, i.e. when the parent process went away. */
    private static void watchStdin() {
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // ignore input
            }
        } catch (IOException ignored) {
            // treat like EOF
        }
        System.exit(0);
    }

    private static synchronized void shutdown(ConnectionThreadsServer server, MVStore store) {
        StoreCommits.shuttingDown();
        try {
            // stops listening, closes client channels, then closes the backend (H2Backend.close() closes the MVStore)
            server.shutdownNow();
        } catch (Throwable t) {
            System.err.println("embedded-mongo: error during shutdown: " + t);
        }
        if (store != null && !store.isClosed()) {
            try {
                StoreCommits.commit(store);
            } catch (Throwable t) {
                System.err.println("embedded-mongo: error committing store: " + t);
            }
            closeQuietly(store);
        }
        System.err.flush();
    }

    private static void closeQuietly(MVStore store) {
        if (store == null || store.isClosed()) {
            return;
        }
        try {
            store.close();
        } catch (Throwable t) {
            System.err.println("embedded-mongo: error closing store: " + t);
        }
    }

    private static ServerVersion resolveVersion(String version) {
        switch (version) {
            case "3.6":
                return ServerVersion.MONGO_3_6;
            case "4.0":
                return ServerVersion.MONGO_4_0;
            case "5.0":
                return ServerVersion.MONGO_5_0;
            default:
                throw new IllegalArgumentException("unsupported --server-version " + version + " (3.6, 4.0 or 5.0)");
        }
    }

    private static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                value = arg.substring(eq + 1);
                arg = arg.substring(0, eq);
            }
            switch (arg) {
                case "--host":
                    o.host = value != null ? value : next(args, ++i, arg);
                    break;
                case "--port":
                    o.port = parsePort(value != null ? value : next(args, ++i, arg));
                    break;
                case "--data-dir":
                    o.dataDir = value != null ? value : next(args, ++i, arg);
                    if (o.dataDir.isEmpty()) {
                        o.dataDir = null;
                    }
                    break;
                case "--server-version":
                    o.serverVersion = value != null ? value : next(args, ++i, arg);
                    resolveVersion(o.serverVersion);
                    break;
                case "--commit-delay-ms":
                    o.commitDelayMs = parseInt(value != null ? value : next(args, ++i, arg), arg, 0, 60_000);
                    break;
                case "--cache-mb":
                    o.cacheMb = parseInt(value != null ? value : next(args, ++i, arg), arg, 0, 1_000_000);
                    break;
                case "--stock-store":
                    o.stockStore = true;
                    break;
                case "--compact-every-ms":
                    o.compactEveryMs = parseInt(value != null ? value : next(args, ++i, arg), arg, 1, 3_600_000);
                    break;
                case "--retention-ms":
                    o.retentionMs = parseInt(value != null ? value : next(args, ++i, arg), arg, 0, 3_600_000);
                    break;
                case "--no-warm-up":
                    o.warmUp = false;
                    break;
                case "--no-stdin-watch":
                    o.stdinWatch = false;
                    break;
                case "--help":
                case "-h":
                    usage(System.out);
                    System.exit(0);
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        return o;
    }

    private static String next(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[i];
    }

    private static int parsePort(String s) {
        return parseInt(s, "--port", 0, 65535);
    }

    private static int parseInt(String s, String name, int min, int max) {
        try {
            int v = Integer.parseInt(s.trim());
            if (v < min || v > max) {
                throw new IllegalArgumentException(name + " out of range: " + s);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " is not a number: " + s);
        }
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: java -jar embedded-mongo.jar [--host 127.0.0.1] [--port 0] [--data-dir DIR]"
                + " [--server-version 3.6|4.0|5.0] [--commit-delay-ms 200] [--cache-mb 0] [--no-warm-up] [--no-stdin-watch]"
                + " [--compact-every-ms 10000] [--retention-ms N]");
    }
}
