package io.slidinglimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.LimitPropertyNames;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.InvalidLimitException;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.expression.InvalidExpressionException;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.expression.PlanExpression;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.RedisBackend;

/**
 * Turns {@code limiter.*} properties into limit definitions, reporting every bad value by the
 * property that holds it.
 */
final class ConfiguredLimits {

    /** The database backend's largest limit (JdbcBackend.MAX_LIMIT, a constant: no class of the optional module loads). */
    private static final long JDBC_MAX_LIMIT = io.slidinglimiter.jdbc.JdbcBackend.MAX_LIMIT;

    private ConfiguredLimits() {
    }

    /**
     * Whether a limit of that name is defined, for the integrations that name one (gateway routes,
     * token budgets) to fail the start when it is not.
     * @param rateLimiters the application's limits
     * @param name a limit's name
     * @return whether it is defined
     */
    static boolean isDefined(RateLimiters rateLimiters, String name) {
        try {
            rateLimiters.definition(name);
            return true;
        }
        catch (IllegalArgumentException ex) {
            return false;
        }
    }

    static LimitRegistry registry(LimiterProperties properties, boolean redisPresent) {
        List<Problem> problems = new ArrayList<>();
        int defaultSubWindows = properties.getDefaultSubWindows();
        if (defaultSubWindows < 1 || defaultSubWindows > LimitDefinition.MAX_SUB_WINDOWS) {
            problems.add(new Problem("limiter.default-sub-windows", "must be between 1 and "
                    + LimitDefinition.MAX_SUB_WINDOWS + " but was " + defaultSubWindows,
                    "Set limiter.default-sub-windows between 1 and " + LimitDefinition.MAX_SUB_WINDOWS
                            + " (10 is the default)."));
        }
        if (properties.getLocal().getMaxKeys() <= 0) {
            problems.add(new Problem("limiter.local.max-keys", "must be greater than 0 but was "
                    + properties.getLocal().getMaxKeys(), "Set limiter.local.max-keys to the most counters"
                            + " to keep in memory, for example 1000000."));
        }
        if (properties.getLocal().getOverflowKeys() != null && properties.getLocal().getOverflowKeys() <= 0) {
            problems.add(new Problem("limiter.local.overflow-keys", "must be greater than 0 but was "
                    + properties.getLocal().getOverflowKeys(), "Set limiter.local.overflow-keys to the new keys per"
                            + " window a flood may bring, for example 1000000, or leave it out."));
        }
        if (properties.getLocal().getMaxMemory() != null && properties.getLocal().getMaxMemory().toBytes() <= 0) {
            problems.add(new Problem("limiter.local.max-memory", "must be greater than 0 but was "
                    + properties.getLocal().getMaxMemory(), "Set limiter.local.max-memory to the most memory the"
                            + " counters may take, for example 256MB."));
        }
        if (Backends.REDIS.equals(properties.getBackend()) && !redisPresent) {
            problems.add(Backends.redisUnavailable("limiter.backend"));
        }
        checkRedis(properties.getRedis(), problems);
        checkJdbc(properties.getJdbc(), problems);
        LimitRegistry registry = new LimitRegistry();
        for (Map.Entry<String, LimiterProperties.Limit> entry : properties.getLimits().entrySet()) {
            LimitDefinition definition = definition(entry.getKey(), entry.getValue(), defaultSubWindows,
                    redisPresent, properties.getBackend(), problems);
            Map<String, Long> plans = plans(entry.getKey(), entry.getValue(), properties.getBackend(), problems);
            if (definition != null) {
                registry.register(definition);
                registry.setShadow(entry.getKey(), entry.getValue().isShadow());
                if (plans != null) {
                    registry.setPlans(entry.getKey(), plans);
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
        return registry;
    }

    /**
     * The failure policy of each limit that has its own ({@code limiter.limits.<name>.on-failure}), for
     * the remote backend it counts in.
     * @param properties the limiter's properties
     * @return by limit name
     */
    static Map<String, FailurePolicy> failurePolicies(LimiterProperties properties) {
        Map<String, FailurePolicy> policies = new HashMap<>();
        properties.getLimits().forEach((name, limit) -> {
            if (limit.getOnFailure() != null) {
                policies.put(name, limit.getOnFailure());
            }
        });
        return policies;
    }

    /**
     * The property that makes the application use a backend, for a failure to name:
     * {@code limiter.backend} when it names it, else the first limit's {@code backend} that does.
     * @param properties the limiter's properties
     * @param backend the backend's name
     * @return the property
     */
    static String propertyNaming(LimiterProperties properties, String backend) {
        if (backend.equals(properties.getBackend())) {
            return "limiter.backend";
        }
        return properties.getLimits().entrySet().stream()
                .filter((entry) -> backend.equals(entry.getValue().getBackend()))
                .map((entry) -> LimitPropertyNames.of(entry.getKey()) + ".backend")
                .findFirst().orElse("limiter.backend");
    }

    /**
     * Where a limit's counters live: its own {@code backend}, else {@code limiter.backend}; inline
     * (annotation-only) limits take the latter.
     */
    static String backendOf(LimiterProperties properties, String limitName) {
        LimiterProperties.Limit configured = properties.getLimits().get(limitName);
        return (configured != null) ? backendOf(configured, properties.getBackend()) : properties.getBackend();
    }

    private static String backendOf(LimiterProperties.Limit limit, String defaultBackend) {
        return (limit.getBackend() != null) ? limit.getBackend() : defaultBackend;
    }

    /** Why a limit that asks for leases cannot take them, or null when it can. */
    private static Problem leaseProblem(String prefix, LimiterProperties.Limit limit, String defaultBackend) {
        String backend = backendOf(limit, defaultBackend);
        if (!Backends.REDIS.equals(backend) && !Backends.JDBC.equals(backend)) {
            return new Problem(prefix + ".lease", "is true, but the limit's counters are local: a lease takes"
                    + " permits from a shared server (redis or jdbc), which a local limit does not use", "Set "
                            + prefix + ".backend to redis or jdbc, or remove " + prefix + ".lease.");
        }
        if (limit.getAlgorithm() == Algorithm.SLIDING_LOG) {
            return new Problem(prefix + ".lease", "is true, but the limit counts by sliding-log, which records"
                    + " each admission at its millisecond; a lease's permits are counted when it is taken and"
                    + " admitted later, which the log cannot hold exactly", "Remove " + prefix + ".lease, or set "
                            + prefix + ".algorithm to sliding-window-counter (leases count in its sub-windows).");
        }
        return null;
    }

    /**
     * Whether each limit of a remote backend takes leases: its own {@code lease}, else the backend's
     * ({@code limiter.redis.lease}, {@code limiter.jdbc.lease}), for limits counted by the sliding
     * window counter (the backend decides the algorithm of inline limits). A limit of another backend
     * does not lease here, inline limits included, which count in {@code limiter.backend}'s: so only
     * the backend that decides a limit counts its lease decisions ({@code limiter.lease.decisions}).
     * @param properties the limiter's properties
     * @param backend the backend's name
     * @param byDefault whether the backend's limits lease unless they say otherwise
     * @return the test by limit name, or null when no limit of the backend can lease
     */
    static Predicate<String> leased(LimiterProperties properties, String backend, boolean byDefault) {
        Map<String, Boolean> own = new LinkedHashMap<>();
        properties.getLimits().forEach((name, limit) -> own.put(name, backend.equals(backendOf(limit,
                properties.getBackend())) && ((limit.getLease() != null) ? limit.getLease() : byDefault)));
        if (!byDefault && !own.containsValue(true)) {
            return null;
        }
        boolean inline = byDefault && backend.equals(properties.getBackend());
        return (name) -> own.getOrDefault(name, inline);
    }

    /**
     * The problem of a limit, or of a plan's limit, that a Redis limit's scripts cannot count
     * exactly ({@code property} holds it, {@code prefix} names the limit); null when there is none.
     */
    private static Problem beyondBackend(String prefix, String property, long value, String backend) {
        if (Backends.LOCAL.equals(backend) && value > LocalBackend.MAX_LIMIT) {
            return new Problem(property, "is " + value + ", more than the local backend counts (" + LocalBackend.MAX_LIMIT
                    + ", 2^53: larger counts could wrap)", "Set " + property + " to at most " + LocalBackend.MAX_LIMIT
                            + ".");
        }
        if (Backends.JDBC.equals(backend) && value > JDBC_MAX_LIMIT) {
            return new Problem(property, "is " + value + ", more than the database backend counts (" + JDBC_MAX_LIMIT
                    + ", 2^53)", "Set " + property + " to at most " + JDBC_MAX_LIMIT + ", or " + prefix
                            + ".backend to local.");
        }
        if (!Backends.REDIS.equals(backend) || value <= RedisBackend.MAX_LIMIT) {
            return null;
        }
        return new Problem(property, "is " + value + ", more than Redis counts exactly (" + RedisBackend.MAX_LIMIT
                + ", 2^53 - 1: its scripts count in doubles)", "Set " + property + " to at most "
                        + RedisBackend.MAX_LIMIT + ", or " + prefix + ".backend to local.");
    }

    /**
     * The definition of one configured limit, checked: null, with the problems added, when it
     * cannot be built.
     */
    static LimitDefinition definition(String name, LimiterProperties.Limit limit, int defaultSubWindows,
            boolean redisPresent, String defaultBackend, List<Problem> problems) {
        String prefix = LimitPropertyNames.of(name);
        if (Backends.REDIS.equals(limit.getBackend()) && !redisPresent) {
            problems.add(Backends.redisUnavailable(prefix + ".backend"));
        }
        if (limit.getLimit() == null) {
            problems.add(new Problem(prefix + ".limit", "is missing",
                    "Set " + prefix + ".limit to the permits per window, for example 100."));
        }
        if (limit.getWindow() == null) {
            problems.add(new Problem(prefix + ".window", "is missing",
                    "Set " + prefix + ".window to the window length, for example 1s, 1m or PT1H."));
        }
        if (limit.getLimit() == null || limit.getWindow() == null) {
            return null;
        }
        Problem beyondBackend = beyondBackend(prefix, prefix + ".limit", limit.getLimit(),
                backendOf(limit, defaultBackend));
        if (beyondBackend != null) {
            problems.add(beyondBackend);
        }
        if (Boolean.TRUE.equals(limit.getLease())) {
            Problem lease = leaseProblem(prefix, limit, defaultBackend);
            if (lease != null) {
                problems.add(lease);
            }
        }
        int subWindows = (limit.getSubWindows() != null) ? limit.getSubWindows() : defaultSubWindows;
        try {
            return new LimitDefinition(name, limit.getLimit(), limit.getWindow(), subWindows, limit.getAlgorithm());
        }
        catch (InvalidLimitException ex) {
            problems.add(switch (ex.getField()) {
                case LIMIT -> new Problem(prefix + ".limit", ex.getMessage(),
                        "Set " + prefix + ".limit to a number of permits greater than 0.");
                case SUB_WINDOWS -> new Problem(prefix + ".sub-windows", ex.getMessage(), "Set " + prefix
                        + ".sub-windows between 1 and " + LimitDefinition.MAX_SUB_WINDOWS + ".");
                case WINDOW -> new Problem(prefix + ".window", ex.getMessage(), "Set " + prefix
                        + ".window to a positive duration that divides into " + subWindows
                        + " sub-windows of whole milliseconds, or change " + prefix + ".sub-windows.");
                case NAME -> new Problem(prefix, ex.getMessage(), "Give the limit a non-blank name.");
            });
            return null;
        }
    }

    /**
     * The quotas of one configured limit's plans ({@code plans.<plan>.limit}), checked: null, with
     * the problems added, when one is wrong.
     */
    static Map<String, Long> plans(String name, LimiterProperties.Limit limit, String defaultBackend,
            List<Problem> problems) {
        String backend = backendOf(limit, defaultBackend);
        String prefix = LimitPropertyNames.of(name);
        Map<String, Long> plans = new LinkedHashMap<>();
        int before = problems.size();
        limit.getPlans().forEach((plan, quota) -> {
            String property = prefix + ".plans." + plan + ".limit";
            Long planLimit = (quota != null) ? quota.getLimit() : null;
            Problem beyondBackend = (planLimit != null) ? beyondBackend(prefix, property, planLimit, backend) : null;
            if (planLimit == null || planLimit <= 0) {
                problems.add(new Problem(property, (planLimit == null) ? "is missing"
                        : "must be greater than 0 but was " + planLimit, "Set " + property
                                + " to the permits per window of callers on plan '" + plan + "', for example 100."));
            }
            else if (beyondBackend != null) {
                problems.add(beyondBackend);
            }
            else {
                plans.put(plan, planLimit);
            }
        });
        return (problems.size() == before) ? plans : null;
    }

    private static void checkRedis(LimiterProperties.Redis redis, List<Problem> problems) {
        requirePositive(redis.getTimeout(), "limiter.redis.timeout", "the longest a decision may wait for Redis,"
                + " for example 100ms", problems);
        if (redis.getTimeout() != null && redis.getMaxWait() != null && !redis.getTimeout().isNegative()
                && redis.getMaxWait().compareTo(redis.getTimeout()) < 0) {
            problems.add(new Problem("limiter.redis.max-wait", "(" + redis.getMaxWait().toMillis()
                    + "ms) is shorter than limiter.redis.timeout (" + redis.getTimeout().toMillis() + "ms)",
                    "Set limiter.redis.max-wait, the longest a decision waits for a Redis that is answering, to at"
                            + " least limiter.redis.timeout, for example 1s."));
        }
        if (redis.getFailureThreshold() < 1) {
            problems.add(new Problem("limiter.redis.failure-threshold", "must be at least 1 but was "
                    + redis.getFailureThreshold(), "Set limiter.redis.failure-threshold to the failures in a row"
                            + " that stop calls to Redis for a while, for example 3."));
        }
        requirePositive(redis.getOpenFor(), "limiter.redis.open-for", "how long calls stay away from a failing"
                + " Redis, for example 1s", problems);
        if (redis.getDenialCacheSize() < 0) {
            problems.add(new Problem("limiter.redis.denial-cache-size", "must be 0 or more but was "
                    + redis.getDenialCacheSize(), "Set limiter.redis.denial-cache-size to a number of keys, or 0 to"
                            + " turn the cache off."));
        }
    }

    private static void checkJdbc(LimiterProperties.Jdbc jdbc, List<Problem> problems) {
        requirePositive(jdbc.getTimeout(), "limiter.jdbc.timeout", "the longest a decision may wait for the"
                + " database, for example 100ms", problems);
        if (jdbc.getTimeout() != null && jdbc.getMaxWait() != null && !jdbc.getTimeout().isNegative()
                && jdbc.getMaxWait().compareTo(jdbc.getTimeout()) < 0) {
            problems.add(new Problem("limiter.jdbc.max-wait", "(" + jdbc.getMaxWait().toMillis()
                    + "ms) is shorter than limiter.jdbc.timeout (" + jdbc.getTimeout().toMillis() + "ms)",
                    "Set limiter.jdbc.max-wait, the longest a decision waits for a connection while decisions"
                            + " complete, to at least limiter.jdbc.timeout, for example 2s."));
        }
        if (jdbc.getFailureThreshold() < 1) {
            problems.add(new Problem("limiter.jdbc.failure-threshold", "must be at least 1 but was "
                    + jdbc.getFailureThreshold(), "Set limiter.jdbc.failure-threshold to the failures in a row"
                            + " that stop calls to the database for a while, for example 3."));
        }
        requirePositive(jdbc.getOpenFor(), "limiter.jdbc.open-for", "how long calls stay away from a failing"
                + " database, for example 1s", problems);
        requirePositive(jdbc.getCleanupInterval(), "limiter.jdbc.cleanup-interval", "how often idle rows are"
                + " deleted, for example 1m", problems);
        if (jdbc.getDenialCacheSize() < 0) {
            problems.add(new Problem("limiter.jdbc.denial-cache-size", "must be 0 or more but was "
                    + jdbc.getDenialCacheSize(), "Set limiter.jdbc.denial-cache-size to a number of keys, or 0 to"
                            + " turn the cache off."));
        }
    }

    private static void requirePositive(Duration duration, String property, String meaning, List<Problem> problems) {
        if (duration == null || duration.isNegative() || duration.isZero()) {
            problems.add(new Problem(property, "must be positive but was " + duration,
                    "Set " + property + " to " + meaning + "."));
        }
    }

    /**
     * A rule's limit's plan, over the variables the rule's key may use; null when it has none.
     * @param variables those variables
     * @param named how the failure names them, for example {@code "#metadata and #clientAddress"}
     */
    static PlanExpression plan(LimiterProperties.Limit limit, String name, String rule, LimiterExpressionParser parser,
            Set<String> variables, String named, List<Problem> problems) {
        if (limit == null || limit.getPlan() == null || limit.getPlan().isBlank()) {
            return null;
        }
        String property = LimitPropertyNames.of(name) + ".plan";
        try {
            return new PlanExpression(parser.parse(limit.getPlan(), variables), property);
        }
        catch (InvalidExpressionException ex) {
            problems.add(new Problem(property, "plan expression " + ex.getMessage() + " (the limit is applied by "
                    + rule + ")", "Write the plan over " + named + ", which every use of the limit there has."));
            return null;
        }
    }

}
