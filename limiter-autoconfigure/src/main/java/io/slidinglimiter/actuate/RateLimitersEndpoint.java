package io.slidinglimiter.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitStatistics;
import io.slidinglimiter.failover.LeaseCounts;
import io.slidinglimiter.failover.LeaseState;
import io.slidinglimiter.failover.RemoteBackendException;
import io.slidinglimiter.redis.RedisStatus;

/**
 * The {@code ratelimiters} endpoint.
 * <p>
 * Every limit with its totals; one limit, and one key's usage;
 * a new limit at run time; one key reset. The write operations change how the application
 * protects itself: expose them only behind authentication.
 */
@Endpoint(id = "ratelimiters")
public class RateLimitersEndpoint {

    private final LimitRegistry registry;

    private final RateLimiters rateLimiters;

    private final LimitChanges changes;

    private final Function<LimitDefinition, String> backends;

    /** The remote backends' statuses, by backend name. */
    private final Map<String, RemoteBackendStatus> remotes;

    /**
     * Creates the endpoint.
     * @param registry the limits
     * @param rateLimiters decides, for a key's usage and resets
     * @param changes applies limit changes
     * @param backends the backend name of each limit
     */
    public RateLimitersEndpoint(LimitRegistry registry, RateLimiters rateLimiters, LimitChanges changes,
            Function<LimitDefinition, String> backends) {
        this(registry, rateLimiters, changes, backends, List.of());
    }

    /**
     * Creates the endpoint for an application with limits on Redis.
     * @param registry the limits
     * @param rateLimiters decides, for a key's usage and resets
     * @param changes applies limit changes
     * @param backends the backend name of each limit
     * @param redis whether Redis decides now, or null without Redis
     */
    public RateLimitersEndpoint(LimitRegistry registry, RateLimiters rateLimiters, LimitChanges changes,
            Function<LimitDefinition, String> backends, @Nullable RedisStatus redis) {
        this(registry, rateLimiters, changes, backends, (redis != null)
                ? List.of(RemoteBackendStatus.redis(redis)) : List.of());
    }

    /**
     * Creates the endpoint for an application with limits on remote backends.
     * @param registry the limits
     * @param rateLimiters decides, for a key's usage and resets
     * @param changes applies limit changes
     * @param backends the backend name of each limit
     * @param remotes every remote backend's status: whether it decides now, its leases
     */
    public RateLimitersEndpoint(LimitRegistry registry, RateLimiters rateLimiters, LimitChanges changes,
            Function<LimitDefinition, String> backends, List<RemoteBackendStatus> remotes) {
        this.registry = registry;
        this.rateLimiters = rateLimiters;
        this.changes = changes;
        this.backends = backends;
        Map<String, RemoteBackendStatus> byName = new LinkedHashMap<>();
        remotes.forEach((remote) -> byName.put(remote.backend(), remote));
        this.remotes = Map.copyOf(byName);
    }

    /** @return every limit, by name */
    @ReadOperation
    public Map<String, Object> limits() {
        Map<String, Object> limits = new TreeMap<>();
        for (LimitDefinition definition : this.registry.all()) {
            limits.put(definition.name(), describe(definition));
        }
        return Map.of("limits", limits);
    }

