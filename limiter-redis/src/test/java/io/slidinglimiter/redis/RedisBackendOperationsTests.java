package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;


import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What operators do to the Redis backend, against a real redis-server: peeks that must change
 * nothing, a server out of memory, sliding logs with large costs and refunds, keys and numbers at
 * their edges.
 */
class RedisBackendOperationsTests {

    private static final long T0 = 1_700_000_000_000L;

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static RedisBackend backend;

    private final LimitDefinition counter = LimitDefinition.of("counter", 10, Duration.ofSeconds(1), 10);

    private final LimitDefinition log = new LimitDefinition("log", 10, Duration.ofSeconds(1), 1, Algorithm.SLIDING_LOG);

    @BeforeAll
    static void createBackend() {
        backend = new RedisBackend(new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5)),
                new RedisKeys("limiter"), null);
    }

    @BeforeEach
    void noMemoryBound() {
        redis.server().call((commands) -> commands.configSet("maxmemory", "0"));
    }

    /** A peek after slots left the window, on both algorithms, and on a key of another type. */
    @Test
    void aPeekLeavesRedisByteForByteAsItWas() {
        for (LimitDefinition limit : List.of(this.counter, this.log)) {
            for (int i = 0; i < 8; i++) {
                backend.tryAcquireAllAt(T0 + 100L * i, List.of(new LimitRequest(limit, "alice", 1)));
            }
        }
        redis.server().call((redis) -> redis.set("limiter:{bob}:counter", "not a counter"));
        redis.server().call((redis) -> redis.zadd("limiter:{bob}:log", 1.0, "of another window"));
        Map<String, byte[]> before = dump();
        for (long later : new long[] { 450, 950, 1_350, 5_000 }) {
            for (LimitDefinition limit : List.of(this.counter, this.log)) {
                backend.peekAt(T0 + later, limit, "alice");
                backend.peekAt(T0 + later, limit, "bob");
                backend.peekAt(T0 + later, limit.withLimit(3), "alice");
            }
        }
        Map<String, byte[]> after = dump();
        assertThat(after.keySet()).isEqualTo(before.keySet());
        before.forEach((key, value) -> assertThat(after.get(key)).as(key).isEqualTo(value));
    }

    /** The scene: 5 calls a second under a limit of 10, an operator peeking after each. */
    @Test
    void peeksBetweenCallsNeverMakeACallRejected() {
        for (LimitDefinition limit : List.of(this.counter, this.log)) {
            int admitted = 0;
            for (int call = 0; call < 50; call++) {
                long now = T0 + 200L * call;
                admitted += backend.tryAcquireAllAt(now, List.of(new LimitRequest(limit, "carol", 1))).allowed() ? 1 : 0;
                assertThat(backend.peekAt(now + 50, limit, "carol").remaining()).as("%s call %d", limit.name(), call)
                        .isEqualTo(10 - Math.min(call + 1, 5));
            }
            assertThat(admitted).as(limit.name()).isEqualTo(50);
        }
    }

    /**
     * Under maxmemory (noeviction) every write that may grow memory fails the same way, whether the
     * script would first have freed something (old slots, expired log entries, a replaced key) or not.
     */
    @Test
    void outOfMemoryFailsEveryAdmissionAndWritesNothingPastTheBound() {
        LimitDefinition bigLog = new LimitDefinition("big-log", 1_000_000, Duration.ofSeconds(1), 1,
                Algorithm.SLIDING_LOG);
        backend.tryAcquireAllAt(T0, List.of(new LimitRequest(this.counter, "old", 1)));
        backend.tryAcquireAllAt(T0, List.of(new LimitRequest(bigLog, "old", 1)));
        redis.server().call((redis) -> redis.set("limiter:{other}:counter", "of another type"));
        redis.server().call((redis) -> redis.configSet("maxmemory-policy", "noeviction"));
        redis.server().call((redis) -> redis.configSet("maxmemory", "1"));
        long usedBefore = usedMemory();
        List<String> outcomes = new ArrayList<>();
        for (int call = 0; call < 300; call++) {
            long now = T0 + 500 + call;
            outcomes.add(outcome(List.of(new LimitRequest(bigLog, "old", 1)), now));
            outcomes.add(outcome(List.of(new LimitRequest(bigLog, "new-" + call, 1)), now));
            outcomes.add(outcome(List.of(new LimitRequest(this.counter, "old", 1)), now + 300));
            outcomes.add(outcome(List.of(new LimitRequest(this.counter, "new-" + call, 1)), now));
            outcomes.add(outcome(List.of(new LimitRequest(this.counter, "other", 1)), now));
        }
        assertThat(outcomes).containsOnly("OOM");
        assertThat(usedMemory() - usedBefore).as("bytes written past the bound").isLessThan(64 * 1024);
        redis.server().call((redis) -> redis.configSet("maxmemory", "0"));
        assertThat(outcome(List.of(new LimitRequest(this.counter, "old", 1)), T0 + 2_000)).isEqualTo("allowed");
    }

    /** One entry per admission whatever its cost, and a refund that removes exactly that admission. */
    @Test
    void aSlidingLogStoresOneEntryPerAdmissionAndRefundsExactly() {
        LimitDefinition huge = new LimitDefinition("huge", 2_000_000, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG);
        assertThat(backend.tryAcquireAllAt(T0, List.of(new LimitRequest(huge, "alice", 1_000_000))).allowed()).isTrue();
        assertThat(redis.server().<Long>call((redis) -> redis.zcard("limiter:{alice}:huge"))).as("one entry, the state and the log's generation")
                .isEqualTo(5L);
        assertThat(backend.peekAt(T0 + 1, huge, "alice").remaining()).isEqualTo(1_000_000);

        LimitDefinition two = new LimitDefinition("two", 2, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG);
        List<LimitRequest> one = List.of(new LimitRequest(two, "bob", 1));
        Decisions first = backend.tryAcquireAllAt(T0, one);
        backend.tryAcquireAllAt(T0, one);
        backend.refundAt(T0, one, first);
        int admitted = 0;
        for (int i = 0; i < 5; i++) {
            admitted += backend.tryAcquireAllAt(T0, one).allowed() ? 1 : 0;
        }
        assertThat(admitted).as("in the same millisecond after a refund").isEqualTo(1);
    }

    @Test
    void aSlidingLogWhoseWindowChangedStartsAfresh() {
        LimitDefinition minute = new LimitDefinition("api", 5, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG);
        backend.tryAcquireAllAt(T0, List.of(new LimitRequest(minute, "alice", 5)));
        LimitDefinition twoMinutes = new LimitDefinition("api", 5, Duration.ofMinutes(2), 1, Algorithm.SLIDING_LOG);
        assertThat(backend.tryAcquireAllAt(T0 + 1, List.of(new LimitRequest(twoMinutes, "alice", 1))).get(0)
                .remaining()).isEqualTo(4);
    }

    /** Keys that differ only in unpaired surrogates, which UTF-8 would all turn into "?". */
    @Test
    void keysWithUnpairedSurrogatesStayDistinct() {
        LimitDefinition limit = LimitDefinition.of("login", 1, Duration.ofMinutes(1), 10);
        for (String key : List.of("\uD800", "\uD801", "?", "a\uDC00b", "\uD83D\uDD11", "x".repeat(300) + "\uD800",
                "x".repeat(300) + "\uD801")) {
            assertThat(backend.tryAcquire(limit, key, 1).allowed()).as("first call of %s", key.codePoints().boxed()
                    .toList()).isTrue();
        }
        assertThat(redis.server().<Long>call((redis) -> redis.dbsize())).isEqualTo(7L);
    }

    /** Lua numbers are doubles: a total above 10^14 must still be stored with every digit. */
    @Test
    void largeCountsKeepEveryDigit() {
        long limit = (1L << 53) - 1;
        for (LimitDefinition definition : List.of(LimitDefinition.of("large", limit, Duration.ofMinutes(1), 10),
                new LimitDefinition("large-log", limit, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG))) {
            backend.tryAcquireAllAt(T0, List.of(new LimitRequest(definition, "k", limit - 3)));
            assertThat(backend.peekAt(T0 + 1, definition, "k").remaining()).as(definition.name()).isEqualTo(3);
            assertThat(backend.tryAcquireAllAt(T0 + 2, List.of(new LimitRequest(definition, "k", 4))).allowed())
                    .as(definition.name()).isFalse();
        }
    }

    @Test
    void limitsBeyondWhatLuaCountsExactlyAreRefused() {
        LimitDefinition tooLarge = LimitDefinition.of("too-large", 1L << 53, Duration.ofMinutes(1), 10);
        assertThatExceptionOfType(IllegalArgumentException.class)
                .isThrownBy(() -> backend.tryAcquire(tooLarge, "k", 1))
                .withMessageContaining("9007199254740991");
        assertThat(redis.server().<Long>call((redis) -> redis.dbsize())).isZero();
    }

    private static String outcome(List<LimitRequest> requests, long now) {
        try {
            return backend.tryAcquireAllAt(now, requests).allowed() ? "allowed" : "rejected";
        }
        catch (RedisBackendException ex) {
            return ex.getMessage().contains("OOM") ? "OOM" : ex.getMessage();
        }
    }

    private static long usedMemory() {
        String info = redis.server().call((redis) -> redis.info("memory"));
        return Arrays.stream(info.split("\r\n")).filter((line) -> line.startsWith("used_memory:"))
                .mapToLong((line) -> Long.parseLong(line.substring("used_memory:".length()))).findFirst().orElseThrow();
    }

    private static Map<String, byte[]> dump() {
        Map<String, byte[]> dumps = new HashMap<>();
        for (String key : redis.server().<List<String>>call((redis) -> redis.keys("*"))) {
            dumps.put(key, redis.server().<byte[]>call((redis) -> redis.dump(key)));
        }
        return dumps;
    }

}
