package io.slidinglimiter.actuate;

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.redis.RedisLimitOverrides;

/**
 * Changes a limit at run time: in this instance at once (keeping the counts), and, when limits
 * live in Redis, in every instance: the change is stored in Redis and each instance reads the
 * stored changes every {@code periodMillis}.
 */
public final class LimitChanges implements SmartInitializingSingleton, DisposableBean {

    private static final Log logger = LogFactory.getLog(LimitChanges.class);

    private final LimitRegistry registry;

    private final RedisLimitOverrides shared;

    private final long periodMillis;

    private ScheduledExecutorService poller;

    /**
     * Changes for this instance only.
     * @param registry the limits
     */
    public LimitChanges(LimitRegistry registry) {
        this(registry, null, 0);
    }

    /**
     * Changes shared through Redis.
     * @param registry the limits
     * @param shared where every instance finds the changes, or null for this instance only
     * @param periodMillis how often stored changes are read
     */
    public LimitChanges(LimitRegistry registry, RedisLimitOverrides shared, long periodMillis) {
        this.registry = registry;
        this.shared = shared;
        this.periodMillis = periodMillis;
    }

    /**
     * Changes a limit's permits per window.
     * @param name the limit's name, registered
     * @param limit the new permits per window, greater than 0
     */
    public void change(String name, long limit) {
        if (this.shared != null) {
            this.shared.store(name, limit);
        }
        this.registry.updateLimit(name, limit);
    }

    /** @return whether changes reach every instance */
    public boolean isShared() {
        return this.shared != null;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (this.shared == null) {
            return;
        }
        this.poller = Executors.newSingleThreadScheduledExecutor((task) -> {
            Thread thread = new Thread(task, "limiter-limit-changes");
            thread.setDaemon(true);
            return thread;
        });
        this.poller.scheduleWithFixedDelay(this::apply, 0, this.periodMillis, TimeUnit.MILLISECONDS);
    }

    private void apply() {
        try {
            for (Map.Entry<String, Long> stored : this.shared.load().entrySet()) {
                this.registry.find(stored.getKey())
                        .filter((definition) -> definition.limit() != stored.getValue() && stored.getValue() > 0)
                        .ifPresent((definition) -> this.registry.updateLimit(stored.getKey(), stored.getValue()));
            }
        }
        catch (RuntimeException ex) {
            // Redis is down: the failure policy covers decisions; changes wait for it to return.
            logger.debug("Could not read limit changes from Redis", ex);
        }
    }

    @Override
    public void destroy() {
        if (this.poller != null) {
            this.poller.shutdownNow();
        }
    }

}
