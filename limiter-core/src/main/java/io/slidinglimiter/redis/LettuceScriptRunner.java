package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Runs the limiter's commands through the application's Spring Data Redis connection factory, on
 * Lettuce's asynchronous API (a connection of its own from the factory's client on a standalone or
 * Sentinel Redis, the factory's shared connection on Cluster), so that a decision waits at most
 * {@code timeout} for Redis whatever the client's own timeouts are (Spring Boot's default command
 * timeout is a minute, its connect timeout ten seconds): the connection is opened in the
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
 * longer waits ({@link #redisDeadlineMillis()}): a script that Redis runs later than that (a
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

    /** How long after a timeout a reply that did come proves the call slow rather than Redis failed. */
    static final long FAULT_GRACE_MILLIS = 1_000;

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
     * LettuceScriptRunner runner = new LettuceScriptRunner(client, Duration.ofMillis(100), Duration.ofSeconds(2));
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
        awaitConnection();
        return await(send(keys, args, node), startNanos, System.nanoTime(), node);
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
        return this.connection.get().thenCompose((opened) -> {
            RedisClusterAsyncCommands<byte[], byte[]> commands = opened.commands();
            return this.replies.replied(commands.<List<Object>>evalsha(this.script.sha1(), ScriptOutputType.MULTI, keys,
                    args), redisTime, node).exceptionallyCompose((failure) -> {
                        // After SCRIPT FLUSH or a restart: EVAL runs the script and caches it again.
                        if (failure instanceof RedisNoScriptException
                                || failure.getCause() instanceof RedisNoScriptException) {
                            return this.replies.replied(commands.<List<Object>>eval(this.script.source(),
                                    ScriptOutputType.MULTI, keys, args), redisTime, node);
                        }
                        return CompletableFuture.failedFuture(failure);
                    });
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
        CompletableFuture<List<Long>> reply = send(keys, args, node);
        CompletableFuture<List<Long>> result = new CompletableFuture<>();
        reply.whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
            }
            else {
                result.completeExceptionally(failure(RedisBackendException.cause(failure)));
            }
        });
        if (!result.isDone()) {
            checkLater(result, reply, sentNanos, sentNanos + this.timeoutNanos, node, false);
        }
        return result;
    }

    /**
     * At {@code deadlineNanos}: fails a call still unanswered, unless it is worth waiting for longer
     * ({@link #nextDeadline}).
     */
    private void checkLater(CompletableFuture<List<Long>> result, CompletableFuture<List<Long>> reply, long sentNanos,
            long deadlineNanos, String node, boolean extended) {
        CompletableFuture.delayedExecutor(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
                .execute(() -> {
                    if (result.isDone()) {
                        return;
                    }
                    long now = System.nanoTime();
                    long next = nextDeadline(node, sentNanos, sentNanos, deadlineNanos, now, extended);
                    if (next != ReplyWatch.GIVE_UP) {
                        checkLater(result, reply, sentNanos, next, node, true);
                    }
                    else {
                        result.completeExceptionally(timeout(reply, sentNanos, node));
                    }
                });
    }

    /**
     * When a call unanswered at {@code nowNanos} looks again, or {@link ReplyWatch#GIVE_UP}: at once
     * on a connection known closed (an outage, not a late reply); else by {@link ReplyWatch#nextDeadline}.
     */
    private long nextDeadline(String node, long startNanos, long sentNanos, long deadlineNanos, long nowNanos,
            boolean extended) {
        if (!this.connection.isOpen()) {
            return ReplyWatch.GIVE_UP;
        }
        return this.replies.nextDeadline(node, startNanos, sentNanos, deadlineNanos, nowNanos, extended);
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
        RedisClusterAsyncCommands<byte[], byte[]> commands = awaitConnection();
        return await(this.replies.replied(command.apply(commands), false, ""), startNanos, System.nanoTime(), "");
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
    public long redisDeadlineMillis() {
        return this.replies.redisDeadlineMillis();
    }

    /**
     * The connection's commands, waiting for it to open up to {@code maxWait}: opening it on a cold
     * JVM (loading the client's classes, starting its I/O threads) can take longer than a decision's
     * timeout, and a Redis that refuses the connection fails it at once.
     */
    private RedisClusterAsyncCommands<byte[], byte[]> awaitConnection() {
        try {
            return get(this.connection.get(), this.maxWaitNanos).commands();
        }
        catch (TimeoutException ex) {
            throw new RedisBackendException("Could not connect to Redis within "
                    + Duration.ofNanos(this.maxWaitNanos).toMillis() + " ms (limiter.redis.max-wait)", ex);
        }
    }

    /**
     * Waits for a reply: up to the timeout, and on while that is worth it ({@link ReplyWatch#nextDeadline}),
     * up to {@code maxWait} since the call started (and at least the timeout since the command was
     * sent). A reply that arrived while the waiting thread was not running is used, however late the
     * thread woke.
     */
    private <T> T await(CompletableFuture<T> reply, long startNanos, long sentNanos, String node) {
        long deadline = sentNanos + this.timeoutNanos;
        boolean extended = false;
        while (true) {
            try {
                return get(reply, Math.max(0, deadline - System.nanoTime()));
            }
            catch (TimeoutException ex) {
                long now = System.nanoTime();
                if (reply.isDone()) {
                    // The reply came while this thread was not running: Redis was in time, this JVM was not.
                    deadline = now;
                    continue;
                }
                long next = nextDeadline(node, startNanos, sentNanos, deadline, now, extended);
                if (next == ReplyWatch.GIVE_UP) {
                    throw timeout(reply, sentNanos, node);
                }
                deadline = next;
                extended = true;
            }
        }
    }

    /**
     * A future's value within a wait, its failures as this runner's exceptions; a wait that ends
     * first is left to the caller.
     */
    private static <T> T get(Future<T> future, long waitNanos) throws TimeoutException {
        try {
            return future.get(waitNanos, TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            throw failure(ex);
        }
        catch (CancellationException ex) {
            throw cancelled(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RedisBackendException("Interrupted while waiting for Redis", ex);
        }
    }

    /** A command the client cancelled: its connection was closed (to open a new one) before Redis answered. */
    private static RedisBackendException cancelled(CancellationException ex) {
        return new RedisBackendException("Redis did not answer before the connection was closed", ex);
    }

    /**
     * A timeout, and whose fault it was. Redis answered others since this command was sent: slow.
     * The connection is closed: Redis failed. Otherwise nothing came back at all, which a starved
     * client I/O thread or a paused JVM can cause as well as a stalled Redis: the reply gets
     * {@link #FAULT_GRACE_MILLIS} more to come, and only then is Redis said to have failed.
     */
    @SuppressWarnings("unchecked")
    private RedisTimeoutException timeout(Future<?> reply, long sentNanos, String node) {
        CompletableFuture<?> pending = (reply instanceof CompletableFuture<?> future) ? future
                : new CompletableFuture<>();
        CompletionStage<List<Long>> late = (CompletionStage<List<Long>>) pending;
        if (this.replies.answeredSince(node, sentNanos)) {
            return RedisTimeoutException.slow("Redis answered other commands but not this one within "
                    + Duration.ofNanos(this.maxWaitNanos).toMillis() + " ms (limiter.redis.max-wait)", late);
        }
        CompletableFuture<Boolean> failed = new CompletableFuture<>();
        if (!this.connection.isOpen()) {
            failed.complete(true);
        }
        else {
            pending.whenComplete((value, failure) -> failed.complete(failure != null && !ReplyWatch.isReply(failure)));
            failed.completeOnTimeout(true, FAULT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        }
        if (!node.isEmpty()) {
            failed.thenAccept((redisFailed) -> {
                StatefulRedisClusterConnection<byte[], byte[]> cluster = this.connection.cluster();
                if (redisFailed && cluster != null) {
                    this.clusterFollower.suspect(cluster, node, sentNanos);
                }
            });
        }
        return new RedisTimeoutException("Redis did not answer within " + Duration.ofNanos(this.timeoutNanos).toMillis()
                + " ms (limiter.redis.timeout)", late, failed);
    }

    private static RuntimeException failure(ExecutionException ex) {
        return failure(ex.getCause());
    }

    private static RuntimeException failure(Throwable cause) {
        if (cause instanceof RedisNoScriptException noScript) {
            return noScript;
        }
        if (cause instanceof CancellationException cancelled) {
            return cancelled(cancelled);
        }
        if (cause instanceof RedisBackendException backend) {
            return backend;
        }
        return new RedisBackendException("Redis failed: " + cause.getMessage(), cause);
    }

}
