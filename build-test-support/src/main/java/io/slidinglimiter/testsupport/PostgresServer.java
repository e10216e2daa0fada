package io.slidinglimiter.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server for tests, on a free port of its own, from the binaries on the machine
 * (Debian's {@code postgresql} package: {@code initdb}, {@code pg_ctl}).
 * <p>
 * Its data lives in a temporary directory, deleted by {@link #close()}; never the system's cluster.
 * As root (CI), the server runs as the package's {@code postgres} user, since PostgreSQL refuses to
 * run as root. Tests can stop it at once, as a crash would, and start it again with its data.
 * {@code PG_BIN} names another folder of binaries.
 */
public final class PostgresServer implements AutoCloseable {

    /** The database user the server is made with; it needs no password from 127.0.0.1. */
    public static final String USER = "limiter";

    private final Path directory;

    private final int port;

    /**
     * Stops the server and deletes its files should the JVM end before {@link #close()}: a benchmark
     * stopped by a signal.
     */
    private final Thread onExit = new Thread(this::stopAndDelete, "postgres-server-exit");

    /** Settings of the server's command line after the tests' own, each {@code name=value}. */
    private final List<String> settings;

    private PostgresServer(Path directory, int port, List<String> settings) {
        this.directory = directory;
        this.port = port;
        this.settings = settings;
    }

    /**
     * Makes a database cluster in a temporary directory and starts it on a free port.
     * @return the running server
     * @throws IllegalStateException when the machine has no PostgreSQL binaries, saying how to get them
     */
    public static PostgresServer start() {
        return start(List.of());
    }

    /**
     * Makes a database cluster in a temporary directory and starts it on a free port, with settings of
     * its own over the tests' (a benchmark's {@code shared_buffers}).
     * @param settings each {@code name=value}, as {@code postgres -c} takes it
     * @return the running server
     * @throws IllegalStateException when the machine has no PostgreSQL binaries, saying how to get them
     */
    public static PostgresServer start(List<String> settings) {
        try {
            Path directory = serverDirectory("limiter-postgres-");
            PostgresServer server = new PostgresServer(directory, freePort(), List.copyOf(settings));
            server.giveToServerUser(directory);
            // A copy of one cluster made per JVM: a copy takes a fifth of initdb's time, and every test's server
            // starts from the same empty cluster.
            server.run(List.of("cp", "-a", template(), server.data()));
            Runtime.getRuntime().addShutdownHook(server.onExit);
            server.startAgain();
            return server;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The empty cluster each server's data starts as a copy of; made by initdb on first use, deleted at exit. */
    private static Path template;

    private static synchronized String template() throws IOException {
        if (template == null) {
            Path directory = serverDirectory("limiter-postgres-template-");
            PostgresServer maker = new PostgresServer(directory, 0, List.of());
            maker.giveToServerUser(directory);
            maker.run(List.of(binary("initdb"), "-D", maker.data(), "-A", "trust", "-U", USER, "-E", "UTF8",
                    "--locale=C", "--no-sync"));
            Runtime.getRuntime().addShutdownHook(new Thread(() -> TemporaryFiles.deleteQuietly(directory.toFile()),
                    "postgres-template-exit"));
            template = directory.resolve("data");
        }
        return template.toString();
    }

    /**
     * A new temporary directory the server's user can reach: as root, in /tmp, since a build's temporary
     * directory may sit below one only root may enter (CI's mktemp -d).
     */
    private static Path serverDirectory(String prefix) throws IOException {
        return isRoot() ? Files.createTempDirectory(Path.of("/tmp"), prefix) : Files.createTempDirectory(prefix);
    }

    /** @return the port it listens on, on 127.0.0.1 */
    public int port() {
        return this.port;
    }

    /** @return the JDBC URL of its {@code postgres} database, as {@link #USER} */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + this.port + "/postgres?user=" + USER;
    }

    /**
     * Runs SQL on a connection of its own.
     * @param sql one or more statements
     */
    public void execute(String sql) {
        try (Connection connection = DriverManager.getConnection(jdbcUrl()); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("PostgreSQL on port " + this.port + " refused: " + sql, ex);
        }
    }

    /**
     * Stops the server at once ({@code pg_ctl stop -m immediate}), as a crash would: every
     * connection breaks, nothing is flushed politely. {@link #startAgain()} brings it back with its data.
     */
    public void stopImmediately() {
        run(List.of(binary("pg_ctl"), "-D", data(), "stop", "-m", "immediate", "-w"));
    }

    /**
     * Stops every process of the server where it stands (SIGSTOP), as a host that stalls would: its
     * sockets stay open, nothing answers. {@link #resume()} lets them run on.
     */
    public void pause() {
        signal("-STOP");
    }

    /** Lets a paused server run on (SIGCONT). */
    public void resume() {
        signal("-CONT");
    }

    /**
     * Signals the postmaster, found by its pid file, then its children: the postmaster first, so that
     * a stopped one forks no backend the signal would miss.
     */
    private void signal(String signal) {
        try {
            String postmaster = Files.readAllLines(this.directory.resolve("data/postmaster.pid")).get(0).trim();
            runAsIs(List.of("kill", signal, postmaster));
            Process children = new ProcessBuilder("pgrep", "-P", postmaster).start();
            List<String> pids = new String(children.getInputStream().readAllBytes()).lines().map(String::trim)
                    .filter((line) -> !line.isEmpty()).toList();
            children.waitFor(10, TimeUnit.SECONDS);
            if (!pids.isEmpty()) {
                List<String> command = new ArrayList<>(List.of("kill", signal));
                command.addAll(pids);
                try {
                    runAsIs(command);
                }
                catch (IllegalStateException ex) {
                    // A child that ended between the listing and the signal (a cancel request's, a backend whose
                    // client left) needs no signal; the others got theirs.
                    boolean allAlive = pids.stream().allMatch((pid) -> ProcessHandle.of(Long.parseLong(pid))
                            .map(ProcessHandle::isAlive).orElse(false));
                    if (allAlive) {
                        throw ex;
                    }
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Starts the server (again) on its port, with the data it had. */
    public void startAgain() {
        // fsync off: what a test's stop loses is what a crash of the process loses (the kernel keeps it),
        // never a commit; synchronous_commit stays on, or a commit just before stopImmediately() is lost.
        String options = "-p " + this.port + " -k " + this.directory + " -c listen_addresses=127.0.0.1"
                + " -c fsync=off -c full_page_writes=off -c max_connections=200"
                + " -c shared_buffers=64MB";
        for (String setting : this.settings) {
            options += " -c " + setting;
        }
        run(List.of(binary("pg_ctl"), "-D", data(), "-o", options, "-l", this.directory.resolve("server.log").toString(),
                "-w", "-t", "60", "start"));
    }

    /**
     * What the server logged so far, for a failure message.
     * @return the log, or why it could not be read
     */
    public String log() {
        try {
            return Files.readString(this.directory.resolve("server.log"));
        }
        catch (IOException ex) {
            return "(no log: " + ex.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(this.onExit);
        }
        catch (IllegalStateException ex) {
            // The JVM is ending: the hook stops the server.
        }
        stopAndDelete();
    }

    private void stopAndDelete() {
        try {
            stopImmediately();
        }
        catch (IllegalStateException ex) {
            // Already stopped.
        }
        TemporaryFiles.deleteQuietly(this.directory.toFile());
    }

    private String data() {
        return this.directory.resolve("data").toString();
    }

    /** As root, hands the directory to the {@code postgres} user that the server runs as. */
    private void giveToServerUser(Path directory) {
        if (isRoot()) {
            runAsIs(List.of("chown", "postgres", directory.toString()));
        }
    }

    private void run(List<String> command) {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        runAsIs(full);
    }

    private void runAsIs(List<String> command) {
        try {
            Path output = Files.createTempFile("limiter-postgres-command", ".log");
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            if (!process.waitFor(90, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("Timed out: " + String.join(" ", command));
            }
            String printed = Files.readString(output);
            Files.deleteIfExists(output);
            if (process.exitValue() != 0) {
                throw new IllegalStateException("Failed (" + process.exitValue() + "): " + String.join(" ", command)
                        + "\n" + printed + "\n" + log());
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** A binary of the newest PostgreSQL on the machine, or of {@code PG_BIN}. */
    private static String binary(String name) {
        String configured = System.getenv("PG_BIN");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured, name).toString();
        }
        File[] versions = new File("/usr/lib/postgresql").listFiles();
        if (versions != null) {
            Path newest = Stream.of(versions).map(File::toPath).filter((dir) -> Files.isExecutable(dir.resolve("bin/" + name)))
                    .max(Comparator.comparingInt(PostgresServer::versionOf)).orElse(null);
            if (newest != null) {
                return newest.resolve("bin").resolve(name).toString();
            }
        }
        throw new IllegalStateException("No PostgreSQL " + name + " under /usr/lib/postgresql/*/bin: install Debian's"
                + " postgresql package (apt-get install postgresql), or set PG_BIN to the folder of initdb and pg_ctl."
                + " Seen there: " + Arrays.toString(versions));
    }

    private static int versionOf(Path directory) {
        try {
            return Integer.parseInt(directory.getFileName().toString());
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }

    private static int freePort() {
        return FreePorts.next((port) -> true);
    }

}
