package local.freight.embeddedmongo;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * {@code PROGRESS <what>} lines on stdout while the store opens: launcher.ts (scripts/embedded-mongo) restarts its
 * start timeout on each, so a large store that is being opened (or converted) is not taken for a
 * hung engine. Stops once the server listens.
 */
final class Progress {

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static volatile boolean open = true;

    private Progress() {
    }

    static void report(String what) {
        if (open) {
            synchronized (OUT) {
                OUT.println("PROGRESS " + what);
            }
        }
    }

    static void listening(int port) {
        open = false;
        synchronized (OUT) {
            OUT.println("LISTENING " + port);
            OUT.flush();
        }
    }
}
