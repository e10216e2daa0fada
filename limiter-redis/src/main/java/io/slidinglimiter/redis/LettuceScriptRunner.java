package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Runs the limiter's commands through the application's Spring Data Redis connection factory, on
 * Lettuce's asynchronous API (a connection of its own from the factory's client on a standalone or
 * Sentinel Redis, the factory's shared connection on Cluster), so that a decision waits at most
 * {@code timeout} for Redis whatever the client's own timeouts are (Spring Boot's default command
 * timeout is a minute, its connect timeout ten seconds).
 * <p>
 * The connection is opened in the
 * background, and every wait is bounded. Standalone, Sentinel and Cluster connections alike:
 * Lettuce routes a script to the node of its keys' slot.
 * <p>
 * <b>Failover.</b> When a Cluster node stops answering, the other nodes are asked whether the
 * cluster gave its slots to a replica, and decisions move there as soon as one says so
 * ({@link ClusterFollower}), rather than when the client's own topology refresh, which waits for
 * every node, completes. Under Sentinel, {@link SentinelFollower} calls
 * {@link #reconnect()} until a master answers. Nothing
 * is sent to a demoted master after that. What it had received but not read when it stalled it
 * still runs when it wakes (its kernel delivers that even after the client resets the
 * connection); those decisions carry the time after which their callers stopped waiting and
 * change nothing.
 * <p>
 * <b>Batches.</b> A decision whose connection (on Cluster, whose hash slot) has fewer than two calls
 * in flight goes at once, alone. Decisions that come while two are in flight wait for a reply and
 * then go together, as one script call that decides each as if it had come alone ({@link ScriptBatches}):
 * under load one round trip and one script call decide many keys, and an idle application waits
 * for nothing. {@link #setBatching(boolean)} turns it off.
 * <p>
 * <b>Late replies.</b> A command that does not answer in time is not withdrawn, so that a reply
 * that comes after all is seen ({@link RedisTimeoutException#lateReply()}): a decision Redis then
 * applied can be given back. A decision also carries the Redis time after which its caller no
 * longer waits ({@link #redisDeadlineMillis}): a script that Redis runs later than that (a
 * stalled server that wakes, a queue replayed after a reconnection) changes nothing.
 * <p>
 * <b>A slow JVM is not a down Redis.</b> A call whose reply is late while Redis keeps answering
 * (replies to other commands arrive on the connection) keeps waiting for its own reply, up to
 * {@code maxWait}: an application overloaded by its own traffic decides in Redis, not by the
 * failure policy. Otherwise a call waits the timeout plus the lateness of this JVM's own threads
 * (the thread that watches it woke that late, and the client's I/O thread may have been kept as
 * long from reading the reply): how busy the host is with other processes keeps nobody waiting.
 * A Redis that answers nothing for that long is failing, and the call ends then; a connection known
 * closed is an outage at the deadline, with no more waiting. A call that timed out all the same,
 * while Redis answered others or with its own reply within a grace period, is a slow call, not an
 * outage ({@link RedisTimeoutException#redisFailed()}).
 * <p>
 * Needs no Spring: {@link #LettuceScriptRunner(AbstractRedisClient, Duration, Duration)} takes a
 * plain Lettuce client.
 */
public final class LettuceScriptRunner implements RedisScriptRunner, AutoCloseable {

    /** The longest a call waits for a Redis that is answering, unless told otherwise. */
    public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(2);

    private final long timeoutNanos;

    private final long maxWaitNanos;

    private final RedisScripts script;

    private final LettuceConnection connection;

    /** When each node last answered, Redis's clock, and whether a late call is worth waiting for. */
    private final ReplyWatch replies;

    /** Moves a silent Cluster node's decisions to its successor when the cluster has promoted one. */
    private final ClusterFollower clusterFollower;

    /** Sends the decisions that wait for a call in flight together. */
    private final ScriptBatches batches;

    /** How long callers wait for replies, and whose fault a missing one is. */
    private final ReplyWaits waits;

    /**
     * Creates a runner on an application's Spring Data Redis connection factory, waiting at most
     * {@link #DEFAULT_MAX_WAIT} (or the timeout, if longer) for a Redis that is answering.
     * @param connectionFactory a Lettuce connection factory that shares its native connection
     * (Spring Boot's default)
     * @param timeout the longest a decision waits for a Redis that answers nothing
     */
    public LettuceScriptRunner(RedisConnectionFactory connectionFactory, Duration timeout) {
        this(connectionFactory, timeout, (DEFAULT_MAX_WAIT.compareTo(timeout) >= 0) ? DEFAULT_MAX_WAIT : timeout);
    }

    /**
     * Creates a runner on an application's Spring Data Redis connection factory.
     * @param connectionFactory a Lettuce connection factory that shares its native connection
     * (Spring Boot's default)
     * @param timeout the longest a decision waits for a Redis that answers nothing
     * @param maxWait the longest a decision waits for its reply while Redis answers others or this
     * JVM is too busy to read the reply: at least {@code timeout}
     */
    public LettuceScriptRunner(RedisConnectionFactory connectionFactory, Duration timeout, Duration maxWait) {
        this(new SpringDataRedisConnector(connectionFactory), timeout, maxWait);
    }

    /**
     * Creates a runner on a plain Lettuce client, for an application without Spring: a connection of
     * its own, closed by {@link #close()}; the client stays the caller's to shut down.
     * <pre>{@code
     * RedisClient client = RedisClient.create("redis://localhost:6379");
     * LettuceScriptRunner runner = new LettuceScriptRunner(client, Duration.ofMillis(100),
     * Duration.ofSeconds(2));
     * }</pre>
     * @param client a {@code RedisClient} (standalone or Sentinel) or a {@code RedisClusterClient}
     * @param timeout the longest a decision waits for a Redis that answers nothing
     * @param maxWait the longest a decision waits for its reply while Redis answers others or this
     * JVM is too busy to read the reply: at least {@code timeout}
     */
    public LettuceScriptRunner(AbstractRedisClient client, Duration timeout, Duration maxWait) {
        this(new LettuceClientConnector(client), timeout, maxWait);
    }

    private LettuceScriptRunner(RedisConnector connector, Duration timeout, Duration maxWait) {
        if (maxWait.compareTo(timeout) < 0) {
            throw new IllegalArgumentException("The longest wait for a Redis that answers (" + maxWait.toMillis()
                    + " ms) is shorter than the timeout (" + timeout.toMillis() + " ms)");
        }
        this.timeoutNanos = timeout.toNanos();
        this.maxWaitNanos = maxWait.toNanos();
        this.script = RedisScripts.DECIDE;
        this.connection = new LettuceConnection(connector);
        this.replies = new ReplyWatch(this.timeoutNanos, this.maxWaitNanos);
        this.clusterFollower = new ClusterFollower(timeout, this.replies::answeredSince);
        this.batches = new ScriptBatches(this::evaluate, this.replies, this.timeoutNanos);
        this.waits = new ReplyWaits(this.timeoutNanos, this.maxWaitNanos, this.replies, this.connection,
                this.clusterFollower);
    }

    /** @return the longest a decision waits for a Redis that answers nothing */
    public Duration timeout() {
        return Duration.ofNanos(this.timeoutNanos);
    }

    /** @return the longest a decision waits for its reply while Redis answers */
    public Duration maxWait() {
        return Duration.ofNanos(this.maxWaitNanos);
    }

    /**
     * Whether decisions that wait for a call in flight on the same connection (on Cluster, for keys
     * of the same hash slot) go to Redis together, as one script call that decides each as if it
     * had come alone. On by default.
     * @param batching false to send every decision by a script call of its own
     */
    public void setBatching(boolean batching) {
        this.batches.setEnabled(batching);
    }

    /** @return whether decisions that wait for a call in flight go to Redis together */
    public boolean isBatching() {
        return this.batches.isEnabled();
    }

    /** @return the batches sent so far: script calls of more than one decision ({@code limiter.redis.batches}) */
    public long batchesSent() {
        return this.batches.batchesSent();
    }

    /** @return the decisions the batches sent so far decided ({@code limiter.redis.batched.decisions}) */
    public long batchedDecisions() {
        return this.batches.batchedDecisions();
    }

    /** @return what batches were sent, for tests that count decisions in Redis */
    ScriptBatches batches() {
        return this.batches;
    }

    @Override
    public List<Long> run(byte[][] keys, byte[][] args) {
        return run(nodeOf(keys[0]), keys, args);
    }

    @Override
    public List<Long> run(String node, byte[][] keys, byte[][] args) {
        long startNanos = System.nanoTime();
        this.waits.awaitConnection();
        return this.waits.await(send(keys, args, node), startNanos, System.nanoTime(), node);
    }

    @Override
    public CompletionStage<List<Long>> runLater(byte[][] keys, byte[][] args) {
        return send(keys, args, nodeOf(keys[0]));
    }

    /** Sends a decision to the node of its keys, with others that wait for the same call in flight. */
    private CompletableFuture<List<Long>> send(byte[][] keys, byte[][] args, String node) {
        return this.batches.send(this.connection.opened(), keys, args, node);
    }

    /** Sends the script to the node of its keys; again by {@code EVAL} after {@code NOSCRIPT}. */
    private CompletableFuture<List<Object>> evaluate(byte[][] keys, byte[][] args, String node, boolean redisTime) {
        LettuceConnection.Opened opened = this.connection.opened();
        if (opened == null) {
            return this.connection.get().thenCompose((now) -> evaluate(now.commands(), keys, args, node, redisTime));
        }
        // Opened, the common case: sent at once, without a stage to wait for the connection.
        return evaluate(opened.commands(), keys, args, node, redisTime);
    }

    private CompletableFuture<List<Object>> evaluate(RedisClusterAsyncCommands<byte[], byte[]> commands, byte[][] keys,
            byte[][] args, String node, boolean redisTime) {
        return this.replies.replied(commands.<List<Object>>evalsha(this.script.sha1(), ScriptOutputType.MULTI, keys,
                args), redisTime, node).exceptionallyCompose((failure) -> {
                    // After SCRIPT FLUSH or a restart: EVAL runs the script and caches it again.
                    if (failure instanceof RedisNoScriptException || failure.getCause() instanceof RedisNoScriptException) {
                        return this.replies.replied(commands.<List<Object>>eval(this.script.source(),
                                ScriptOutputType.MULTI, keys, args), redisTime, node);
                    }
                    return CompletableFuture.failedFuture(failure);
                });
    }

    /**
     * {@inheritDoc}
     * <p>
     * On Lettuce's asynchronous API: no thread waits. A reply that does not come in time fails the
     * call as {@link #run} would, by the same rules of patience, with the same late-reply and
     * whose-fault information.
     */
    @Override
    public CompletableFuture<List<Long>> runAsync(byte[][] keys, byte[][] args, Executor blocking) {
        return runAsync(nodeOf(keys[0]), keys, args, blocking);
    }

    @Override
    public CompletableFuture<List<Long>> runAsync(String node, byte[][] keys, byte[][] args, Executor blocking) {
        long sentNanos = System.nanoTime();
        return this.waits.watch(send(keys, args, node), sentNanos, node);
    }


    /**
     * Runs any command on the limiter's connection, waiting as a decision does: for the limiter's
     * own reads and writes besides decisions (run-time limits, health).
     * @param command the command, on Lettuce's asynchronous API
     * @param <T> its reply
     * @return the reply
     * @throws RedisBackendException when Redis fails or does not answer in time
     */
    public <T> T call(Function<RedisClusterAsyncCommands<byte[], byte[]>, RedisFuture<T>> command) {
        long startNanos = System.nanoTime();
        RedisClusterAsyncCommands<byte[], byte[]> commands = this.waits.awaitConnection();
        return this.waits.await(this.replies.replied(command.apply(commands), false, ""), startNanos, System.nanoTime(),
                "");
    }

    /**
     * {@inheritDoc}
     * <p>
     * A page of up to 1 000 keys at a time ({@code SCAN}, on a Cluster across every master), each
     * page removed with {@code UNLINK}; every command within the timeout.
     */
    @Override
    public long deleteMatching(byte[] pattern) {
        long deleted = 0;
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            ScanCursor from = cursor;
            KeyScanCursor<byte[]> page = call((commands) -> commands.scan(from,
                    ScanArgs.Builder.matches(pattern).limit(1_000)));
            if (!page.getKeys().isEmpty()) {
                byte[][] keys = page.getKeys().toArray(byte[][]::new);
                deleted += call((commands) -> commands.unlink(keys));
            }
            cursor = page;
        }
        while (!cursor.isFinished());
        return deleted;
    }

    /**
     * Whether Redis answers within the timeout and holds the script ({@code SCRIPT EXISTS}).
     * @return whether the script is cached; it is loaded on the next decision otherwise
     * @throws RedisBackendException when Redis does not answer in time
     */
    @Override
    public boolean isScriptLoaded() {
        List<Boolean> exists = call((commands) -> commands.scriptExists(this.script.sha1()));
        return !exists.isEmpty() && exists.get(0);
    }

    /**
     * Opens the connection and loads the script now, in the background, rather than on the first
     * decision; reopens a connection that the client gave up on (see {@link #reconnectIfClosed()}).
     * @return completes when the connection is open and the script loaded, or exceptionally
     */
    public CompletableFuture<?> connect() {
        reconnectIfClosed();
        return this.connection.get().thenCompose((opened) -> opened.commands().scriptLoad(this.script.source()));
    }

    /**
     * Opens a new connection at once when the current one is closed. Lettuce reconnects a lost
     * connection by itself, but with a delay that doubles up to 30 s; after a long outage that is
     * how long decisions would stay away from a Redis that is back. A probe calls this.
     */
    public void reconnectIfClosed() {
        this.connection.reconnectIfClosed();
    }

    /**
     * Whether the limiter's connection is open now: false before it first opened, and while the
     * client reconnects to a Redis that went away.
     * @return whether Redis can be reached now
     */
    public boolean isConnected() {
        return this.connection.isOpen();
    }

    /**
     * Makes the connection anew, whatever its state: when the server behind it is no longer the one
     * to talk to (Sentinel promoted another master). The next command opens a new connection.
     */
    public void reconnect() {
        this.connection.reconnect();
    }

    /** Closes the limiter's own connection, if it has one; the factory closes the shared one. */
    @Override
    public void close() {
        this.connection.close();
    }

    /**
     * The Redis node that serves a key: on Cluster its node id, as the client's view of the slots
     * has it now (it changes when a replica is promoted); otherwise {@code ""}.
     * @param key a key of the script
     * @return the node's id, or {@code ""}
     */
    @Override
    public String nodeOf(byte[] key) {
        return this.connection.nodeOf(key);
    }

    @Override
    public Set<String> nodes() {
        return this.connection.nodes();
    }

    @Override
    public long redisDeadlineMillis(String node) {
        return this.replies.redisDeadlineMillis(node);
    }

}
