package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.CapturedLog;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.RedisExtension;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis failing under load: each test stops, pauses or restarts its own redis-server. These run on
 * real time, since they measure how long callers wait.
 */
class ResilientRedisBackendTests {

    private static final Duration TIMEOUT = Duration.ofMillis(100);

    /** Scheduling slack on a loaded two-core machine: still far below any client default. */
    private static final long MARGIN_MILLIS = 900;

    @RegisterExtension
    final RedisExtension redis = RedisExtension.perTest();

    private final AtomicInteger fallbacksSeen = new AtomicInteger();

    /** The runner of the last backend made. */
    private LettuceScriptRunner runner;

    private ResilientRedisBackend backend(FailurePolicy policy, int denialCacheSize) {
        return backend(policy, denialCacheSize, TimeSource.monotonic());
    }

    /**
     * A backend whose calls wait no longer than the timeout (max-wait = timeout): these tests are
     * about Redis failing, and on a busy machine a longer max-wait would outwait their pauses.
     */
    private ResilientRedisBackend backend(FailurePolicy policy, int denialCacheSize, TimeSource clock) {
        return backend(policy, denialCacheSize, clock, TIMEOUT);
    }

    /**
     * A backend whose calls wait at most {@code timeout}: tests of what Redis decides, rather than of
     * Redis failing, give it seconds, so that a machine busy with other work causes no fallback.
     */
    private ResilientRedisBackend backend(FailurePolicy policy, int denialCacheSize, TimeSource clock,
            Duration timeout) {
        this.runner = new LettuceScriptRunner(this.redis.connectionFactory(), timeout, timeout);
        RedisBackend redis = new RedisBackend(this.runner, new RedisKeys("limiter"), null);
        return new ResilientRedisBackend(redis, new LocalBackend(clock, 10_000),
                new ResilientRedisBackend.Settings(policy, Map.of(), 3, 500, denialCacheSize), clock,
                (limit) -> this.fallbacksSeen.incrementAndGet());
    }

    @Test
    void killedUnderLoadEachPolicyAnswersInTimeAndRedisIsUsedAgainAfterARestart() throws Exception {
        LimitDefinition limit = LimitDefinition.of("api", 1_000_000, Duration.ofMinutes(1), 10);
        for (FailurePolicy policy : FailurePolicy.values()) {
            ResilientRedisBackend backend = backend(policy, 1_000);
            assertThat(backend.tryAcquire(limit, "warm-" + policy, 1).allowed()).isTrue();
            this.redis.server().stop();
            ConcurrentCalls load = ConcurrentCalls.run(16, 40, () -> backend.tryAcquire(limit, "k", 1).allowed());
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
            assertThat(backend.status().isCircuitOpen()).isTrue();
            this.redis.server().restart();
            awaitRedisDecides(backend, limit);
        }
        assertThat(this.fallbacksSeen.get()).isGreaterThanOrEqualTo(3 * 16 * 40);
    }

    @Test
    void theLocalPolicyNeverAdmitsMoreThanTheLimitWhileRedisIsDown() throws Exception {
        LimitDefinition limit = LimitDefinition.of("local-fallback", 100, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.LOCAL, 1_000);
        this.redis.server().stop();
        ConcurrentCalls load = ConcurrentCalls.run(16, 50, () -> backend.tryAcquire(limit, "k", 1).allowed());
        assertThat(load.failures()).hasValue(0);
        assertThat(load.admitted()).hasValue(100);
    }

    /**
     * Under the local policy a key keeps what Redis last said it used: one at its limit stays
     * rejected, a nearly spent one gets only what was left, instead of a whole new window each.
     */
    @Test
    void theLocalPolicyStartsFromWhatRedisLastSaid() {
        LimitDefinition limit = LimitDefinition.of("known", 5, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.LOCAL, 1_000);
        backend.tryAcquire(limit, "spent", 5);
        assertThat(backend.tryAcquire(limit, "spent", 1).allowed()).isFalse();
        backend.tryAcquire(limit, "nearly", 4);
        this.redis.server().stop();
        int spent = 0;
        int nearly = 0;
        for (int i = 0; i < 10; i++) {
            spent += backend.tryAcquire(limit, "spent", 1).allowed() ? 1 : 0;
            nearly += backend.tryAcquire(limit, "nearly", 1).allowed() ? 1 : 0;
        }
        assertThat(spent).as("a key at its limit in Redis").isZero();
        assertThat(nearly).as("a key with one permit left in Redis").isEqualTo(1);
        assertThat(backend.tryAcquire(limit, "unknown", 5).allowed()).as("a key Redis never saw").isTrue();
    }

