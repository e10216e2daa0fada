package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.CpuBurner;
import io.slidinglimiter.testsupport.RedisExtension;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A silent Redis on a host that other processes keep busy: the wired runner, with the default
 * {@code max-wait} of 2 s, still decides by the failure policy within the timeout plus this JVM's
 * own lateness, not after {@code max-wait}. (The busy host once made a killed Redis cost every
 * decision 2 s, and a paused one under {@code fail-closed} admitted what Redis ran after the pause.)
 */
class BusyHostTests {

    private static final Duration TIMEOUT = Duration.ofMillis(100);

    /**
     * Far above the timeout plus what a busy host makes a thread late, far below the 2 s max-wait a
     * silent Redis used to cost: the bound tells the two behaviours apart.
     */
    private static final long BOUND_MILLIS = 1_000;

    @RegisterExtension
    final RedisExtension redis = RedisExtension.perTest();

    private CpuBurner burner;

    @AfterEach
    void letTheHostRest() {
        if (this.burner != null) {
            this.burner.close();
        }
    }

    /**
     * Connects and decides once in Redis (a cold JVM's first decisions may outlast the timeout),
     * then keeps the host busy.
     */
    private void warmThenBurn(ResilientRedisBackend backend, LimitDefinition limit) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            long fallbacks = backend.status().fallbackDecisions();
            if (backend.tryAcquire(limit, "warm", 1).allowed() && backend.status().fallbackDecisions() == fallbacks) {
                break;
            }
            assertThat(System.nanoTime() - deadline).as("Redis decides within 10 s").isNegative();
            RedisServer.sleepMillis(50);
        }
        this.burner = CpuBurner.start();
    }

    /** The runner as the auto-configuration makes it by default: a 2 s max-wait. */
    private ResilientRedisBackend backend(FailurePolicy policy) {
        LettuceScriptRunner runner = new LettuceScriptRunner(this.redis.connectionFactory(), TIMEOUT);
        assertThat(runner.maxWait()).isEqualTo(LettuceScriptRunner.DEFAULT_MAX_WAIT);
        RedisBackend redis = new RedisBackend(runner, new RedisKeys("limiter"), null);
        TimeSource clock = TimeSource.monotonic();
        return new ResilientRedisBackend(redis, new LocalBackend(clock, 10_000),
                new ResilientRedisBackend.Settings(policy, Map.of(), 3, 500, 1_000), clock, (limit) -> {
                });
    }

    @Test
    void aKilledRedisIsDecidedByThePolicyWithinTheTimeout() throws Exception {
        assertRefusedWithinTheBound("killed", 10, () -> this.redis.server().kill());
    }

    @Test
    void aPausedRedisUnderFailClosedIsRefusedWithinTheTimeout() throws Exception {
        // Redis runs the paused calls after 1.5 s: a call still waiting then would be admitted, not refused.
        assertRefusedWithinTheBound("paused", 3, () -> this.redis.server().call((redis) -> redis.clientPause(1_500)));
    }

    /**
     * Under fail-closed, with the host kept busy: Redis is made silent, then a first decision and 16
     * threads' are all refused, none after the bound.
     */
    private void assertRefusedWithinTheBound(String name, int callsEach, Runnable silenceRedis) throws Exception {
        LimitDefinition limit = LimitDefinition.of(name, 1_000_000, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_CLOSED);
        warmThenBurn(backend, limit);
        silenceRedis.run();
        long start = System.nanoTime();
        assertThat(backend.tryAcquire(limit, "first", 1).allowed()).as("%s: refused", name).isFalse();
        long firstMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
        ConcurrentCalls load = ConcurrentCalls.run(16, callsEach,
                (thread, call) -> backend.tryAcquire(limit, "k", 1).allowed());
        assertThat(load.failures()).hasValue(0);
        assertThat(load.admitted()).as("%s: fail-closed", name).hasValue(0);
        assertThat(firstMillis).as("%s: the first decision", name).isLessThan(BOUND_MILLIS);
        assertThat(load.slowestMillis().get()).as("%s: the slowest decision", name).isLessThan(BOUND_MILLIS);
        backend.close();
    }

}
