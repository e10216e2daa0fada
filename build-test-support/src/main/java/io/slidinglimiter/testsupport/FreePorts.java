package io.slidinglimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * Hands out loopback ports for the servers tests start, each held by this JVM until it exits.
 * <p>
 * The operating system's free port is free only until someone binds it: between the moment a test
 * picks one and the moment its {@code redis-server} or {@code postgres} binds it (and while a fault
 * test has stopped its server before restarting it on the same port), another test JVM of the same
 * build, which surefire runs beside this one, could be handed the same port. So each port handed
 * out is also locked in a file of the machine's temporary directory ({@code /tmp}, shared by every
 * module's JVMs, whose {@code java.io.tmpdir} is their own {@code target/}), which every test JVM asks
 * first; the JVM deletes its files and lets go of their locks as it exits.
 */
public final class FreePorts {

    private static final Path LOCKS = Path.of(Files.isDirectory(Path.of("/tmp")) ? "/tmp"
            : System.getProperty("user.home"), "sliding-limiter-ports");

    /** The locks this JVM holds, by port: kept reachable so that they last as long as the JVM. */
    private static final Map<Integer, FileLock> HELD = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(FreePorts::releaseAll, "free-ports-exit"));
    }

    private FreePorts() {
    }

    /**
     * A port free now, locked for this JVM, and never one of the well-known ports of the servers a
     * developer may run themselves.
     * @param acceptable more conditions on the port (a cluster node's bus port free too)
     * @return the port
     */
    public static int next(IntPredicate acceptable) {
        try {
            Files.createDirectories(LOCKS);
            while (true) {
                int port;
                try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                    port = socket.getLocalPort();
                }
                if (port != 6379 && port != 5432 && acceptable.test(port) && lock(port)) {
                    return port;
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Whether the port is bindable on loopback now. */
    public static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        }
        catch (IOException ex) {
            return false;
        }
    }

    /** Deletes each file while still holding its lock, then lets go: a JVM never waits on one. */
    private static void releaseAll() {
        HELD.forEach((port, lock) -> {
            try (FileChannel channel = lock.channel()) {
                Files.deleteIfExists(LOCKS.resolve(Integer.toString(port)));
            }
            catch (IOException ex) {
                // Left behind: an empty file, locked by no one, that the next JVM may lock again.
            }
        });
    }

    private static boolean lock(int port) throws IOException {
        if (HELD.containsKey(port)) {
            return false;
        }
        FileChannel channel = FileChannel.open(LOCKS.resolve(Integer.toString(port)), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                return false;
            }
            HELD.put(port, lock);
            return true;
        }
        catch (OverlappingFileLockException ex) {
            channel.close();
            return false;
        }
    }

}
