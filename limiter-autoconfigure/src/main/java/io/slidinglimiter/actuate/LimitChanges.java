package io.slidinglimiter.actuate;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.SharedLimitChanges;

/**
 * Changes a limit at run time.
 * <p>
 * In this instance at once (keeping the counts), and, when limits
 * live on a backend that shares changes ({@link SharedLimitChanges}: Redis, the database), in every instance.
 * <p>
 * A change is stored there with the configured limit it replaces, and each instance reads the
 * stored changes every {@code periodMillis}: it applies a
 * change while its own configured limit is the one the change replaced, goes back to its configured
 * limit when the change is reverted, and removes a change made under another configuration (a new
 * configured value wins). So a change survives restarts and rolling deploys of the same
 * configuration, until it is reverted or the configuration changes.
 * <p>
 * A limit the limit's backend cannot count exactly is refused when it is asked for, and a stored one
 * (written by another version, or by hand) is ignored with one error: the limit keeps its value.
 */
public final class LimitChanges implements SmartInitializingSingleton, DisposableBean {

    private static final Log logger = LogFactory.getLog(LimitChanges.class);

    private final LimitRegistry registry;

    private final SharedLimitChanges shared;

    private final long periodMillis;

    /** The limit each name was configured with: its value before any run-time change. */
    private final Map<String, Long> configured = new ConcurrentHashMap<>();

    /** Reads that fail in a row before a warning: a busy application may miss one without Redis failing. */
    static final int FAILED_READS_BEFORE_WARNING = 3;

    private volatile boolean readFailing;

    /** Reads failed in a row; only the poller's thread changes it. */
    private int failedReads;

    private ScheduledExecutorService poller;

    /** The most permits per window each limit's backend counts exactly. */
    private final ToLongFunction<LimitDefinition> largestLimit;

    /**
     * Whether Redis can be reached now: reads that fail while it cannot are said by the start's
     * warning and the outage's, not again here.
     */
    private final BooleanSupplier reachable;

    /** Stored changes found invalid and logged, by limit name, so that each is logged once. */
    private final Set<String> invalidLogged = ConcurrentHashMap.newKeySet();

    /**
     * Changes for this instance only.
     * @param registry the limits
     */
    public LimitChanges(LimitRegistry registry) {
        this(registry, null, 0);
    }

    /**
     * Changes for this instance only, within what each limit's backend counts exactly.
     * @param registry the limits
     * @param largestLimit the most permits per window each limit's backend counts exactly
     */
    public LimitChanges(LimitRegistry registry, ToLongFunction<LimitDefinition> largestLimit) {
        this(registry, null, 0, largestLimit);
    }

    /**
     * Changes shared through a backend.
     * @param registry the limits
     * @param shared where every instance finds the changes, or null for this instance only
     * @param periodMillis how often stored changes are read
     */
    public LimitChanges(LimitRegistry registry, SharedLimitChanges shared, long periodMillis) {
        this(registry, shared, periodMillis, (definition) -> Long.MAX_VALUE);
    }

    /**
     * Changes shared through a backend, within what each limit's backend counts exactly.
     * @param registry the limits
     * @param shared where every instance finds the changes, or null for this instance only
     * @param periodMillis how often stored changes are read
     * @param largestLimit the most permits per window each limit's backend counts exactly
     */
    public LimitChanges(LimitRegistry registry, SharedLimitChanges shared, long periodMillis,
            ToLongFunction<LimitDefinition> largestLimit) {
        this(registry, shared, periodMillis, largestLimit, () -> true);
    }

    /**
     * Changes shared through a backend, within what each limit's backend counts exactly.
     * @param registry the limits
     * @param shared where every instance finds the changes, or null for this instance only
     * @param periodMillis how often stored changes are read
     * @param largestLimit the most permits per window each limit's backend counts exactly
     * @param reachable whether Redis can be reached now: reads that fail while it cannot are logged
     * at DEBUG, the start's and the outage's warnings having said so
     */
    public LimitChanges(LimitRegistry registry, SharedLimitChanges shared, long periodMillis,
            ToLongFunction<LimitDefinition> largestLimit, BooleanSupplier reachable) {
        this.registry = registry;
        this.shared = shared;
        this.periodMillis = periodMillis;
        this.largestLimit = largestLimit;
        this.reachable = reachable;
    }

    /**
     * Why a limit cannot take {@code limit} permits per window, or null when it can.
     * @param name the limit's name, registered
     * @param limit the permits per window asked for
     * @return the reason, naming the bound and the property that changes it; null when valid
     */
    public String problem(String name, long limit) {
        if (limit <= 0) {
            return "limit must be greater than 0, but was " + limit;
        }
        long largest = this.largestLimit.applyAsLong(this.registry.get(name));
        if (limit > largest) {
            return "limit " + limit + " is more than the backend of limit '" + name + "' counts exactly (" + largest
                    + "): ask for at most " + largest + ", or set limiter.limits." + name + ".backend to one that"
                    + " counts more";
        }
        return null;
    }

