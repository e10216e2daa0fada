package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongConsumer;

import org.springframework.beans.factory.ObjectProvider;

import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.config.LimitPropertyNames;
import io.slidinglimiter.core.DecisionObserver;
import io.slidinglimiter.core.NamedBackend;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.RoutingBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.core.TimedBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.metrics.BackendTimers;
import io.slidinglimiter.metrics.DecisionObservers;

/**
 * Builds the backend limits count in, from the backends the modules contribute.
 * <p>
 * Builds the backend limits count in from the backends the application's modules contribute
 * ({@link NamedBackend} beans, and the local one), each limit routed to the one its properties
 * name; a name no module contributes fails the start, listing those that are there.
 */
final class Backends {

    /** The local backend's name in properties, meters and observations ({@code backend=local}). */
    static final String LOCAL = NamedBackend.LOCAL;

    /** The Redis backend's name. */
    static final String REDIS = "redis";

    /** The database backend's name. */
    static final String JDBC = "jdbc";

    private Backends() {
    }

    /**
     * A backend's name as properties are compared: trimmed, in lower case ({@code REDIS} was accepted
     * when the names were an enum's).
     * @param name the name as written, or null
     * @return the name, or null
     */
    static String normalized(String name) {
        return (name != null) ? name.trim().toLowerCase(Locale.ROOT) : null;
    }

    /** The in-process backend with the bounds of {@code limiter.local.*}. */
    static LocalBackend local(LimiterProperties properties, TimeSource timeSource) {
        return new LocalBackend(timeSource, properties.getLocal().getMaxKeys(), properties.getLocal().maxMemoryBytes(),
                properties.getLocal().overflowKeysOrDefault());
    }

    /**
     * The backend limits count in: the local backend and the contributed ones, each timed, each limit
     * routed to the one it names.
     * @param properties the limiter's properties
     * @param local the local backend
     * @param contributed the backends the application's modules contribute
     * @param timing what times and observes the backends
     * @param redisPresent whether Spring Data Redis with Lettuce is on the class path
     * @return the backend
     * @throws InvalidLimiterConfigurationException naming each property that names no backend there is
     */
    static RateLimitBackend routed(LimiterProperties properties, LocalBackend local, List<NamedBackend> contributed,
            Timing timing, boolean redisPresent) {
        Map<String, RateLimitBackend> byName = new LinkedHashMap<>();
        byName.put(LOCAL, timing.timed(local, LOCAL));
        for (NamedBackend backend : contributed) {
            byName.putIfAbsent(backend.name(), timing.timed(backend.backend(), backend.name()));
        }
        List<Problem> problems = new ArrayList<>();
        check("limiter.backend", properties.getBackend(), byName, redisPresent, problems);
        Map<String, String> byLimitName = new LinkedHashMap<>();
        properties.getLimits().forEach((name, limit) -> {
            if (limit.getBackend() != null) {
                check(LimitPropertyNames.of(name) + ".backend", limit.getBackend(), byName, redisPresent, problems);
            }
            byLimitName.put(name, ConfiguredLimits.backendOf(properties, name));
        });
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
        return RoutingBackend.byName(byName, properties.getBackend(), byLimitName);
    }

    /** Adds the problem of a property that names a backend the application does not have. */
    private static void check(String property, String name, Map<String, RateLimitBackend> byName,
            boolean redisPresent, List<Problem> problems) {
        if (byName.containsKey(name)) {
            return;
        }
        if (REDIS.equals(name)) {
            problems.add(redisPresent ? redisNotConfigured(property) : redisUnavailable(property));
            return;
        }
        if (JDBC.equals(name)) {
            problems.add(jdbcUnavailable(property));
            return;
        }
        problems.add(new Problem(property, "is '" + name + "', but no backend has that name: this application has "
                + String.join(", ", byName.keySet()), "Set " + property + " to one of " + String.join(", ",
                        byName.keySet()) + " (redis needs org.springframework.boot:spring-boot-starter-data-redis),"
                        + " or add the module that brings '" + name + "'."));
    }

    /**
     * With Redis on the class path, a limit that asks for Redis without the Redis backend means
     * that the application was processed ahead of time (Spring AOT) with settings where no limit used
     * Redis: AOT fixes the beans at build time, so those limits would count in memory without a word.
     */
    private static Problem redisNotConfigured(String property) {
        return new Problem(property, "is redis, but the Redis backend was not configured: this application was"
                + " processed ahead of time (Spring AOT) with settings where no limit used Redis, and AOT fixes"
                + " the beans at build time, so these limits would count in memory", "Process the application"
                        + " ahead of time with the settings it runs with: for example spring-boot:process-aot"
                        + " with -Dspring-boot.run.profiles=<the profile that sets " + property + ">.");
    }

    /**
     * The problem of a property that asks for the database backend where it was not configured: no
     * {@code DataSource}, no {@code limiter-jdbc}, or AOT processing with settings where no limit used it.
     */
    static Problem jdbcUnavailable(String property) {
        return new Problem(property, "is jdbc, but the database backend was not configured: it needs"
                + " io.slidinglimiter:limiter-jdbc (the starter brings it) and the application's DataSource"
                + " (spring-boot-starter-jdbc with spring.datasource.url)", "Add spring-boot-starter-jdbc and the"
                        + " PostgreSQL driver, set spring.datasource.url to the database, or set " + property
                        + " to local. An application processed ahead of time (Spring AOT) must be processed with"
                        + " the settings it runs with.");
    }

    /** The problem of a property that asks for Redis where Spring Data Redis with Lettuce is absent. */
    static Problem redisUnavailable(String property) {
        return new Problem(property, "is redis, but Spring Data Redis with Lettuce is not on the class path",
                "Add org.springframework.boot:spring-boot-starter-data-redis to the application's dependencies, or"
                        + " set " + property + " to local.");
    }

    /**
     * Times each backend as {@code limiter.backend.duration} when metrics are on, and observes it as
     * {@code limiter.decision} when observations are. The local backend is neither unless
     * {@code limiter.observations.local} is set: its decisions take nanoseconds in memory. Untimed
     * and unobserved a backend is itself: a decision then reads no clock and allocates nothing for
     * them (BENCHMARKS.md, "With Actuator").
     * @param timers the backends' timers, when metrics are on
     * @param observations the backends' observers, when observations are on
     * @param observeLocal {@code limiter.observations.local}
     */
    record Timing(ObjectProvider<BackendTimers> timers, ObjectProvider<DecisionObservers> observations,
            boolean observeLocal) {

        RateLimitBackend timed(RateLimitBackend backend, String name) {
            if (LOCAL.equals(name) && !this.observeLocal) {
                return backend;
            }
            BackendTimers timing = this.timers.getIfAvailable();
            DecisionObservers observing = this.observations.getIfAvailable();
            LongConsumer durations = (timing != null) ? timing.forBackend(name) : null;
            DecisionObserver observer = (observing != null) ? observing.forBackend(name) : null;
            if (durations == null && observer == null) {
                return backend;
            }
            return new TimedBackend(backend, durations, observer);
        }

    }

}
