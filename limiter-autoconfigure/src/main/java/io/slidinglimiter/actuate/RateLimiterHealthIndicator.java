package io.slidinglimiter.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.slidinglimiter.failover.FailoverStatus;
import io.slidinglimiter.redis.RedisStatus;

/**
 * The {@code ratelimiter} health: DOWN while recent decisions fail in a remote backend (unreachable,
 * timing out, out of memory, read-only, failing the script or the statement), UP once they succeed again.
 * <p>
 * A check only reads: when no decision failed, it asks the server a question that changes nothing
 * (Redis: whether it holds the script, {@code SCRIPT EXISTS}; the database: {@code SELECT 1}), within
 * the backend's timeout. The details give each of the backend's limits its own failure policy, so that
 * what DOWN costs is plain: fail-open admits, fail-closed rejects, local counts per instance. On
 * Cluster, {@code failingShards} names the nodes whose breaker keeps calls away. With one remote
 * backend its details are the health's own; with several, each backend's are under its name, and the
 * health is DOWN when one is.
 */
public class RateLimiterHealthIndicator extends AbstractHealthIndicator {

    private final List<RemoteBackendStatus> remotes;

    /** A backend's limits, each with its failure policy, by limit name: read at each check. */
    private final Function<RemoteBackendStatus, Map<String, String>> limitsOf;

    /**
     * Creates the indicator for the Redis backend alone.
     * @param redis the Redis backend's status: the outcome of recent decisions, and a read of Redis
     * @param policies each configured Redis limit's failure policy, by name
     */
    public RateLimiterHealthIndicator(RedisStatus redis, Map<String, String> policies) {
        this(List.of(RemoteBackendStatus.redis(redis)), Map.of("redis", policies));
    }

    /**
     * Creates the indicator.
     * @param remotes the remote backends
     * @param policies by backend name, each of its configured limits' failure policy, by limit name
     */
    public RateLimiterHealthIndicator(List<RemoteBackendStatus> remotes, Map<String, Map<String, String>> policies) {
        this(remotes, fixed(Map.copyOf(policies)));
    }

    /**
     * Creates the indicator that lists, at each check, every limit a backend decides: those of the
     * configuration and those an annotation or the API defined since.
     * @param remotes the remote backends
     * @param limitsOf a backend's limits now, each with its failure policy, by limit name
     */
    public RateLimiterHealthIndicator(List<RemoteBackendStatus> remotes,
            Function<RemoteBackendStatus, Map<String, String>> limitsOf) {
        super("Rate limiter health check failed");
        this.remotes = List.copyOf(remotes);
        this.limitsOf = limitsOf;
    }

    private static Function<RemoteBackendStatus, Map<String, String>> fixed(Map<String, Map<String, String>> policies) {
        return (remote) -> policies.getOrDefault(remote.backend(), Map.of());
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        if (this.remotes.size() == 1) {
            RemoteBackendStatus remote = this.remotes.get(0);
            Map<String, Object> details = new LinkedHashMap<>();
            builder.status(check(remote, details)).withDetails(details);
            return;
        }
        boolean down = false;
        for (RemoteBackendStatus remote : this.remotes) {
            Map<String, Object> details = new LinkedHashMap<>();
            down |= check(remote, details) == Status.DOWN;
            builder.withDetail(remote.backend(), details);
        }
        builder.status(down ? Status.DOWN : Status.UP);
    }

    /** One backend's details, and whether it is UP. */
    private Status check(RemoteBackendStatus remote, Map<String, Object> details) {
        FailoverStatus status = remote.status();
        details.put("onFailure", status.defaultPolicy().id());
        details.put("limits", this.limitsOf.apply(remote));
        details.put("circuit", status.isCircuitOpen() ? "open" : "closed");
        details.put("fallbackDecisions", status.fallbackDecisions());
        details.put("slowDecisions", status.slowDecisions());
        List<String> failingShards = status.openShards();
        if (status.isFailing() || !failingShards.isEmpty()) {
            details.put(remote.backend(), "DOWN");
            details.put("error", status.lastFailure());
            if (!failingShards.isEmpty() && !failingShards.equals(List.of(""))) {
                details.put("failingShards", failingShards);
            }
            return Status.DOWN;
        }
        try {
            Map<String, Object> read = remote.read().get();
            details.put(remote.backend(), "UP");
            details.putAll(read);
            return Status.UP;
        }
        catch (RuntimeException ex) {
            details.put(remote.backend(), "DOWN");
            details.put("error", String.valueOf(ex.getMessage()));
            return Status.DOWN;
        }
    }

}