    /**
     * The asynchronous path reactive callers use: no thread waits for Redis (nothing may run on
     * the executor meant for blocking work), exact under many calls in flight at once, and while
     * Redis is paused each call follows the policy within the timeout.
     */
    @Test
    void asynchronousDecisionsAreExactAndFollowThePolicyWithoutBlockingAThread() throws Exception {
        LimitDefinition limit = LimitDefinition.of("async", 50, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_CLOSED, 0);
        Executor refusing = (task) -> {
            throw new AssertionError("a thread was asked to wait for Redis");
        };
        List<LimitRequest> request = List.of(new LimitRequest(limit, "k", 1));
        // Connected, its scripts loaded, before 200 calls are in flight at once: on a busy host the cold
        // start alone once outlasted the timeout, the breaker opened and all 200 followed the policy.
        awaitRedisDecides(backend, LimitDefinition.of("async-warm", 1_000, Duration.ofMinutes(1), 10));
        List<CompletableFuture<Decisions>> inFlight = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            inFlight.add(backend.tryAcquireAllAsync(request, refusing).toCompletableFuture());
        }
        long admitted = 0;
        for (CompletableFuture<Decisions> decision : inFlight) {
            admitted += decision.get(5, TimeUnit.SECONDS).allowed() ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(50);
        LimitDefinition other = LimitDefinition.of("async-paused", 1_000, Duration.ofMinutes(1), 10);
        this.redis.server().call((redis) -> redis.clientPause(1_500));
        long start = System.nanoTime();
        Decisions paused = backend.tryAcquireAllAsync(List.of(new LimitRequest(other, "k", 1)), refusing)
                .toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(paused.allowed()).as("fail-closed while Redis does not answer").isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start).toMillis()).isLessThan(TIMEOUT.toMillis()
                + MARGIN_MILLIS);
        awaitRedisDecides(backend, other);
    }

    @Test
    void aPausedRedisCostsNoMoreThanTheTimeoutAndFollowsThePolicy() throws Exception {
        LimitDefinition limit = LimitDefinition.of("paused", 1_000, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_CLOSED, 1_000);
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isTrue();
        this.redis.server().call((redis) -> redis.clientPause(1_500));
        ConcurrentCalls load = ConcurrentCalls.run(16, 5, () -> backend.tryAcquire(limit, "k", 1).allowed());
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
        this.redis.server().call((redis) -> redis.scriptFlush());
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isFalse();
        this.redis.server().restart();
        awaitRedisDecides(backend, limit);
        assertThat(backend.tryAcquire(limit, "fresh", 3).allowed()).isTrue();
    }

    @Test
    void theDenialCacheSavesScriptCallsAndAdmitsExactlyWhatRedisWould() throws Exception {
        LimitDefinition limit = LimitDefinition.of("hot", 50, Duration.ofSeconds(10), 10);
        List<Integer> admitted = new ArrayList<>();
        List<Long> inRedis = new ArrayList<>();
        for (int cacheSize : new int[] { 1_000, 0 }) {
            ResilientRedisBackend backend = backend(FailurePolicy.FAIL_OPEN, cacheSize, TimeSource.monotonic(),
                    Duration.ofSeconds(5));
            this.redis.server().call((redis) -> redis.configResetstat());
            long[] batches = this.runner.batches().counts();
            ConcurrentCalls load = ConcurrentCalls.run(16, 200, () -> backend.tryAcquire(limit, "hot-key-" + cacheSize, 1).allowed());
            assertThat(load.failures()).hasValue(0);
            admitted.add(load.admitted().get());
            inRedis.add(this.runner.batches().decisionsIn(scriptCalls(), batches));
        }
        assertThat(admitted).containsExactly(50, 50);
        assertThat(inRedis.get(0)).as("decided in Redis with the cache").isLessThan(50 + 16 * 3);
        assertThat(inRedis.get(1)).as("decided in Redis without the cache").isEqualTo(16 * 200);
        assertThat(this.fallbacksSeen).hasValue(0);
    }

    /**
     * Fallback admissions of many keys are reported in one script call once Redis answers, a key whose
     * counter's name holds a value of another type among them: the script replaces what it cannot
     * read, so no key's data fails a report, and every key's admissions land.
     */
    @Test
    void aKeyWithUnreadableDataNeverHoldsBackTheOthersReports() throws Exception {
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_OPEN, 1_000);
        LimitDefinition limit = LimitDefinition.of("reported", 1_000, Duration.ofMinutes(5), 10);
        String poison = new String(new RedisKeys("limiter").counterKey("reported", "poison"), StandardCharsets.UTF_8);
        this.redis.server().call((redis) -> redis.set(poison, "not a counter"));
        try (CapturedLog dropped = new CapturedLog("io.slidinglimiter.failover.UnreportableKeys")) {
            CompletableFuture<Void> stalled = CompletableFuture.runAsync(() -> this.redis.server().stall(1.5));
            AtomicInteger victimCalls = new AtomicInteger();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                victimCalls.incrementAndGet();
                assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).isTrue();
                return this.fallbacksSeen.get() > 0;
            });
            for (int i = 0; i < 3; i++) {
                victimCalls.incrementAndGet();
                assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).as("fail-open").isTrue();
                assertThat(backend.tryAcquire(limit, "poison", 1).allowed()).as("fail-open").isTrue();
            }
            stalled.get(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                backend.tryAcquire(limit, "other", 1);
                assertThat(backend.usage(limit, "victim").used()).as("every victim call, decided or reported")
                        .isEqualTo(victimCalls.get());
            });
            assertThat(backend.usage(limit, "poison").used()).as("the 3 fail-open admitted").isEqualTo(3);
            assertThat(dropped.records).isEmpty();
        }
    }

    /**
     * A key out of permits for minutes: the refusal the denial cache answers tells Redis's wait,
     * counted from when Redis said it, not the cache's own second (a client told to retry in a second
     * would come back every second).
     */
    @Test
    void aRefusalFromTheDenialCacheTellsRedissWait() {
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_OPEN, 1_000, TimeSource.monotonic(),
                Duration.ofSeconds(5));
        LimitDefinition limit = LimitDefinition.of("waited", 1, Duration.ofMinutes(5), 10);
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isTrue();
        Decision fromRedis = backend.tryAcquire(limit, "k", 1);
        this.redis.server().call((redis) -> redis.configResetstat());
        Decision fromCache = backend.tryAcquire(limit, "k", 1);
        assertThat(scriptCalls()).as("answered by the cache").isZero();
        assertThat(fromRedis.allowed()).isFalse();
        assertThat(fromCache.allowed()).isFalse();
        assertThat(fromRedis.retryAfterMillis()).isGreaterThan(Duration.ofMinutes(4).toMillis());
        assertThat(fromCache.retryAfterMillis()).as("Redis's wait, not the cache's second")
                .isGreaterThan(Duration.ofMinutes(4).toMillis())
                .isLessThanOrEqualTo(fromRedis.retryAfterMillis());
        assertThat(fromCache.resetAfterMillis()).isGreaterThanOrEqualTo(fromCache.retryAfterMillis());
    }

    /**
     * A denial is cached under the definition Redis decided with: another window (a live change) or
     * a plan's larger quota on the same counter is decided by Redis, not answered from the cache.
     */
    @Test
    void aCachedDenialAppliesOnlyToTheDefinitionItWasMadeUnder() {
        // About the cache, not a failing Redis: a busy machine must not turn a denial into a fallback.
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_OPEN, 1_000, TimeSource.monotonic(),
                Duration.ofSeconds(5));
        LimitDefinition limit = LimitDefinition.of("redefined", 1, Duration.ofMinutes(1), 10);
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isFalse();
        this.redis.server().call((redis) -> redis.configResetstat());
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).as("from the cache").isFalse();
        assertThat(scriptCalls()).isZero();
        assertThat(backend.tryAcquire(limit.withLimit(2), "k", 1).allowed()).as("a plan of 2").isTrue();
        assertThat(backend.tryAcquire(LimitDefinition.of("redefined", 1, Duration.ofMinutes(2), 12), "k", 1).allowed())
                .as("another window: fresh counters").isTrue();
        assertThat(scriptCalls()).isEqualTo(2);
    }

    /**
     * The load: 16 (then 64) callers on random keys of a limit never reached, a local
     * redis-server, the default timeout. Counted, not timed: the permits Redis counted (decisions it
     * made, however many each script call carried) against those asked; a busy JVM must not pass
     * for a failing Redis.
     */
    @Test
    void underLoadAHealthyRedisDecidesNearlyEveryDecision() throws Exception {
        LimitDefinition limit = LimitDefinition.of("never-reached", 1_000_000_000L, Duration.ofMinutes(1), 10);
        for (int callers : new int[] { 16, 64 }) {
            LettuceScriptRunner runner = new LettuceScriptRunner(this.redis.connectionFactory(), TIMEOUT);
            runner.connect().get();
            ResilientRedisBackend backend = new ResilientRedisBackend(new RedisBackend(runner, new RedisKeys("limiter"),
                    null), new LocalBackend(TimeSource.monotonic(), 10_000), new ResilientRedisBackend.Settings(
                            FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 10_000), TimeSource.monotonic(),
                    (ignored) -> this.fallbacksSeen.incrementAndGet());
            long countedBefore = this.redis.server().countedPermits("limiter:*:never-reached");
            int each = 32_000 / callers;
            ConcurrentCalls load = ConcurrentCalls.run(callers, each,
                    (thread, i) -> backend.tryAcquire(limit, "user-" + (thread * 1_000_003L + i * 7919L) % 100_000, 1).allowed());
            long decisions = (long) callers * each;
            long inRedis = this.redis.server().countedPermits("limiter:*:never-reached") - countedBefore;
            assertThat(load.failures()).hasValue(0);
            assertThat(inRedis).as("%d callers: %d of %d decisions counted in Redis (%d slow, %d fell back)", callers,
                    inRedis, decisions, backend.status().slowDecisions(), backend.status().fallbackDecisions())
                    .isGreaterThanOrEqualTo(decisions * 999 / 1000);
            assertThat(backend.status().isFailing()).isFalse();
            backend.close();
        }
    }

    /**
     * A stalled Redis (DEBUG SLEEP) runs the scripts it queued when it wakes: under fail-closed every
     * caller got 429, so none of those decisions may count, or the key stays locked for its window.
     */
    @Test
    void decisionsThatTimedOutDoNotCountWhenAStalledRedisRunsThemLater() throws Exception {
        LimitDefinition limit = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_CLOSED, 1_000);
        assertThat(backend.tryAcquire(limit, "warm", 1).allowed()).isTrue();
        Thread sleeper = new Thread(() -> this.redis.server().stall(1.5));
        sleeper.start();
        letTheStallBegin();
        ConcurrentCalls stalled = ConcurrentCalls.run(8, 1, () -> backend.tryAcquire(limit, "alice", 1).allowed());
        assertThat(stalled.admitted()).as("fail-closed during the stall").hasValue(0);
        sleeper.join();
        Decision afterwards = new RedisBackend(new LettuceScriptRunner(this.redis.connectionFactory(), Duration.ofSeconds(5)),
                new RedisKeys("limiter"), null).peek(limit, "alice");
        assertThat(afterwards.remaining()).as("permits the late scripts took").isEqualTo(5);
    }

    /** The first decision knows no Redis clock to send a deadline in: its late admission is given back. */
    @Test
    void aLateAdmissionWithoutADeadlineIsGivenBack() throws Exception {
        LimitDefinition limit = LimitDefinition.of("first", 5, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = new LettuceScriptRunner(this.redis.connectionFactory(), TIMEOUT, TIMEOUT);
        // Connected before the stall (opening a connection waits up to max-wait): the decision is what times out.
        runner.connect().get();
        RedisBackend redis = new RedisBackend(runner, new RedisKeys("limiter"), null);
        Thread sleeper = new Thread(() -> this.redis.server().stall(1.0));
        sleeper.start();
        letTheStallBegin();
        try {
            redis.tryAcquire(limit, "bob", 2);
            throw new AssertionError("a stalled Redis answered in time");
        }
        catch (RedisTimeoutException expected) {
            sleeper.join();
        }
        RedisBackend reader = new RedisBackend(new LettuceScriptRunner(this.redis.connectionFactory(), Duration.ofSeconds(5)),
                new RedisKeys("limiter"), null);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> reader.peek(limit, "bob").remaining() == 5);
    }

    /**
     * Another instance's denial cache must not outlive a reset: the reset clears Redis and this
     * instance's cache, and the other answers from its cache for at most a second (manual clock).
     */
    @Test
    void aResetOnOneInstanceReachesTheOthersCachedDenialWithinASecond() {
        LimitDefinition limit = LimitDefinition.of("reset", 2, Duration.ofMinutes(1), 10);
        io.slidinglimiter.core.ManualTimeSource clock = new io.slidinglimiter.core.ManualTimeSource(1_000_000);
        ResilientRedisBackend first = backend(FailurePolicy.FAIL_OPEN, 1_000, clock);
        ResilientRedisBackend second = backend(FailurePolicy.FAIL_OPEN, 1_000, clock);
        second.tryAcquire(limit, "carol", 2);
        assertThat(second.tryAcquire(limit, "carol", 1).allowed()).as("denied, and cached").isFalse();
        first.reset(limit, "carol");
        assertThat(first.tryAcquire(limit, "carol", 1).allowed()).isTrue();
        clock.advanceMillis(ResilientRedisBackend.DENIAL_CACHE_MILLIS);
        assertThat(second.tryAcquire(limit, "carol", 1).allowed()).as("a second later").isTrue();
    }

    /**
     * Under maxmemory, admissions fail and rejections (which write nothing) succeed: one outage,
     * said once, not a warning and a recovery for every other decision.
     */
    @Test
    void aPartialFailureIsLoggedOnceWhenItStartsAndOnceWhenItEnds() throws Exception {
        LimitDefinition limit = LimitDefinition.of("partial", 3, Duration.ofMinutes(1), 10);
        ResilientRedisBackend backend = backend(FailurePolicy.FAIL_OPEN, 0);
        backend.tryAcquire(limit, "full", 3);
        List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger("io.slidinglimiter.failover.Outage");
        java.util.logging.Handler handler = new java.util.logging.Handler() {

            @Override
            public void publish(java.util.logging.LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }

        };
        logger.addHandler(handler);
        try {
            this.redis.server().call((redis) -> redis.configSet("maxmemory-policy", "noeviction"));
            this.redis.server().call((redis) -> redis.configSet("maxmemory", "1"));
            for (int call = 0; call < 300; call++) {
                backend.tryAcquire(limit, (call % 2 == 0) ? "full" : "new-" + call, 1);
                RedisServer.sleepMillis(2);
            }
            assertThat(backend.status().isFailing()).isTrue();
            this.redis.server().call((redis) -> redis.configSet("maxmemory", "0"));
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        backend.tryAcquire(limit, "after", 1);
                        return !backend.status().isFailing();
                    });
        }
        finally {
            logger.removeHandler(handler);
        }
        assertThat(records).extracting(java.util.logging.LogRecord::getLevel)
                .containsExactly(java.util.logging.Level.WARNING, java.util.logging.Level.INFO);
        assertThat(records.get(0).getMessage()).contains("OOM");
    }

    /** Without a single decision: the probe finds Redis again soon after it is back. */
    @Test
    void anOutageEndsWithoutTrafficSoonAfterRedisIsBack() {
        LimitDefinition limit = LimitDefinition.of("idle", 5, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = new LettuceScriptRunner(this.redis.connectionFactory(), TIMEOUT, TIMEOUT);
        ResilientRedisBackend backend = new ResilientRedisBackend(new RedisBackend(runner, new RedisKeys("limiter"),
                null), new LocalBackend(TimeSource.monotonic(), 10_000), new ResilientRedisBackend.Settings(
                        FailurePolicy.FAIL_OPEN, Map.of(), 3, 60_000, 1_000), TimeSource.monotonic(),
                (ignored) -> { }, () -> {
                    runner.reconnectIfClosed();
                    runner.isScriptLoaded();
                    return true;
                });
        backend.tryAcquire(limit, "k", 1);
        this.redis.server().stop();
        for (int call = 0; call < 5; call++) {
            backend.tryAcquire(limit, "k", 1);
        }
        assertThat(backend.status().isFailing()).isTrue();
        assertThat(backend.status().isCircuitOpen()).as("open for a minute").isTrue();
        this.redis.server().restart();
        long back = System.nanoTime();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !backend.status().isFailing());
        assertThat(backend.status().isCircuitOpen()).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - back)).isLessThan(Duration.ofSeconds(5));
        backend.close();
    }

    /** Gives the DEBUG SLEEP, sent from another thread, the time to reach the server first. */
    private static void letTheStallBegin() {
        RedisServer.sleepMillis(200);
    }

    private long scriptCalls() {
        return this.redis.server().scriptCalls();
    }

    /** Polls (real time: the breaker's pause has to pass) until Redis decides again; at most 10 s. */
    private void awaitRedisDecides(ResilientRedisBackend backend, LimitDefinition limit) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long before = backend.status().fallbackDecisions();
        while (System.nanoTime() < deadline) {
            backend.tryAcquire(limit, "probe", 1);
            if (!backend.status().isCircuitOpen() && backend.status().fallbackDecisions() == before) {
                return;
            }
            before = backend.status().fallbackDecisions();
            RedisServer.sleepMillis(50);
        }
        throw new AssertionError("Redis was not used again within 10 s of coming back");
    }

}
