package local.freight.embeddedmongo;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * Ends an engine whose heap is too small for its work: a JVM near its max heap does not always
 * throw OutOfMemoryError (which -XX:+ExitOnOutOfMemoryError turns into an exit); it can spend
 * nearly all its time collecting garbage, and every query then times out for minutes. When the
 * collectors' share of the last {@link #WINDOW_MS} reaches {@link #LIMIT_PERCENT}, this prints one
 * line saying so and what to set, and halts: the service sees the engine exit and restarts it
 * (scripts/embedded-mongo/supervisor.ts) instead of waiting on it.
 */
final class GcWatchdog {

    private static final long SAMPLE_MS = 500;
    /** The window and the limit; system properties override them (the test that shows the exit lowers both). */
    private static final long WINDOW_MS = Long.getLong("embeddedMongo.gcWatchdog.windowMs", 10_000);
    private static final int LIMIT_PERCENT = Integer.getInteger("embeddedMongo.gcWatchdog.percent", 90);
    /** The exit status of -XX:+ExitOnOutOfMemoryError, so both are told apart from a crash alike. */
    static final int EXIT_STATUS = 3;

    private GcWatchdog() {
    }

    static void start() {
        Thread watchdog = new Thread(GcWatchdog::watch, "embedded-mongo-gc-watchdog");
        watchdog.setDaemon(true);
        watchdog.setPriority(Thread.MAX_PRIORITY);
        watchdog.start();
    }

    private static void watch() {
        int slots = (int) (WINDOW_MS / SAMPLE_MS);
        long[] wall = new long[slots + 1];
        long[] gc = new long[slots + 1];
        int n = 0;
        for (;;) {
            try {
                Thread.sleep(SAMPLE_MS);
            } catch (InterruptedException e) {
                return;
            }
            int at = n % wall.length;
            wall[at] = System.nanoTime() / 1_000_000;
            gc[at] = gcMillis();
            n++;
            if (n <= slots) {
                continue;
            }
            int oldest = n % wall.length;
            long elapsed = wall[at] - wall[oldest];
            long collecting = gc[at] - gc[oldest];
            if (elapsed > 0 && collecting * 100 >= elapsed * LIMIT_PERCENT) {
                long maxMb = Runtime.getRuntime().maxMemory() / (1024 * 1024);
                System.err.println("embedded-mongo: out of memory: " + (collecting * 100 / elapsed) + "% of the last "
                    + elapsed / 1000 + " s spent collecting garbage with a max heap of " + maxMb
                    + " MB; exiting. Give the engine more heap with EMBEDDED_MONGO_XMX (e.g. EMBEDDED_MONGO_XMX="
                    + Math.max(2, (maxMb * 2 + 1023) / 1024) + "g) or run on a real MongoDB with MONGODB_URI");
                System.err.flush();
                Runtime.getRuntime().halt(EXIT_STATUS);
            }
        }
    }

    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, bean.getCollectionTime());
        }
        return total;
    }
}
