package io.slidinglimiter.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A real redis-server for tests, started on a free port of its own: the binary on PATH, else the
 * one shipped inside com.github.codemonstur:embedded-redis. Tests can stop, pause and restart it
 * on the same port. Never port 6379, never a server it did not start.
 */
public final class RedisServer implements AutoCloseable {

    private static final String[] EMBEDDED = { "redis-server-6.2.6-v5-linux-amd64", "redis-server-6.2.7-linux-arm64" };

    private static volatile Path binary;

    private static volatile int majorVersion;

    private final int port;

    private final Path directory;

    private final List<String> extraArguments;

    private Process process;

    /** For a sentinel: what it monitors ({@code <name> <host> <port> <quorum>}); null for a server. */
    private String monitors;

    private RedisServer(int port, List<String> extraArguments) throws IOException {
        this.port = port;
        this.directory = Files.createTempDirectory("limiter-redis-" + port);
        this.extraArguments = extraArguments;
    }

    /**
     * Starts a Sentinel on a free port, monitoring a master with quorum 2, down after one second.
     * @param masterName the name it knows the master by
     * @param masterPort the master's port on 127.0.0.1
     * @return the running sentinel
     */
    public static RedisServer startSentinel(String masterName, int masterPort) {
        try {
            RedisServer sentinel = new RedisServer(freePort(), List.of());
            sentinel.monitors = masterName + " 127.0.0.1 " + masterPort + " 2";
            sentinel.startProcess();
            return sentinel;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * What the server logged so far, for a failure message.
     * @return the log, or why it could not be read
     */
    public String log() {
        try {
            return Files.readString(this.directory.resolve("redis.log"));
        }
        catch (IOException ex) {
            return "(no log: " + ex.getMessage() + ")";
        }
    }

    /** Kills the process at once (SIGKILL), as a crash would: no connection is closed politely. */
    public void kill() {
        if (this.process != null) {
            this.process.destroyForcibly();
            try {
                this.process.waitFor(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            this.process = null;
        }
    }

    /**
     * Starts a standalone server on a free port.
     * @return the running server
     */
    public static RedisServer start() {
        return start(List.of());
    }

    /**
     * Starts a server on a free port with more arguments.
     * @param extraArguments for example {@code --replicaof 127.0.0.1 <port>}
     * @return the running server
     */
    public static RedisServer start(List<String> extraArguments) {
        try {
            RedisServer server = new RedisServer(freePort(), extraArguments);
            server.startProcess();
            return server;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** @return the process id of the running server, for CPU accounting */
    public long pid() {
        return this.process.pid();
    }

    /** @return the port it listens on */
    public int port() {
        return this.port;
    }

    /** @return a URI for clients */
    public RedisURI uri() {
        return RedisURI.create("127.0.0.1", this.port);
    }

    /** Stops the process; {@link #restart()} starts it again, empty, on the same port. */
    public void stop() {
        if (this.process != null) {
            this.process.destroy();
            try {
                if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
                    this.process.destroyForcibly().waitFor();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            this.process = null;
        }
    }

    /** Starts the server again on its port, with no data. */
    public void restart() {
        stop();
        try {
            startProcess();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Runs commands against this server on a connection of its own.
     * @param work what to do
     * @param <T> what it returns
     * @return its result
     */
    public <T> T call(java.util.function.Function<RedisCommands<String, String>, T> work) {
        RedisClient client = RedisClient.create(uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return work.apply(connection.sync());
        }
        finally {
            // A bounded wait: Lettuce's shutdown once waited forever here (a CI run) for a termination
            // future that never completed, though every event-loop thread had ended.
            try {
                client.shutdownAsync(0, 1, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
                // Its threads are gone or going; nothing waits on them.
            }
        }
    }

    /**
     * The scripts this server ran so far ({@code EVALSHA} and {@code EVAL} in {@code INFO
     * commandstats}): the script calls that reached it, each deciding one decision or a batch of them.
     * @return the count since start or the last {@code CONFIG RESETSTAT}
     */
    public long scriptCalls() {
        return commandCalls("evalsha", "eval");
    }

    /**
     * How many times this server ran some commands ({@code INFO commandstats}), those a script called
     * included.
     * @param commands lower-case command names, such as {@code hmget}
     * @return their calls since start or the last {@code CONFIG RESETSTAT}, together
     */
    public long commandCalls(String... commands) {
        String stats = call((redis) -> redis.info("commandstats"));
        long calls = 0;
        for (String line : stats.lines().toList()) {
            for (String command : commands) {
                if (line.startsWith("cmdstat_" + command + ":")) {
                    String field = line.substring(line.indexOf("calls=") + 6);
                    calls += Long.parseLong(field.substring(0, field.indexOf(',')));
                }
            }
        }
        return calls;
    }

    /**
     * The permits counted now in the sliding-window-counter hashes whose keys match a pattern, summed
     * by Redis: under a limit no key reaches, at a cost of one, the decisions Redis made for those
     * keys and kept (none given back), however many decisions each script call carried.
     * @param pattern a {@code KEYS} glob, such as {@code limiter:*:work}
     * @return the sum of their counts
     */
    public long countedPermits(String pattern) {
        return call((redis) -> redis.<Long>eval("local n = 0 for _, key in ipairs(redis.call('KEYS', ARGV[1])) do "
                + "if redis.call('TYPE', key).ok == 'hash' then n = n + (tonumber(redis.call('HGET', key, 't')) or 0) end "
                + "end return n", io.lettuce.core.ScriptOutputType.INTEGER, new String[0], pattern));
    }

    /**
     * Stalls the server (DEBUG SLEEP), as a long fork, a slow disk or swapping would: it neither
     * answers nor runs commands until it wakes. Blocks the calling thread as long.
     * @param seconds how long
     */
    public void stall(double seconds) {
        call((redis) -> redis.dispatch(io.lettuce.core.protocol.CommandType.DEBUG,
                new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8).add("SLEEP")
                        .add(Double.toString(seconds))));
    }

    @Override
    public void close() {
        stop();
        TemporaryFiles.deleteQuietly(this.directory.toFile());
    }

    private void startProcess() throws IOException {
        List<String> command = new ArrayList<>(List.of(binary().toString(), "--port", Integer.toString(this.port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.directory.toString()));
        if (this.monitors != null) {
            String name = this.monitors.substring(0, this.monitors.indexOf(' '));
            Path config = this.directory.resolve("sentinel.conf");
            Files.writeString(config, String.join("\n", "port " + this.port, "bind 127.0.0.1",
                    "dir " + this.directory, "sentinel monitor " + this.monitors,
                    "sentinel down-after-milliseconds " + name + " 1000",
                    "sentinel failover-timeout " + name + " 10000", "sentinel parallel-syncs " + name + " 1", ""));
            command = new ArrayList<>(List.of(binary().toString(), config.toString(), "--sentinel"));
        }
        if (majorVersion() >= 7 && this.monitors == null) {
            // Redis 7 refuses DEBUG unless told otherwise; fault tests stall their server with DEBUG SLEEP.
            command.addAll(List.of("--enable-debug-command", "yes"));
        }
        command.addAll(this.extraArguments);
        this.process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(this.directory.resolve("redis.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!this.process.isAlive()) {
                throw new IllegalStateException("redis-server exited: " + Files.readString(this.directory.resolve("redis.log")));
            }
            try (Socket socket = new Socket("127.0.0.1", this.port)) {
                return;
            }
            catch (IOException notYet) {
                sleepMillis(20);
            }
        }
        throw new IllegalStateException("redis-server did not listen on " + this.port + " within 20 s");
    }

    /** The major version of the binary, from {@code redis-server --version} ({@code v=7.0.15}). */
    private static int majorVersion() throws IOException {
        if (majorVersion == 0) {
            Process version = new ProcessBuilder(binary().toString(), "--version").redirectErrorStream(true).start();
            String output = new String(version.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            int at = output.indexOf("v=");
            majorVersion = (at >= 0) ? Integer.parseInt(output.substring(at + 2, output.indexOf('.', at))) : 6;
        }
        return majorVersion;
    }

    private static Path binary() throws IOException {
        if (binary == null) {
            synchronized (RedisServer.class) {
                if (binary == null) {
                    binary = findBinary();
                }
            }
        }
        return binary;
    }

    private static Path findBinary() throws IOException {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(directory, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String name = System.getProperty("os.arch").contains("aarch64") ? EMBEDDED[1] : EMBEDDED[0];
        try (InputStream in = RedisServer.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                throw new IllegalStateException("No redis-server on PATH and no " + name + " in embedded-redis");
            }
            Path extracted = Files.createTempFile("redis-server", "");
            Files.copy(in, extracted, StandardCopyOption.REPLACE_EXISTING);
            if (!extracted.toFile().setExecutable(true)) {
                throw new IllegalStateException("Cannot make " + extracted + " executable");
            }
            extracted.toFile().deleteOnExit();
            return extracted;
        }
    }

    /** A port of this JVM's; a cluster node also listens on port + 10000, which must be free as well. */
    private static int freePort() {
        return FreePorts.next((port) -> port + 10000 <= 65535 && FreePorts.isFree(port + 10000));
    }

    /**
     * Sleeps, keeping the thread's interrupt.
     * @param millis how long
     */
    public static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

}