    /**
     * Changes a limit's permits per window.
     * @param name the limit's name, registered
     * @param limit the new permits per window, greater than 0
     * @throws IllegalArgumentException when the limit's backend cannot count {@code limit} exactly
     * ({@link #problem} says why); nothing changes then
     * @throws RuntimeException when the backend fails: the change cannot be shared
     */
    public void change(String name, long limit) {
        String problem = problem(name, limit);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        long configuredLimit = configuredLimit(name);
        if (this.shared != null) {
            this.shared.store(name, limit, configuredLimit);
        }
        this.registry.updateLimit(name, limit);
    }

    /**
     * Ends a run-time change: the configured limit applies again, on every instance when shared.
     * @param name the limit's name, registered
     * @throws RuntimeException when the backend fails: the revert cannot be shared
     */
    public void revert(String name) {
        long configuredLimit = configuredLimit(name);
        if (this.shared != null) {
            this.shared.remove(name);
        }
        this.registry.updateLimit(name, configuredLimit);
    }

    /**
     * The configuration gave a limit new permits per window (a live change of
     * {@code limiter.limits}): they apply at once, keeping the counts, and a run-time change made
     * under the old configuration ends, here and, as each instance reads the stored changes, there.
     * @param name the limit's name
     * @param limit its newly configured permits per window
     */
    public void reconfigure(String name, long limit) {
        this.configured.put(name, limit);
        this.registry.updateLimit(name, limit);
    }

    /**
     * The limit a name was configured with, whatever run-time change applies now.
     * @param name the limit's name, registered
     * @return its configured permits per window
     */
    public long configuredLimit(String name) {
        // Changes go through this class: the first time a name is seen here, its limit is the configured one.
        return this.configured.computeIfAbsent(name, (unknown) -> this.registry.get(unknown).limit());
    }

    /** @return the server that shares the changes, for messages: {@code "Redis"}; {@code "this instance"} when none does */
    public String serverName() {
        return (this.shared != null) ? this.shared.serverName() : "this instance";
    }

    /** @return whether changes reach every instance */
    public boolean isShared() {
        return this.shared != null;
    }

    @Override
    public void afterSingletonsInstantiated() {
        this.registry.all().forEach((definition) -> configuredLimit(definition.name()));
        if (this.shared == null) {
            return;
        }
        this.poller = Executors.newSingleThreadScheduledExecutor((task) -> {
            Thread thread = new Thread(null, task, "limiter-limit-changes", 0, false);
            thread.setDaemon(true);
            return thread;
        });
        this.poller.scheduleWithFixedDelay(this::apply, 0, this.periodMillis, TimeUnit.MILLISECONDS);
    }

    /** Reads the stored changes; every wait is bounded by the backend's timeout. */
    void apply() {
        Map<String, SharedLimitChanges.Stored> stored;
        try {
            stored = this.shared.load();
        }
        catch (RuntimeException ex) {
            // One missed read changes nothing (the next comes a period later): said once reads keep failing,
            // as a warning only while Redis can be reached (an unreachable one is said by the start and the outage).
            if (!this.readFailing && ++this.failedReads >= FAILED_READS_BEFORE_WARNING) {
                this.readFailing = true;
                String message = "Could not read run-time limit changes from " + serverName() + " (" + ex.getMessage() + "); the"
                        + " limits in force stay as they are until it answers.";
                if (this.reachable.getAsBoolean()) {
                    logger.warn(message);
                }
                else {
                    logger.debug(message);
                }
            }
            return;
        }
        this.failedReads = 0;
        if (this.readFailing) {
            this.readFailing = false;
            logger.info("Run-time limit changes are read from " + serverName() + " again.");
        }
        this.registry.all().forEach((definition) -> {
            String name = definition.name();
            long configuredLimit = configuredLimit(name);
            SharedLimitChanges.Stored change = stored.get(name);
            long inForce = configuredLimit;
            String invalid = (change != null && change.configuredLimit() == configuredLimit)
                    ? problem(name, change.limit()) : null;
            if (invalid != null) {
                if (this.invalidLogged.add(name + "=" + change.stored())) {
                    logger.error("Limit '" + name + "' has a run-time change stored in " + serverName() + " that cannot apply ("
                            + invalid + "; stored as '" + change.stored() + "'): it is ignored, and the limit keeps "
                            + configuredLimit + ". Revert it with DELETE /actuator/ratelimiters/" + name + ".");
                }
            }
            else if (change != null && change.configuredLimit() == configuredLimit) {
                inForce = change.limit();
            }
            else if (change != null) {
                logger.info("Limit '" + name + "' is configured with " + configuredLimit + ", not "
                        + change.configuredLimit() + " as when it was changed to " + change.limit()
                        + " at run time: the configuration wins, and the change is removed.");
                removeStale(name, change);
            }
            if (definition.limit() != inForce) {
                this.registry.updateLimit(name, inForce);
            }
        });
    }

    private void removeStale(String name, SharedLimitChanges.Stored change) {
        try {
            this.shared.removeStale(name, change);
        }
        catch (RuntimeException ex) {
            // Tried again on the next read.
        }
    }

    @Override
    public void destroy() {
        if (this.poller != null) {
            this.poller.shutdownNow();
        }
    }

}
