package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

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
 * {@link #reconnectToMaster(Duration)}. Nothing
 * is sent to a demoted master after that. What it had received but not read when it stalled it
 * still runs when it wakes (its kernel delivers that even after the client resets the
 * connection); those decisions carry the time after which their callers stopped waiting and
 * change nothing.
 * <p>
 * <b>Late replies.</b> A command that does not answer in time is not withdrawn, so that a reply
 * that comes after all is seen ({@link RedisTimeoutException#lateReply()}): a decision Redis then
 * applied can be given back. A decision also carries the Redis time after which its caller no
 * longer waits ({@link #redisDeadlineMillis()}): a script that Redis runs later than that (a
 * stalled server that wakes, a queue replayed after a reconnection) changes nothing.
 * <p>
 * <b>Whose fault.</b> A timeout while Redis answers other commands, or followed by this command's
 * own reply within a grace period, is a slow call, not an outage
 * ({@link RedisTimeoutException#redisFailed()}): a busy or paused application must not make a
 * healthy Redis look down. A reply that arrived while the waiting thread was not running is used,
 * however late the thread woke.
 */
public final class LettuceScriptRunner implements RedisScriptRunner, AutoCloseable {

    /** How long after a timeout a reply that did come proves the call slow rather than Redis failed. */
    static final long FAULT_GRACE_MILLIS = 1_000;

    private final RedisConnectionFactory connectionFactory;

    private final long timeoutNanos;

    private final RedisScripts script;

    private volatile CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commands;

    /**
     * {@link System#nanoTime()} of the last reply from each Redis node, an error reply included: by
     * Cluster node id, {@code ""} for a standalone or Sentinel master and for commands of no key.
     */
    private final Map<String, LastReply> lastReplies = new ConcurrentHashMap<>();

    /** Moves a silent Cluster node's decisions to its successor when the cluster has promoted one. */
    private final ClusterFollower clusterFollower;

    /** The limiter's own connection on a standalone or Sentinel Redis; null on Cluster (the shared one). */
    private volatile StatefulRedisConnection<byte[], byte[]> ownConnection;

    /** Redis's time minus this JVM's monotonic milliseconds, from the last script reply; unknown until one. */
    private volatile long redisOffsetMillis;

    private volatile boolean redisOffsetKnown;

    /**
     * Creates a runner of {@link RedisScripts#DECIDE}.
     * @param connectionFactory a Lettuce connection factory that shares its native connection
     * (Spring Boot's default)
     * @param timeout the longest a decision waits for Redis
     */
    public LettuceScriptRunner(RedisConnectionFactory connectionFactory, Duration timeout) {
        this.connectionFactory = connectionFactory;
        this.timeoutNanos = timeout.toNanos();
        this.script = RedisScripts.DECIDE;
        this.clusterFollower = new ClusterFollower(timeout, this::answeredSince);
    }

    @Override
    public List<Long> run(byte[][] keys, byte[][] args) {
        long sentNanos = System.nanoTime();
        long deadline = sentNanos + this.timeoutNanos;
        RedisClusterAsyncCommands<byte[], byte[]> commands = await(commands(), deadline, sentNanos, "");
        boolean redisTime = readsRedisTime(args);
        String node = nodeOf(keys[0]);
        try {
            return await(replied(commands.evalsha(this.script.sha1(), ScriptOutputType.MULTI, keys, args), redisTime,
                    node), deadline, sentNanos, node);
        }
        catch (RedisNoScriptException ex) {
            // After SCRIPT FLUSH or a restart: EVAL runs the script and caches it again.
            return await(replied(commands.eval(this.script.source(), ScriptOutputType.MULTI, keys, args), redisTime,
                    node), deadline, sentNanos, node);
        }
    }

    @Override
    public CompletionStage<List<Long>> runLater(byte[][] keys, byte[][] args) {
        return send(keys, args, nodeOf(keys[0]));
    }

    /** Sends the script to the node of its keys; again by {@code EVAL} after {@code NOSCRIPT}. */
    private CompletableFuture<List<Long>> send(byte[][] keys, byte[][] args, String node) {
        boolean redisTime = readsRedisTime(args);
        return commands().thenCompose((commands) -> replied(commands.<List<Long>>evalsha(this.script.sha1(),
                ScriptOutputType.MULTI, keys, args), redisTime, node).exceptionallyCompose((failure) -> {
                    if (failure instanceof RedisNoScriptException
                            || failure.getCause() instanceof RedisNoScriptException) {
                        return replied(commands.<List<Long>>eval(this.script.source(), ScriptOutputType.MULTI, keys,
                                args), redisTime, node);
                    }
                    return CompletableFuture.failedFuture(failure);
                }));
    }

    /**
     * {@inheritDoc}
     * <p>
     * On Lettuce's asynchronous API: no thread waits. A reply that does not come within the timeout
     * fails the call as {@link #run} would, with the same late-reply and whose-fault information.
     */
    @Override
    public CompletableFuture<List<Long>> runAsync(byte[][] keys, byte[][] args, Executor blocking) {
        long sentNanos = System.nanoTime();
        String node = nodeOf(keys[0]);
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
            CompletableFuture.delayedExecutor(this.timeoutNanos, TimeUnit.NANOSECONDS).execute(() -> {
                if (!result.isDone()) {
                    result.completeExceptionally(timeout(reply, sentNanos, node));
                }
            });
        }
        return result;
    }

    @Override
    public long redisDeadlineMillis() {
        if (!this.redisOffsetKnown) {
            return -1;
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() + this.timeoutNanos) + this.redisOffsetMillis;
    }

    /**
     * Runs any command on the limiter's connection, waiting at most the timeout: for the limiter's
     * own reads and writes besides decisions (run-time limits, health).
     * @param command the command, on Lettuce's asynchronous API
     * @param <T> its reply
     * @return the reply
     * @throws RedisBackendException when Redis fails or does not answer in time
     */
    public <T> T call(Function<RedisClusterAsyncCommands<byte[], byte[]>, RedisFuture<T>> command) {
        long sentNanos = System.nanoTime();
        long deadline = sentNanos + this.timeoutNanos;
        RedisClusterAsyncCommands<byte[], byte[]> commands = await(commands(), deadline, sentNanos, "");
        return await(replied(command.apply(commands), false, ""), deadline, sentNanos, "");
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
        return commands().thenCompose((commands) -> commands.scriptLoad(this.script.source()));
    }

    /**
     * Opens a new connection at once when the current one is closed. Lettuce reconnects a lost
     * connection by itself, but with a delay that doubles up to 30 s; after a long outage that is
     * how long decisions would stay away from a Redis that is back. A probe calls this.
     */
    public void reconnectIfClosed() {
        RedisClusterAsyncCommands<byte[], byte[]> opened = opened();
        if (opened != null && !opened.isOpen()) {
            reconnect();
        }
    }

    /**
     * Makes the connection anew, whatever its state: when the server behind it is no longer the one
     * to talk to (Sentinel promoted another master). The next command opens a new connection.
     */
    public void reconnect() {
        CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> current = this.commands;
        StatefulRedisConnection<byte[], byte[]> own = this.ownConnection;
        if (own != null) {
            own.closeAsync();
        }
        else if (this.connectionFactory instanceof LettuceConnectionFactory lettuce) {
            lettuce.resetConnection();
        }
        synchronized (this) {
            if (this.commands == current) {
                this.commands = null;
            }
        }
    }

    /**
     * Makes the connection anew until it reaches a server that says it is a master ({@code ROLE}),
     * trying again every 100 ms, each check bounded by the timeout. Right after a promotion a
     * sentinel that has not yet heard of it may still name the old master (one that stalled would
     * hold the new connection, and run what it queued, when it wakes); the sentinels are asked again
     * until they name the new one. Blocks the calling thread as long.
     * @param within how long to keep trying
     * @return whether a master was reached
     */
    public boolean reconnectToMaster(Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            reconnect();
            try {
                List<Object> role = call((commands) -> commands.role());
                Object first = role.isEmpty() ? null : role.get(0);
                String name = (first instanceof byte[] bytes) ? new String(bytes, StandardCharsets.US_ASCII)
                        : String.valueOf(first);
                if (name.equals("master")) {
                    return true;
                }
            }
            catch (RuntimeException ex) {
                // Not reached, or not answering: ask the sentinels again.
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** Closes the limiter's own connection, if it has one; the factory closes the shared one. */
    @Override
    public void close() {
        StatefulRedisConnection<byte[], byte[]> own = this.ownConnection;
        if (own != null) {
            own.close();
        }
    }

    /** The connection's commands, opened once in the background; opened again after a failure. */
    private CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commands() {
        CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> current = this.commands;
        if (current != null && !current.isCompletedExceptionally()) {
            return current;
        }
        synchronized (this) {
            if (this.commands == current) {
                this.commands = CompletableFuture.supplyAsync(this::openConnection);
            }
            return this.commands;
        }
    }

    @SuppressWarnings({ "unchecked", "resource" })
    private RedisClusterAsyncCommands<byte[], byte[]> openConnection() {
        if (this.connectionFactory instanceof LettuceConnectionFactory lettuce
                && lettuce.getNativeClient() instanceof RedisClient client) {
            // Standalone or Sentinel: a connection of the limiter's own, from the factory's client and
            // its settings. With connection pooling on (commons-pool2 present), resetting the factory's
            // shared connection only returns it to the pool, and the next would be the same one, still
            // to a master that Sentinel has replaced.
            StatefulRedisConnection<byte[], byte[]> own = client.connect(ByteArrayCodec.INSTANCE);
            this.ownConnection = own;
            return own.async();
        }
        // With a shared native connection, closing this handle leaves the connection open.
        RedisConnection connection = this.connectionFactory.getConnection();
        Object nativeConnection = connection.getNativeConnection();
        if (nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands) {
            return (RedisClusterAsyncCommands<byte[], byte[]>) commands;
        }
        connection.close();
        throw new IllegalStateException("The Redis backend needs Lettuce, but the connection is "
                + nativeConnection.getClass().getName());
    }

    /**
     * Whether the script reads Redis's clock ({@code ARGV[2]} empty), so that its reply's time is
     * Redis's own; tests that replay a schedule send a time of theirs.
     */
    private static boolean readsRedisTime(byte[][] args) {
        return args.length > 1 && args[1].length == 0;
    }

    /**
     * The Redis node that serves a key: on Cluster its node id, as the client's view of the slots
     * has it now (it changes when a replica is promoted); otherwise {@code ""}.
     * @param key a key of the script
     * @return the node's id, or {@code ""}
     */
    @Override
    public String nodeOf(byte[] key) {
        if (!(opened() instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster)) {
            return "";
        }
        RedisClusterNode node = cluster.getStatefulConnection().getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        return (node != null && node.getNodeId() != null) ? node.getNodeId() : "";
    }

    @Override
    public Set<String> nodes() {
        if (!(opened() instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster)) {
            return Set.of("");
        }
        Set<String> serving = new HashSet<>();
        for (RedisClusterNode node : cluster.getStatefulConnection().getPartitions()) {
            if (!node.getSlots().isEmpty() && node.getNodeId() != null) {
                serving.add(node.getNodeId());
            }
        }
        return serving;
    }

    /**
     * The command's future, noting when its node replied (an error reply is a reply) and, from a
     * script that read Redis's clock, that clock.
     */
    private <T> CompletableFuture<T> replied(RedisFuture<T> command, boolean redisTime, String node) {
        CompletableFuture<T> future = command.toCompletableFuture();
        LastReply lastReply = this.lastReplies.computeIfAbsent(node, (ignored) -> new LastReply());
        future.whenComplete((reply, failure) -> {
            if (failure == null || isReply(failure)) {
                long now = System.nanoTime();
                lastReply.nanos = now;
                if (redisTime && reply instanceof List<?> values && values.size() > 1
                        && values.get(1) instanceof Long redisMillis) {
                    this.redisOffsetMillis = redisMillis - TimeUnit.NANOSECONDS.toMillis(now);
                    this.redisOffsetKnown = true;
                }
            }
        });
        return future;
    }

    private <T> T await(Future<T> reply, long deadline, long sentNanos, String node) {
        try {
            return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            throw failure(ex);
        }
        catch (CancellationException ex) {
            throw cancelled(ex);
        }
        catch (TimeoutException ex) {
            if (reply.isDone()) {
                // The reply came while this thread was not running: Redis was in time, this JVM was not.
                return doneReply(reply);
            }
            throw timeout(reply, sentNanos, node);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RedisBackendException("Interrupted while waiting for Redis", ex);
        }
    }

    private static <T> T doneReply(Future<T> reply) {
        try {
            return reply.get();
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
        if (answeredSince(node, sentNanos)) {
            return RedisTimeoutException.slow("Redis answered other commands but not this one within the"
                    + " limiter's timeout", late);
        }
        CompletableFuture<Boolean> failed = new CompletableFuture<>();
        if (!isOpen()) {
            failed.complete(true);
        }
        else {
            pending.whenComplete((value, failure) -> failed.complete(failure != null && !isReply(failure)));
            failed.completeOnTimeout(true, FAULT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        }
        if (!node.isEmpty()) {
            failed.thenAccept((redisFailed) -> {
                if (redisFailed && opened() instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
                    this.clusterFollower.suspect(cluster.getStatefulConnection(), node, sentNanos);
                }
            });
        }
        return new RedisTimeoutException("Redis did not answer within the limiter's timeout", late, failed);
    }

    /** Whether a node has replied to anything since a moment ({@link System#nanoTime()}). */
    private boolean answeredSince(String node, long sinceNanos) {
        LastReply lastReply = this.lastReplies.get(node);
        return lastReply != null && lastReply.nanos - sinceNanos > 0;
    }

    /** Whether the connection is open, as far as this runner knows it. */
    private boolean isOpen() {
        RedisClusterAsyncCommands<byte[], byte[]> opened = opened();
        return opened != null && opened.isOpen();
    }

    /** The connection's commands if it was opened, without waiting for it; else null. */
    private RedisClusterAsyncCommands<byte[], byte[]> opened() {
        CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> current = this.commands;
        return (current != null && current.isDone() && !current.isCompletedExceptionally()) ? current.join() : null;
    }

    /** When a node last replied. */
    private static final class LastReply {

        volatile long nanos = System.nanoTime() - Long.MAX_VALUE / 2;

    }

    /** Whether a failure is Redis's answer (an error reply), not a lost connection. */
    private static boolean isReply(Throwable failure) {
        return failure instanceof RedisCommandExecutionException
                || failure.getCause() instanceof RedisCommandExecutionException;
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
