package io.slidinglimiter.redis;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.lettuce.core.RedisCommandExecutionException;

/**
 * Failures that are one limit's own, not Redis's: a value the script cannot count with (a limit
 * past what Redis counts exactly) or data of that limit's keys the script fails on. Redis answered
 * them, so they trip no shard's breaker, mark no outage and change no health: only that limit's
 * calls follow its failure policy. Each limit's first such failure is logged at ERROR with its
 * cause; all are counted.
 */
final class LimitFaults {

    private static final Logger logger = Logger.getLogger(LimitFaults.class.getName());

    /** The most limit names remembered as logged: names come from configuration, but stay bounded. */
    private static final int MAX_LOGGED = 1_000;

    /**
     * Error codes by which Redis tells of its own condition (memory, role, loading, a busy script,
     * the cluster): those are Redis's failures, whatever script they came through.
     */
    private static final List<String> REDIS_CONDITIONS = List.of("OOM", "READONLY", "MASTERDOWN", "LOADING", "BUSY",
            "CLUSTERDOWN", "TRYAGAIN", "NOREPLICAS", "MISCONF", "NOSCRIPT", "MOVED", "ASK", "NOAUTH", "NOPERM",
            "WRONGPASS", "CROSSSLOT");

    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    private final LongAdder count = new LongAdder();

    /**
     * Whether a failure is a limit's own: refused before it was sent ({@link IllegalArgumentException}),
     * or a script error Redis answered that is not one of Redis's conditions.
     * @param failure what a call failed with
     * @return true when Redis is not to blame
     */
    static boolean isLimitsOwn(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof IllegalArgumentException) {
                return true;
            }
            if (cause instanceof RedisCommandExecutionException) {
                String message = String.valueOf(cause.getMessage());
                for (String condition : REDIS_CONDITIONS) {
                    if (message.startsWith(condition + " ") || message.contains("-" + condition + " ")
                            || message.contains(": " + condition + " ")) {
                        return false;
                    }
                }
                return message.startsWith("WRONGTYPE") || message.contains("user_script")
                        || message.startsWith("ERR Error running script");
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /**
     * Notes a limit's own failure: logged the first time for that limit.
     * @param limitName the limit whose decision failed
     * @param failure what it failed with
     */
    void record(String limitName, RuntimeException failure) {
        this.count.increment();
        if (this.logged.size() < MAX_LOGGED && this.logged.add(limitName)) {
            logger.log(Level.SEVERE, () -> "A rate limiter decision of limit '" + limitName + "' failed in Redis for"
                    + " that limit's own values or data, not for Redis (" + rootMessage(failure) + "): its calls"
                    + " follow its limiter.redis.on-failure policy until that is fixed; other limits, the circuit"
                    + " breaker and health are not affected. Logged once per limit.");
        }
    }

    /** @return limit-own failures since start */
    long count() {
        return this.count.sum();
    }

    private static String rootMessage(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause.getMessage();
    }

}
