package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.ConcurrentCalls;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis failing under load: each test stops, pauses or restarts its own redis-server. These run on
 * real time, since they measure how long callers wait.
 */
class ResilientRedisBackendTest {

    private static final Duration TIMEOUT = Duration.ofMillis(100);

    /** Scheduling slack on a loaded two-core machine: still far below any client default. */
    private static final long MARGIN_MILLIS = 900;

    private RedisServer server;

    private LettuceConnectionFactory connectionFactory;

    private final AtomicInteger fallbacksSeen = new AtomicInteger();

    @BeforeEach
    void startRedis() {
        this.server = RedisServer.start();
        this.connectionFactory = RedisBackendTest.connectionFactory(this.server.port());
    }

    @AfterEach
    void stopRedis() {
        this.connectionFactory.destroy();
        this.server.close();
    }

    private ResilientRedisBackend backend(FailurePolicy policy, int denialCacheSize) {
        RedisBackend redis = new RedisBackend(new LettuceScriptRunner(this.connectionFactory, TIMEOUT),
                new RedisKeys("limiter"), null);
        return new ResilientRedisBackend(redis, new LocalBackend(TimeSource.monotonic(), 10_000),
                new ResilientRedisBackend.Settings(policy, Map.of(), 3, 500, denialCacheSize), TimeSource.monotonic(),
                (limit) -> this.fallbacksSeen.incrementAndGet());
    }

    @Test
    void killedUnderLoadEachPolicyAnswersInTimeAndRedisIsUsedAgainAfterARestart() throws Exception {
        LimitDefinition limit = LimitDefinition.of("api", 1_000_000, Duration.ofMinutes(1), 10);
        for (FailurePolicy policy : FailurePolicy.values()) {
            ResilientRedisBackend backend = backend(policy, 1_000);
            assertThat(backend.tryAcquire(limit, "warm-" + policy, 1).allowed()).isTrue();
            this.server.stop();
            ConcurrentCalls load = ConcurrentCalls.run(16, 40, () -> backend.tryAcquire(limit, "k", 1));
            assertThat(load.failures()).as(policy + ": exceptions").hasValue(0);
            assertThat(load.slowestMillis().get()).as(policy + ": slowest call")
                    .isLessThan(TIMEOUT.toMillis() + MARGIN_MILLIS);
            if (policy == FailurePolicy.FAIL_CLOSED) {
                assertThat(load.admitted()).hasValue(0);
                Decision rejected = backend.tryAcquire(limit, "k", 1);
                assertThat(rejected.allowed()).isFalse();
                assertThat(rejected.retryAfterMillis()).isPositive();
            }
            else {
                assertThat(load.admitted()).as(policy.toString()).hasValue(16 * 40);
            }
            assertThat(backend.isCircuitOpen()).isTrue();
            this.server.restart();
            awaitRedisDecides(backend, limit);
        }
        assertThat(this.fallbacksSeen.get()).isGreaterThanOrEqualTo(3 * 16 * 40);
    }

    @Test
    void theLocalPolicyNeverAdmitsMoreThanTheLimitWhileRedisIsDown() throws Exception {
        LimitDefinition limit = LimitDefinition.of("local-fallback", 100, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.LOCAL, 1_000);
        this.server.stop();
        ConcurrentCalls load = ConcurrentCalls.run(16, 50, () -> backend.tryAcquire(limit, "k", 1));
        assertThat(load.failures()).hasValue(0);
        assertThat(load.admitted()).hasValue(100);
    }

    @Test
    void aPausedRedisCostsNoMoreThanTheTimeoutAndFollowsThePolicy() throws Exception {
        LimitDefinition limit = LimitDefinition.of("paused", 1_000, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_CLOSED, 1_000);
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isTrue();
        this.server.call((redis) -> redis.clientPause(1_500));
        ConcurrentCalls load = ConcurrentCalls.run(16, 5, () -> backend.tryAcquire(limit, "k", 1));
        assertThat(load.failures()).hasValue(0);
        assertThat(load.admitted()).hasValue(0);
        assertThat(load.slowestMillis().get()).isLessThan(TIMEOUT.toMillis() + MARGIN_MILLIS);
        awaitRedisDecides(backend, limit);
    }

    @Test
    void afterAFlushAndARestartEmptyDecisionsSucceedAndCountsStartAgain() {
        LimitDefinition limit = LimitDefinition.of("restarted", 3, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_CLOSED, 1_000);
        backend.tryAcquire(limit, "k", 3);
        this.server.call((redis) -> redis.scriptFlush());
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isFalse();
        this.server.restart();
        awaitRedisDecides(backend, limit);
        assertThat(backend.tryAcquire(limit, "fresh", 3).allowed()).isTrue();
    }

    @Test
    void theDenialCacheSavesScriptCallsAndAdmitsExactlyWhatRedisWould() throws Exception {
        LimitDefinition limit = LimitDefinition.of("hot", 50, Duration.ofSeconds(10), 10);
        List<Integer> admitted = new ArrayList<>();
        List<Long> scriptCalls = new ArrayList<>();
        for (int cacheSize : new int[] { 1_000, 0 }) {
            ResilientRedisBackend backend = backend(FailurePolicy.FAIL_OPEN, cacheSize);
            this.server.call((redis) -> redis.configResetstat());
            ConcurrentCalls load = ConcurrentCalls.run(16, 200, () -> backend.tryAcquire(limit, "hot-key-" + cacheSize, 1));
            assertThat(load.failures()).hasValue(0);
            admitted.add(load.admitted().get());
            scriptCalls.add(scriptCalls());
        }
        assertThat(admitted).containsExactly(50, 50);
        assertThat(scriptCalls.get(0)).as("with the cache").isLessThan(50 + 16 * 3);
        assertThat(scriptCalls.get(1)).as("without the cache").isEqualTo(16 * 200);
        assertThat(this.fallbacksSeen).hasValue(0);
    }

    private long scriptCalls() {
        String stats = this.server.call((redis) -> redis.info("commandstats"));
        long calls = 0;
        for (String line : stats.lines().toList()) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String field = line.substring(line.indexOf("calls=") + 6);
                calls += Long.parseLong(field.substring(0, field.indexOf(',')));
            }
        }
        return calls;
    }

    /** Polls (real time: the breaker's pause has to pass) until Redis decides again; at most 10 s. */
    private void awaitRedisDecides(ResilientRedisBackend backend, LimitDefinition limit) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long before = backend.fallbackDecisions();
        while (System.nanoTime() < deadline) {
            backend.tryAcquire(limit, "probe", 1);
            if (!backend.isCircuitOpen() && backend.fallbackDecisions() == before) {
                return;
            }
            before = backend.fallbackDecisions();
            RedisServer.sleepMillis(50);
        }
        throw new AssertionError("Redis was not used again within 10 s of coming back");
    }

}
