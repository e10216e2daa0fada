package io.slidinglimiter.failover;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Failures that are one limit's own, not the server's, as the limiter logs them.
 * <p>
 * A value the server cannot count with, or data of that limit's keys it fails on
 * ({@link RemoteBackend#isLimitsOwn} tells which): the server answered them, so they trip no shard's
 * breaker, mark no outage and change no health; only that limit's calls follow its failure policy.
 * Each limit's first such failure is logged at ERROR with its cause, and its first wait for a key's
 * data another client held ({@link RemoteBackend#isContention}) at WARNING, for that one passes;
 * all are counted.
 */
final class LimitFaults {

    private static final Logger logger = Logger.getLogger(LimitFaults.class.getName());

    /** The most limit names remembered as logged: names come from configuration, but stay bounded. */
    private static final int MAX_LOGGED = 1_000;

    /** The backend, named in the messages. */
    private final RemoteBackend remote;

    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    private final Set<String> contended = ConcurrentHashMap.newKeySet();

    private final LongAdder count = new LongAdder();

    LimitFaults(RemoteBackend remote) {
        this.remote = remote;
    }

    /**
     * Notes a limit's own failure: logged the first time for that limit.
     * @param limitName the limit whose decision failed
     * @param failure what it failed with
     */
    void record(String limitName, RuntimeException failure) {
        this.count.increment();
        if (this.remote.isContention(failure)) {
            if (this.contended.size() < MAX_LOGGED && this.contended.add(limitName)) {
                String server = this.remote.serverName();
                logger.log(Level.WARNING, () -> "A rate limiter decision of limit '" + limitName + "' waited too"
                        + " long in " + server + " for a key's counter that another client held ("
                        + rootMessage(failure) + "): that call followed its " + this.remote.propertyPrefix()
                        + ".on-failure policy and the key's next calls try " + server + " again; other keys, the"
                        + " circuit breaker and health are not affected. Logged once per limit.");
            }
        }
        else if (this.logged.size() < MAX_LOGGED && this.logged.add(limitName)) {
            String server = this.remote.serverName();
            logger.log(Level.SEVERE, () -> "A rate limiter decision of limit '" + limitName + "' failed in " + server
                    + " for that limit's own values or data, not for " + server + " (" + rootMessage(failure)
                    + "): its calls follow its " + this.remote.propertyPrefix() + ".on-failure policy until that is"
                    + " fixed; other limits, the circuit breaker and health are not affected. Logged once per limit.");
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