    /**
     * One limit, and one key's usage when {@code key} is given: what a call of {@code cost} (1 when
     * not given) would be told, its {@code retryAfter} the time until that many permits are free.
     * @param name the limit's name
     * @param key a counter key, or null
     * @param cost the permits of the call asked about, or null for 1
     * @return the limit; 404 for an unknown name, 400 for a blank key or a cost that is not a whole
     * number between 1 and the limit
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> limit(@Selector String name, @Nullable String key,
            @Nullable String cost) {
        Optional<LimitDefinition> definition = this.registry.find(name);
        if (definition.isEmpty()) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
        }
        Map<String, Object> body = describe(definition.get());
        if (key != null) {
            if (key.isBlank()) {
                return error("The key must not be blank");
            }
            long permits;
            try {
                permits = (cost != null) ? Long.parseLong(cost.trim()) : 1;
            }
            catch (NumberFormatException ex) {
                return error("cost must be a whole number of permits, but was '" + cost + "'");
            }
            long limit = definition.get().limit();
            if (permits < 1 || permits > limit) {
                return error("cost must be between 1 and the limit (" + limit + "), but was " + permits);
            }
            KeyUsage counted = this.rateLimiters.usage(name, key, permits);
            Decision usage = counted.decision();
            Map<String, Object> keyUsage = new LinkedHashMap<>();
            keyUsage.put("used", counted.used());
            keyUsage.put("remaining", usage.remaining());
            if (cost != null) {
                keyUsage.put("cost", permits);
            }
            keyUsage.put("retryAfter", seconds(usage.retryAfter()));
            keyUsage.put("resetAfter", seconds(usage.resetAfter()));
            RemoteBackendStatus remote = this.remotes.get(this.backends.apply(definition.get()));
            if (remote != null && remote.status().leases(definition.get())) {
                keyUsage.put("lease", describe(remote.status().leaseState(name, key)));
            }
            if (remote != null && remote.status().isFailing()) {
                String server = remote.status().serverName();
                keyUsage.put("source", "local: " + server + " is not answering (" + remote.status().lastFailure()
                        + "), so this is this instance's fallback count, not " + server + "'s");
            }
            body.put("key", keyUsage);
        }
        return new WebEndpointResponse<>(body);
    }

    /**
     * Changes a limit's permits per window, keeping the counts. Only {@code limit} changes at run
     * time: a window, its sub-windows, the algorithm or the backend change how a limit counts, which
     * is the configuration's to say ({@code limiter.limits.<name>}, live or at a restart), so a
     * request that names one of them changes nothing and answers 400.
     * @param name the limit's name
     * @param limit the new permits per window, a whole number greater than 0, at most what the
     * limit's backend counts exactly
     * @param window refused when given
     * @param subWindows refused when given
     * @param algorithm refused when given
     * @param backend refused when given
     * @return the limit as changed; 404 for an unknown name, 400 for a bad limit or another field
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> updateLimit(@Selector String name, @Nullable String limit,
            @Nullable String window, @Nullable String subWindows, @Nullable String algorithm,
            @Nullable String backend) {
        if (this.registry.find(name).isEmpty()) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
        }
        Map<String, String> other = new LinkedHashMap<>();
        other.put("window", window);
        other.put("subWindows", subWindows);
        other.put("algorithm", algorithm);
        other.put("backend", backend);
        other.values().removeIf((value) -> value == null);
        if (!other.isEmpty()) {
            return error("Only limit changes at run time; " + other.keySet() + " change how the limit counts:"
                    + " set them in limiter.limits." + name + " (applied live where Spring Cloud's refresh is"
                    + " used, else at the next start). Nothing was changed.");
        }
        long newLimit;
        try {
            newLimit = (limit != null) ? Long.parseLong(limit.trim()) : 0;
        }
        catch (NumberFormatException ex) {
            return error("limit must be a whole number greater than 0, but was '" + limit + "'");
        }
        if (limit == null) {
            return error("Send the new limit, for example {\"limit\": 200}");
        }
        String problem = this.changes.problem(name, newLimit);
        if (problem != null) {
            return error(problem + ". Nothing was changed.");
        }
        try {
            this.changes.change(name, newLimit);
        }
        catch (RemoteBackendException ex) {
            return unavailable("The limit was not changed: " + this.changes.serverName()
                    + ", which shares it with every instance,", this.changes.serverName(), ex);
        }
        Map<String, Object> body = describe(this.registry.get(name));
        body.put("appliesTo", this.changes.isShared() ? "every instance" : "this instance");
        return new WebEndpointResponse<>(body);
    }

    /**
     * Forgets what one key has used; without a key, ends the limit's run-time change, so that its
     * configured limit applies again (on every instance when limits are shared through Redis).
     * @param name the limit's name
     * @param key the counter key, or null to revert the limit
     * @return 204 for a reset, the limit for a revert; 404 for an unknown name, 400 for a blank key,
     * 503 while Redis does not answer
     */
    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> reset(@Selector String name, @Nullable String key) {
        if (this.registry.find(name).isEmpty()) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
        }
        if (key == null) {
            try {
                this.changes.revert(name);
            }
            catch (RemoteBackendException ex) {
                return unavailable("The limit was not reverted: " + this.changes.serverName()
                        + ", which shares it with every instance,", this.changes.serverName(), ex);
            }
            Map<String, Object> body = describe(this.registry.get(name));
            body.put("appliesTo", this.changes.isShared() ? "every instance" : "this instance");
            return new WebEndpointResponse<>(body);
        }
        if (key.isBlank()) {
            return error("Name the key to reset, for example ?key=alice, or send no key to revert the limit");
        }
        try {
            this.rateLimiters.reset(name, key);
        }
        catch (RemoteBackendException ex) {
            RemoteBackendStatus remote = this.remotes.get(this.backends.apply(this.registry.get(name)));
            String server = (remote != null) ? remote.status().serverName() : "the backend";
            return unavailable("The key was not reset: " + server, server, ex);
        }
        return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NO_CONTENT);
    }

    private Map<String, Object> describe(LimitDefinition definition) {
        LimitStatistics statistics = this.registry.statistics(definition.name());
        Map<String, Object> description = new LinkedHashMap<>();
        description.put("name", definition.name());
        description.put("limit", definition.limit());
        description.put("configuredLimit", this.changes.configuredLimit(definition.name()));
        description.put("window", definition.window().toString());
        description.put("subWindows", definition.subWindows());
        description.put("algorithm", definition.algorithm().id());
        description.put("backend", this.backends.apply(definition));
        Map<String, Long> plans = this.registry.handle(definition.name()).plans();
        if (!plans.isEmpty()) {
            Map<String, Object> quotas = new TreeMap<>();
            plans.forEach((plan, limit) -> quotas.put(plan, Map.of("limit", limit)));
            description.put("plans", quotas);
        }
        description.put("allowed", statistics.allowed());
        description.put("rejected", statistics.rejected());
        description.put("fallback", statistics.fallback());
        RemoteBackendStatus remote = this.remotes.get(this.backends.apply(definition));
        if (remote != null && remote.status().leases(definition)) {
            description.put("lease", describe(remote.backend(), remote.status().leaseCounts(definition.name())));
        }
        if (this.registry.isShadow(definition.name())) {
            description.put("shadow", true);
            description.put("shadowRejected", statistics.shadowRejected());
        }
        return description;
    }

    /** A leasing limit's counts; the decisions its server took under {@code fromRedis} or {@code fromDatabase}. */
    private static Map<String, Long> describe(String backend, LeaseCounts counts) {
        Map<String, Long> described = new LinkedHashMap<>();
        described.put("fromLease", counts.fromLease());
        described.put("redis".equals(backend) ? "fromRedis" : "fromDatabase", counts.fromServer());
        described.put("leasesTaken", counts.leasesTaken());
        described.put("givenBack", counts.givenBack());
        described.put("lost", counts.lost());
        return described;
    }

    private static Map<String, Object> describe(LeaseState state) {
        if (!state.held()) {
            return Map.of("held", false);
        }
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("held", true);
        described.put("left", state.left());
        described.put("taken", state.taken());
        described.put("endsInMillis", state.endsInMillis());
        return described;
    }

    private static double seconds(Duration duration) {
        return duration.toMillis() / 1000.0;
    }

    /**
     * 503: {@code what} did not happen because its server did not answer, or answered with an error,
     * saying which and in the server's own words; a sentence, never a stack trace.
     */
    private WebEndpointResponse<Map<String, Object>> unavailable(String what, String serverName,
            RemoteBackendException ex) {
        boolean answered = this.remotes.values().stream().anyMatch((remote) ->
                remote.status().serverName().equals(serverName) && remote.status().answered(ex));
        String happened = answered ? " failed it (" + ex.getMessage() + "). Nothing was changed."
                : " did not answer (" + ex.getMessage() + "). Try again when it does.";
        return new WebEndpointResponse<>(Map.of("error", what + happened), WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
    }

    private static WebEndpointResponse<Map<String, Object>> error(String message) {
        return new WebEndpointResponse<>(Map.of("error", message), WebEndpointResponse.STATUS_BAD_REQUEST);
    }

}
