package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Runs the script through the application's Spring Data Redis connection factory, on Lettuce's
 * asynchronous API so that a decision waits at most {@code timeout} for Redis, whatever the
 * client's own command timeout (a minute by default). Standalone, Sentinel and Cluster
 * connections alike: Lettuce routes a script to the node of its keys' slot.
 */
public final class LettuceScriptRunner implements RedisScriptRunner {

    private final RedisConnectionFactory connectionFactory;

    private final long timeoutNanos;

    private final RedisScripts script;

    /**
     * Creates a runner of {@link RedisScripts#DECIDE}.
     * @param connectionFactory a Lettuce connection factory
     * @param timeout the longest a decision waits for Redis
     */
    public LettuceScriptRunner(RedisConnectionFactory connectionFactory, Duration timeout) {
        this(connectionFactory, timeout, RedisScripts.DECIDE);
    }

    LettuceScriptRunner(RedisConnectionFactory connectionFactory, Duration timeout, RedisScripts script) {
        this.connectionFactory = connectionFactory;
        this.timeoutNanos = timeout.toNanos();
        this.script = script;
    }

    @Override
    public List<Long> run(byte[][] keys, byte[][] args) {
        long deadline = System.nanoTime() + this.timeoutNanos;
        try (RedisConnection connection = this.connectionFactory.getConnection()) {
            RedisClusterAsyncCommands<byte[], byte[]> commands = commands(connection);
            try {
                return await(commands.evalsha(this.script.sha1(), ScriptOutputType.MULTI, keys, args), deadline);
            }
            catch (RedisNoScriptException ex) {
                // After SCRIPT FLUSH or a restart: EVAL runs the script and caches it again.
                return await(commands.eval(this.script.source(), ScriptOutputType.MULTI, keys, args), deadline);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static RedisClusterAsyncCommands<byte[], byte[]> commands(RedisConnection connection) {
        Object nativeConnection = connection.getNativeConnection();
        if (nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands) {
            return (RedisClusterAsyncCommands<byte[], byte[]>) commands;
        }
        throw new IllegalStateException("The Redis backend needs a Lettuce connection factory, but the connection is "
                + nativeConnection.getClass().getName());
    }

    private static List<Long> await(RedisFuture<List<Long>> reply, long deadline) {
        try {
            return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RedisNoScriptException noScript) {
                throw noScript;
            }
            if (ex.getCause() instanceof RedisCommandExecutionException failed) {
                throw failed;
            }
            throw new RedisBackendException("Redis failed the limiter's script: " + ex.getCause(), ex.getCause());
        }
        catch (TimeoutException ex) {
            reply.cancel(false);
            throw new RedisBackendException("Redis did not answer within the limiter's timeout", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RedisBackendException("Interrupted while waiting for Redis", ex);
        }
    }

}
