package io.slidinglimiter.actuate;

import java.util.Map;
import java.util.function.Supplier;

import io.slidinglimiter.failover.FailoverStatus;
import io.slidinglimiter.redis.RedisStatus;

/**
 * What health, or the endpoint, sees of a remote backend: its name, its failover's status, a read of
 * its server.
 *
 * @param backend the backend's name in properties: {@code redis}, {@code jdbc}
 * @param status its failover's status, which only reads
 * @param read asks the server whether it answers within the backend's timeout, changing nothing; the
 * details it returns go into the health (Redis: whether it holds the script), and it throws when the
 * server does not answer
 */
public record RemoteBackendStatus(String backend, FailoverStatus status, Supplier<Map<String, Object>> read) {

    /**
     * The Redis backend's: its read asks Redis whether it holds the limiter's script.
     * @param redis the Redis backend's status
     * @return its status as health and the endpoint see it
     */
    public static RemoteBackendStatus redis(RedisStatus redis) {
        return new RemoteBackendStatus("redis", redis,
                () -> Map.of("script", redis.isScriptLoaded() ? "loaded" : "loads on next decision"));
    }

}
