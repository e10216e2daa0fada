package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * SPEC §6, "Nothing admitted is lost": what a {@code fail-open} or {@code local} fallback admitted
 * while Redis did not answer is counted in Redis once it answers, and charges settle to exactly what
 * they say. Each test runs its own redis-server and pauses it ({@code CLIENT PAUSE}).
 */
class NothingAdmittedIsLostTests {

    @RegisterExtension
    final RedisExtension redis = RedisExtension.perTest();

    private final List<ResilientRedisBackend> backends = new ArrayList<>();

    @AfterEach
    void closeBackends() {
        this.backends.forEach(ResilientRedisBackend::close);
    }

    /**
     * An instance as the starter wires it on a standalone Redis (its own connection, a probe), but
     * waiting no longer than the timeout: a pause must make its calls fall back even on a busy machine,
     * where the default max-wait would outwait it.
     */
    private ResilientRedisBackend instance(FailurePolicy policy) throws Exception {
        LettuceScriptRunner runner = new LettuceScriptRunner(this.redis.connectionFactory(), Duration.ofMillis(100),
                Duration.ofMillis(100));
        runner.connect().get();
        ResilientRedisBackend backend = new ResilientRedisBackend(new RedisBackend(runner, new RedisKeys("limiter"),
                null), new LocalBackend(TimeSource.monotonic(), 1_000), new ResilientRedisBackend.Settings(policy,
                        Map.of(), 3, 1_000, 1_000), TimeSource.monotonic(), (limit) -> { }, () -> {
                            runner.reconnectIfClosed();
                            runner.isScriptLoaded();
                            return true;
                        });
        this.backends.add(backend);
        return backend;
    }

    /** Reads Redis's count without waiting on the instances' connections. */
    private long usedInRedis(LimitDefinition limit, String key) {
        try (LettuceScriptRunner runner = new LettuceScriptRunner(this.redis.connectionFactory(), Duration.ofSeconds(5))) {
            return new RedisBackend(runner, new RedisKeys("limiter"), null).usage(limit, key).used();
        }
    }

    @Test
    void whatFallbacksAdmittedDuringAStallIsCountedInRedisAndTheWindowAdmitsThatMuchLess() throws Exception {
        for (FailurePolicy policy : List.of(FailurePolicy.FAIL_OPEN, FailurePolicy.LOCAL)) {
            LimitDefinition limit = LimitDefinition.of("stalled-" + policy.id(), 10, Duration.ofMinutes(1), 10);
            ResilientRedisBackend backend = instance(policy);
            for (int i = 0; i < 3; i++) {
                assertThat(backend.tryAcquire(limit, "k", 1).allowed()).as("%s: before the stall", policy).isTrue();
            }
            this.redis.server().call((redis) -> redis.clientPause(1_500));
            long fallbacks = backend.status().fallbackDecisions();
            for (int i = 0; i < 4; i++) {
                assertThat(backend.tryAcquire(limit, "k", 1).allowed()).as("%s: during the stall", policy).isTrue();
            }
            assertThat(backend.status().fallbackDecisions() - fallbacks).as("%s: decided without Redis", policy).isEqualTo(4);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(usedInRedis(limit, "k"))
                    .as("%s: Redis's count once it answers: 3 before, 4 during", policy).isEqualTo(7));
            // Counted as reported once the report's reply was read, which may come after the peek's.
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(backend.status().reportedFallbackPermits())
                    .isGreaterThanOrEqualTo(4));
            // The breaker the stall opened closes once a call of another key proves Redis back; the reports can
            // come in before that on a busy host.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                backend.tryAcquire(limit, "another-key", 1);
                assertThat(backend.status().isCircuitOpen()).as("%s: the breaker", policy).isFalse();
            });
            List<Boolean> after = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                after.add(backend.tryAcquire(limit, "k", 1).allowed());
            }
            assertThat(after).as("%s: the window's last permits", policy).containsExactly(true, true, true, false);
            assertThat(usedInRedis(limit, "k")).isEqualTo(10);
        }
    }

    /**
     * The token budget of the trial, on two instances under more callers than cores: each
     * call reserves 200 tokens, then is settled to what it used (1 to 400). Redis ends with exactly
     * the tokens the admitted calls used, and never more than SPEC §3's bound: the budget plus what
     * charges took beyond their reservation.
     */
    @Test
    void aTokenBudgetOnTwoInstancesSettlesToExactlyWhatTheCallsUsedWithinItsBound() throws Exception {
        LimitDefinition tokens = LimitDefinition.of("tokens", 2_000, Duration.ofMinutes(1), 10);
        long seed = System.nanoTime();
        List<RateLimiters> instances = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            LimitRegistry registry = new LimitRegistry();
            registry.register(tokens);
            instances.add(new RateLimiters(registry, instance(FailurePolicy.FAIL_OPEN)));
        }
        AtomicLong charged = new AtomicLong();
        AtomicLong beyondReservation = new AtomicLong();
        AtomicLong admitted = new AtomicLong();
        ConcurrentCalls calls = ConcurrentCalls.run(16, 40, (thread, i) -> {
            RateLimiters limiter = instances.get(thread % 2);
            Random random = new Random(seed + thread * 1_000L + i);
            List<LimitRequest> asked = List.of(new LimitRequest(limiter.definition("tokens"), "alice", 200));
            Decisions taken = limiter.tryAcquireAllToSettle(asked);
            if (!taken.allowed()) {
                return taken.get(0).allowed();
            }
            long used = 1 + random.nextInt(400);
            limiter.settle(asked, taken, new long[] { used });
            admitted.incrementAndGet();
            charged.addAndGet(used);
            beyondReservation.addAndGet(Math.max(0, used - 200));
            return taken.get(0).allowed();
        });
        assertThat(calls.failures()).as("seed %d", seed).hasValue(0);
        assertThat(admitted.get()).as("seed %d: calls admitted", seed).isPositive();
        long inRedis = usedInRedis(tokens, "alice");
        assertThat(inRedis).as("seed %d: Redis's count, the tokens the %d admitted calls used", seed, admitted.get())
                .isEqualTo(charged.get());
        assertThat(inRedis).as("seed %d: the bound", seed).isLessThanOrEqualTo(2_000 + beyondReservation.get());
    }

}
