package io.slidinglimiter.autoconfigure;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.redis.LettuceScriptRunner;

/**
 * Connects to Redis once every bean exists, so that the first decisions do not pay for it.
 * <p>
 * Connects and loads the script once every bean exists, waiting for it up to
 * {@value #STARTUP_WAIT_SECONDS} s, so that the first decisions after start do not pay for it
 * (on a cold JVM they would time out against a healthy Redis). An application whose Redis does not
 * answer starts all the same, with one warning; the failure policy decides meanwhile.
 */
final class RedisConnectionWarmup implements SmartInitializingSingleton, DisposableBean {

    /** The Redis auto-configuration's logger, which docs/operations.md lists for this line. */
    private static final Log logger = LogFactory.getLog(LimiterRedisAutoConfiguration.class);

    static final long STARTUP_WAIT_SECONDS = 2;

    private final LettuceScriptRunner runner;

    private final FailurePolicy policy;

    private final String address;

    private volatile boolean closing;

    RedisConnectionWarmup(LettuceScriptRunner runner, FailurePolicy policy, String address) {
        this.runner = runner;
        this.policy = policy;
        this.address = address;
    }

    @Override
    public void afterSingletonsInstantiated() {
        CompletableFuture<?> connected = this.runner.connect();
        connected.whenComplete((ignored, failure) -> {
            if (failure != null && !this.closing) {
                logger.warn("Sliding Limiter could not connect to Redis at " + this.address + " at start ("
                        + failure.getMessage() + "): limits on Redis follow limiter.redis.on-failure="
                        + this.policy.id() + " (or each limit's own) until it answers, and run-time limit"
                        + " changes are read once it does. Decisions that fail meanwhile are logged once as an"
                        + " outage.");
            }
        });
        try {
            connected.get(STARTUP_WAIT_SECONDS, TimeUnit.SECONDS);
        }
        catch (ExecutionException | TimeoutException ex) {
            // Said by the warning above, when it fails; a slow connection goes on in the background.
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void destroy() {
        this.closing = true;
    }

}
