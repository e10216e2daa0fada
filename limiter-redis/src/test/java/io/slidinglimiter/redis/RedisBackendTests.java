package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend against a real redis-server that the test starts on a port of its own.
 */
class RedisBackendTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static RedisBackend backend;

    @BeforeAll
    static void createBackend() {
        backend = new RedisBackend(new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5)),
                new RedisKeys("limiter"), null);
    }

    static LettuceConnectionFactory connectionFactory(int port) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** Seeded schedules at fixed times: every decision equals the local backend's. */
    @Test
    void decidesLikeTheLocalBackendForBothAlgorithms() {
        replayAgainstTheLocalBackend("", 150, false);
    }

    /**
     * Seeded schedules of calls charged after they ran, some below their cost, some above it and
     * past the limit: every decision, and what every key holds after each settle, equals the local
     * backend's.
     */
    @Test
    void settlesLikeTheLocalBackendForBothAlgorithms() {
        replayAgainstTheLocalBackend("settled-", 120, true);
    }

    private static void replayAgainstTheLocalBackend(String prefix, int steps, boolean settle) {
        for (long seed = 0; seed < 40; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            long start = 1_700_000_000_000L + random.nextLong(0, 1_000_000);
            ManualTimeSource time = new ManualTimeSource(start);
            LocalBackend local = new LocalBackend(time, 1_000);
            int slots = random.nextInt(1, 11);
            long slotMillis = random.nextLong(1, 40);
            LimitDefinition counter = LimitDefinition.of(prefix + "counter-" + seed, random.nextLong(1, 20),
                    Duration.ofMillis(slots * slotMillis), slots);
            LimitDefinition log = new LimitDefinition(prefix + "log-" + seed, random.nextLong(1, 20),
                    Duration.ofMillis(random.nextLong(1, 300)), 1, Algorithm.SLIDING_LOG);
            for (int step = 0; step < steps; step++) {
                time.advanceMillis(random.nextInt(10) < 7 ? random.nextLong(0, 20) : random.nextLong(0, 400));
                LimitDefinition limit = random.nextBoolean() ? counter : log;
                String key = "k" + random.nextInt(3);
                long cost = random.nextLong(1, limit.limit() + 1);
                List<LimitRequest> requests = List.of(new LimitRequest(limit, key, cost));
                String described = String.format("seed %d step %d: %s %s cost %d", seed, step, limit.name(), key, cost);
                Decisions expected = local.tryAcquireAll(requests);
                Decisions actual = backend.tryAcquireAllAt(time.currentTimeMillis(), requests);
                assertThat(actual.decisions()).as(described).isEqualTo(expected.decisions());
                if (!settle || !expected.allowed()) {
                    continue;
                }
                time.advanceMillis(random.nextBoolean() ? 0 : random.nextLong(0, 50));
                long[] charge = { random.nextLong(0, 2 * limit.limit() + 1) };
                local.settle(requests, expected, charge);
                backend.settleAt(time.currentTimeMillis(), requests, actual, charge);
                assertThat(backend.peekAt(time.currentTimeMillis(), limit, key)).as(described + " settled to " + charge[0])
                        .isEqualTo(local.peek(limit, key));
            }
        }
    }

    @Test
    void aSettleThatChangesNothingCostsNoRoundTrip() {
        LimitDefinition limit = LimitDefinition.of("exact-charge", 10, Duration.ofMinutes(1), 10);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, "k", 3));
        Decisions taken = backend.tryAcquireAll(requests);
        long before = redis.server().scriptCalls();
        backend.settle(requests, taken, new long[] { 3 });
        assertThat(redis.server().scriptCalls()).isEqualTo(before);
        backend.settle(requests, taken, new long[] { 1 });
        assertThat(redis.server().scriptCalls()).isEqualTo(before + 1);
        assertThat(backend.peek(limit, "k").remaining()).isEqualTo(9);
        backend.settle(requests, taken, new long[] { 25 });
        assertThat(backend.peek(limit, "k").remaining()).as("past the limit").isZero();
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isFalse();
    }

    /**
     * The common acquisition reads the key's hash once when the key's last call was in the
     * sub-window before (the count leaving the window comes with the header), and once more only for
     * the slots between; each decision still equals the local backend's.
     */
    @Test
    void aCallInTheNextSubWindowReadsTheCounterOnce() {
        LimitDefinition limit = LimitDefinition.of("next-sub-window", 100, Duration.ofMinutes(1), 10);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, "k", 1));
        ManualTimeSource time = new ManualTimeSource(1_700_000_004_000L);
        LocalBackend local = new LocalBackend(time, 1_000);
        long[] apart = { 0, 500, 6_000, 6_000, 6_000, 18_000, 6_000, 1_000, 30_000, 61_000, 6_000 };
        long[] reads = { 1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1 };
        for (int i = 0; i < apart.length; i++) {
            time.advanceMillis(apart[i]);
            long before = redis.server().commandCalls("hmget");
            Decisions actual = backend.tryAcquireAllAt(time.currentTimeMillis(), requests);
            assertThat(actual.decisions()).as("call %d", i).isEqualTo(local.tryAcquireAll(requests).decisions());
            assertThat(redis.server().commandCalls("hmget") - before)
                    .as("HMGETs of call %d, %d ms after the one before", i, apart[i]).isEqualTo(reads[i]);
        }
    }

    /**
     * So does every other decision of a sliding window counter (decide.lua): a rejection, which the
     * common path hands on, and a call of two limits, each read once in the sub-window after their
     * last call's, and each equal to the local backend's.
     */
    @Test
    void aRejectionOrTwoLimitsInTheNextSubWindowReadEachCounterOnce() {
        LimitDefinition small = LimitDefinition.of("next-sub-window-small", 2, Duration.ofMinutes(1), 10);
        LimitDefinition large = LimitDefinition.of("next-sub-window-large", 100, Duration.ofMinutes(1), 10);
        List<LimitRequest> one = List.of(new LimitRequest(small, "k", 1));
        List<LimitRequest> two = List.of(new LimitRequest(large, "k", 1), new LimitRequest(large, "j", 1));
        ManualTimeSource time = new ManualTimeSource(1_700_000_004_000L);
        LocalBackend local = new LocalBackend(time, 1_000);
        for (int i = 0; i < 2; i++) {
            assertThat(backend.tryAcquireAllAt(time.currentTimeMillis(), one).allowed()).isTrue();
            assertThat(local.tryAcquireAll(one).allowed()).isTrue();
        }
        assertThat(backend.tryAcquireAllAt(time.currentTimeMillis(), two).decisions())
                .isEqualTo(local.tryAcquireAll(two).decisions());
        time.advanceMillis(6_000);
        long before = redis.server().commandCalls("hmget");
        Decisions rejected = backend.tryAcquireAllAt(time.currentTimeMillis(), one);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.decisions()).isEqualTo(local.tryAcquireAll(one).decisions());
        assertThat(redis.server().commandCalls("hmget") - before).as("the common path's read, then decide.lua's")
                .isEqualTo(2);
        before = redis.server().commandCalls("hmget");
        assertThat(backend.tryAcquireAllAt(time.currentTimeMillis(), two).decisions())
                .isEqualTo(local.tryAcquireAll(two).decisions());
        assertThat(redis.server().commandCalls("hmget") - before).as("one read of each limit's counter").isEqualTo(2);
    }

    @Test
    void severalLimitsAreAllOrNothingInOneScript() {
        LimitDefinition perUser = LimitDefinition.of("per-user", 5, Duration.ofMinutes(1), 10);
        LimitDefinition global = LimitDefinition.of("global", 2, Duration.ofMinutes(1), 10);
        assertThat(backend.tryAcquireAll(List.of(new LimitRequest(perUser, "alice", 1), new LimitRequest(global, "all", 1))).allowed()).isTrue();
        assertThat(backend.tryAcquireAll(List.of(new LimitRequest(perUser, "bob", 1), new LimitRequest(global, "all", 1))).allowed()).isTrue();
        Decisions denied = backend.tryAcquireAll(List.of(new LimitRequest(perUser, "carol", 1), new LimitRequest(global, "all", 1)));
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.get(0).allowed()).as("per-user alone would admit").isTrue();
        assertThat(backend.peek(perUser, "carol").remaining()).isEqualTo(5);
    }

    @Test
    void sixteenThreadsOnOneKeyAdmitExactlyTheLimit() throws Exception {
        LimitDefinition limit = LimitDefinition.of("hammered", 1_000, Duration.ofMinutes(1), 10);
        ConcurrentCalls calls = ConcurrentCalls.run(16, 150, () -> backend.tryAcquire(limit, "one-key", 1).allowed());
        assertThat(calls.admitted()).hasValue(1_000);
        assertThat(calls.failures()).hasValue(0);
    }

    @Test
    void everyKeyExpiresJustAfterItsWindow() {
        LimitDefinition counter = LimitDefinition.of("counter", 5, Duration.ofSeconds(30), 10);
        LimitDefinition log = new LimitDefinition("log", 5, Duration.ofSeconds(30), 1, Algorithm.SLIDING_LOG);
        backend.tryAcquire(counter, "alice", 1);
        backend.tryAcquire(log, "alice", 2);
        for (String key : redis.server().<List<String>>call((redis) -> redis.keys("*"))) {
            Long ttl = redis.server().<Long>call((redis) -> redis.pttl(key));
            assertThat(ttl).as(key).isBetween(29_000L, 31_000L);
        }
        assertThat(redis.server().<Long>call((redis) -> redis.dbsize())).isEqualTo(2L);
    }

    /** Redis's own clock expires the keys: this waits on the server's time, at most a few seconds. */
    @Test
    void afterTheWindowPassesNothingIsLeftBehind() throws InterruptedException {
        LimitDefinition counter = LimitDefinition.of("short", 5, Duration.ofMillis(200), 4);
        LimitDefinition log = new LimitDefinition("short-log", 5, Duration.ofMillis(200), 1, Algorithm.SLIDING_LOG);
        backend.tryAcquire(counter, "alice", 1);
        backend.tryAcquire(log, "alice", 1);
        assertThat(redis.server().<Long>call((redis) -> redis.dbsize())).isEqualTo(2L);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (redis.server().<Long>call((redis) -> redis.dbsize()) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(redis.server().<Long>call((redis) -> redis.dbsize())).isZero();
    }

    @Test
    void keysStayInsideTheirHashTagAndTheNamespace() {
        LimitDefinition limit = LimitDefinition.of("api", 5, Duration.ofMinutes(1), 10);
        List<String> userKeys = List.of("a}b", "{x}", "p:q}:other", "ключ-鍵-🔑", "\\)", "z".repeat(10_000));
        for (String key : userKeys) {
            assertThat(backend.tryAcquire(limit, key, 1).remaining()).isEqualTo(4);
        }
        List<String> stored = redis.server().<List<String>>call((redis) -> redis.keys("*"));
        assertThat(stored).hasSize(userKeys.size()).allSatisfy((key) -> {
            assertThat(key).startsWith("limiter:{").endsWith("}:api");
            String tag = key.substring("limiter:{".length(), key.length() - "}:api".length());
            assertThat(tag).doesNotContain("{", "}");
        });
        assertThat(stored).contains("limiter:{a\\)b}:api", "limiter:{\\(x\\)}:api", "limiter:{\\\\)}:api");
        assertThat(stored).noneMatch((key) -> key.length() > 100 && !key.contains("sha256:"));
    }

    @Test
    void aFlushedScriptCacheIsReloadedOnTheNextDecision() {
        LimitDefinition limit = LimitDefinition.of("flushed", 3, Duration.ofMinutes(1), 10);
        backend.tryAcquire(limit, "alice", 1);
        redis.server().call((redis) -> redis.scriptFlush());
        assertThat(backend.tryAcquire(limit, "alice", 1).remaining()).isEqualTo(1);
        List<Boolean> cached = redis.server().<List<Boolean>>call((redis) -> redis.scriptExists(RedisScripts.DECIDE.sha1()));
        assertThat(cached).containsExactly(true);
    }

    @Test
    void aRefundGivesBackExactlyWhatWasTaken() {
        LimitDefinition counter = LimitDefinition.of("counter", 5, Duration.ofMinutes(1), 10);
        LimitDefinition log = new LimitDefinition("log", 5, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG);
        backend.tryAcquire(counter, "alice", 1);
        backend.tryAcquire(log, "alice", 1);
        List<LimitRequest> requests = List.of(new LimitRequest(counter, "alice", 3), new LimitRequest(log, "alice", 2));
        Decisions taken = backend.tryAcquireAll(requests);
        assertThat(taken.allowed()).isTrue();
        backend.refund(requests, taken);
        assertThat(backend.peek(counter, "alice").remaining()).isEqualTo(4);
        assertThat(backend.peek(log, "alice").remaining()).isEqualTo(4);
    }

    /**
     * A refund of permits admitted before a reset gives back nothing of what was admitted after it in
     * the same sub-window (it once took them from those), as the local backend does.
     */
    @Test
    void aRefundOfAnAdmissionBeforeAResetTakesNothingAdmittedAfterIt() {
        LimitDefinition limit = LimitDefinition.of("reset-then-refund", 10, Duration.ofSeconds(10), 10);
        List<LimitRequest> three = List.of(new LimitRequest(limit, "k", 3));
        List<LimitRequest> four = List.of(new LimitRequest(limit, "k", 4));
        long t = 1_700_000_000_000L;
        Decisions before = backend.tryAcquireAllAt(t, three);
        backend.reset(limit, "k");
        Decisions after = backend.tryAcquireAllAt(t + 5, four);
        backend.refundAt(t + 7, three, before);
        assertThat(backend.peekAt(t + 7, limit, "k").remaining()).as("the four after the reset stay").isEqualTo(6);
        backend.refundAt(t + 8, four, after);
        assertThat(backend.peekAt(t + 8, limit, "k").remaining()).isEqualTo(10);
    }

    /**
     * Never over at a reset, whatever the clocks say: with every call at one fixed millisecond (the
     * test's time; Redis's own clock still numbers the generations), a refund and a settle of
     * decisions made before a reset give nothing back, for both algorithms; decisions after it are
     * still given back.
     */
    @Test
    void aRefundOrSettleOfADecisionBeforeAResetInItsMillisecondGivesNothingBack() {
        long t = 1_700_000_000_000L;
        for (LimitDefinition limit : List.of(LimitDefinition.of("same-ms-counter", 5, Duration.ofSeconds(10), 10),
                new LimitDefinition("same-ms-log", 5, Duration.ofSeconds(10), 1, Algorithm.SLIDING_LOG))) {
            List<LimitRequest> one = List.of(new LimitRequest(limit, "k", 1));
            List<LimitRequest> two = List.of(new LimitRequest(limit, "k", 2));
            Decisions before = backend.tryAcquireAllAt(t, one);
            Decisions settledBefore = backend.tryAcquireAllAt(t, two);
            assertThat(before.generation()).as("the decision's generation").isPositive();
            backend.reset(limit, "k");
            Decisions after = null;
            for (int i = 0; i < 5; i++) {
                after = backend.tryAcquireAllAt(t, one);
                assertThat(after.allowed()).as("%s: admission %d after the reset", limit.name(), i + 1).isTrue();
            }
            backend.refundAt(t, one, before);
            backend.settleAt(t, two, settledBefore, new long[] { 0 });
            assertThat(backend.tryAcquireAllAt(t, one).allowed()).as("%s: a sixth since the reset", limit.name())
                    .isFalse();
            backend.refundAt(t, one, after);
            assertThat(backend.peekAt(t, limit, "k").remaining()).as("%s: a refund after the reset", limit.name())
                    .isEqualTo(1);
        }
    }

    @Test
    void aChangedGeometryStartsAfreshAndAChangedLimitKeepsTheCounts() {
        LimitDefinition tenSlots = LimitDefinition.of("api", 5, Duration.ofMinutes(1), 10);
        backend.tryAcquire(tenSlots, "alice", 4);
        assertThat(backend.tryAcquire(tenSlots.withLimit(10), "alice", 1).remaining()).isEqualTo(5);
        LimitDefinition sixSlots = LimitDefinition.of("api", 5, Duration.ofMinutes(1), 6);
        assertThat(backend.tryAcquire(sixSlots, "alice", 1).remaining()).isEqualTo(4);
        LimitDefinition asLog = new LimitDefinition("api", 5, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG);
        assertThat(backend.tryAcquire(asLog, "alice", 1).remaining()).isEqualTo(4);
        assertThat(backend.tryAcquire(sixSlots, "alice", 1).remaining()).isEqualTo(4);
    }

    @Test
    void resetForgetsOneKey() {
        LimitDefinition limit = LimitDefinition.of("api", 2, Duration.ofMinutes(1), 10);
        backend.tryAcquire(limit, "alice", 2);
        backend.tryAcquire(limit, "bob", 2);
        backend.reset(limit, "alice");
        assertThat(backend.tryAcquire(limit, "alice", 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, "bob", 1).allowed()).isFalse();
    }

    /** Every counter under the prefix goes, scanned in pages; other prefixes and the run-time limits stay. */
    @Test
    void resetAllDeletesEveryCounterUnderThePrefixAndNothingElse() {
        LimitDefinition limit = LimitDefinition.of("many", 2, Duration.ofMinutes(1), 10);
        for (int i = 0; i < 2_500; i++) {
            backend.tryAcquire(limit, "k" + i + ((i % 7 == 0) ? "*?[x]" : ""), 2);
        }
        RedisBackend other = new RedisBackend(new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5)),
                new RedisKeys("other*"), null);
        other.tryAcquire(limit, "k0", 2);
        redis.server().call((redis) -> redis.hset("limiter:limits", "many", "5:2"));
        backend.resetAll();
        assertThat(redis.server().<Long>call((redis) -> redis.dbsize())).as("other prefix and run-time limits").isEqualTo(2);
        assertThat(backend.tryAcquire(limit, "k0", 2).allowed()).isTrue();
        assertThat(other.tryAcquire(limit, "k0", 1).allowed()).isFalse();
    }

    /** A plan is another quota compared with the same counter: the script takes the limit it is given. */
    @Test
    void aCallerWhoChangesPlanMidWindowKeepsItsCount() {
        LimitRegistry registry = new LimitRegistry();
        registry.register(LimitDefinition.of("planned", 3, Duration.ofMinutes(1), 10));
        registry.setPlans("planned", Map.of("pro", 6L));
        RateLimiters limiters = new RateLimiters(registry, backend);
        for (int i = 0; i < 3; i++) {
            assertThat(limiters.tryAcquire("planned", "ada").allowed()).isTrue();
        }
        assertThat(limiters.tryAcquire("planned", "ada").allowed()).isFalse();
        Decision upgraded = limiters.tryAcquire("planned", "ada", 2, "pro");
        assertThat(upgraded.allowed()).isTrue();
        assertThat(upgraded.limit()).isEqualTo(6);
        assertThat(upgraded.remaining()).as("3 + 2 of 6 used").isEqualTo(1);
        assertThat(limiters.tryAcquire("planned", "ada", 2, "pro").allowed()).isFalse();
        assertThat(limiters.tryAcquire("planned", "ada").allowed()).as("downgraded: 5 of 3").isFalse();
        assertThat(limiters.usage("planned", "ada").used()).isEqualTo(5);
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

}
