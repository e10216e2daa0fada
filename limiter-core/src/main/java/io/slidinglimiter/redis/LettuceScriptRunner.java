package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Runs the script through the application's Spring Data Redis connection factory, on Lettuce's
 * asynchronous API of the factory's shared connection, so that a decision waits at most
 * {@code timeout} for Redis whatever the client's own timeouts are (Spring Boot's default command
 * timeout is a minute, its connect timeout ten seconds): the connection is opened in the
 * background, and a command that does not answer in time is cancelled. Standalone, Sentinel and
 * Cluster connections alike: Lettuce routes a script to the node of its keys' slot.
 */
public final class LettuceScriptRunner implements RedisScriptRunner {

    private final RedisConnectionFactory connectionFactory;

    private final long timeoutNanos;

    private final RedisScripts script;

    private volatile CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commands;

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
    }

    @Override
    public List<Long> run(byte[][] keys, byte[][] args) {
        long deadline = System.nanoTime() + this.timeoutNanos;
        RedisClusterAsyncCommands<byte[], byte[]> commands = await(commands(), deadline);
        try {
            return await(commands.evalsha(this.script.sha1(), ScriptOutputType.MULTI, keys, args), deadline);
        }
        catch (RedisNoScriptException ex) {
            // After SCRIPT FLUSH or a restart: EVAL runs the script and caches it again.
            return await(commands.eval(this.script.source(), ScriptOutputType.MULTI, keys, args), deadline);
        }
    }

    /**
     * Whether Redis answers within the timeout and holds the script ({@code SCRIPT EXISTS}).
     * @return whether the script is cached; it is loaded on the next decision otherwise
     * @throws RedisBackendException when Redis does not answer in time
     */
    public boolean isScriptLoaded() {
        long deadline = System.nanoTime() + this.timeoutNanos;
        RedisClusterAsyncCommands<byte[], byte[]> commands = await(commands(), deadline);
        List<Boolean> exists = await(commands.scriptExists(this.script.sha1()), deadline);
        return !exists.isEmpty() && exists.get(0);
    }

    /**
     * Starts opening the connection now, in the background, rather than on the first decision.
     * @return completes when the connection is open, or exceptionally when it could not be
     */
    public CompletableFuture<?> connect() {
        return commands();
    }

    /** The shared connection's commands, opened once in the background; opened again after a failure. */
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

    private static <T> T await(java.util.concurrent.Future<T> reply, long deadline) {
        try {
            return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RedisNoScriptException noScript) {
                throw noScript;
            }
            throw new RedisBackendException("Redis failed: " + ex.getCause().getMessage(), ex.getCause());
        }
        catch (TimeoutException ex) {
            if (reply instanceof RedisFuture<?>) {
                reply.cancel(true);
            }
            throw new RedisBackendException("Redis did not answer within the limiter's timeout", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RedisBackendException("Interrupted while waiting for Redis", ex);
        }
    }

}
