package io.slidinglimiter.local;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.internal.CounterKeys;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The bounds on the local store, and what a flood of keys can and cannot do to it.
 */
class LocalBackendMemoryTests {

    private static final long START = 1_700_000_000_000L;

    private final ManualTimeSource time = new ManualTimeSource(START);

    @Test
    void liveCountersStayAtTheBoundAndEmptyOnesVanishAfterTheirWindow() {
        LocalBackend backend = new LocalBackend(this.time, 100_000);
        LimitDefinition limit = LimitDefinition.of("per-client", 10, Duration.ofSeconds(10), 10);

        for (int key = 0; key < 2_000_000; key++) {
            backend.tryAcquire(limit, "client-" + key, 1);
            if (key % 1_000 == 0) {
                this.time.advanceMillis(1);
            }
            if (key % 250_000 == 249_999) {
                assertThat(backend.liveCounters()).as("after %d keys", key + 1).isLessThanOrEqualTo(100_000);
            }
        }
        assertThat(backend.liveCounters()).isEqualTo(100_000);
        assertThat(backend.overflowDecisions()).isEqualTo(1_900_000);

        this.time.advance(Duration.ofSeconds(10));
        assertThat(backend.liveCounters()).isZero();
        assertThat(backend.liveBytes()).isZero();
    }

    @Test
    void aCounterInUseIsKeptWhileEmptyOnesAreDropped() {
        LocalBackend backend = new LocalBackend(this.time, 1_000);
        LimitDefinition limit = LimitDefinition.of("api", 5, Duration.ofSeconds(1), 10);
        backend.tryAcquire(limit, "idle", 1);
        for (int step = 0; step < 5; step++) {
            backend.tryAcquire(limit, "busy", 1);
            this.time.advanceMillis(400);
        }
        assertThat(backend.liveCounters()).isEqualTo(1);
        assertThat(backend.peek(limit, "busy").remaining()).isEqualTo(3);
    }

    /** The reproduction: 100 admissions in 2 s for a limit of 5 per minute. */
    @Test
    void aFloodOfOtherKeysNeverResetsAVictimsCounter() {
        LocalBackend backend = new LocalBackend(this.time, 1_000);
        LimitDefinition login = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);
        SplittableRandom random = new SplittableRandom(42);
        int aliceAdmitted = 0;
        int junk = 0;
        for (int round = 0; round < 20; round++) {
            for (int attempt = 0; attempt < 10; attempt++) {
                aliceAdmitted += backend.tryAcquire(login, "alice", 1).allowed() ? 1 : 0;
            }
            for (int flood = 0; flood < 2_000; flood++) {
                String key = "junk-" + junk++;
                for (int hit = random.nextInt(2, 5); hit > 0; hit--) {
                    backend.tryAcquire(login, key, 1);
                }
            }
            this.time.advanceMillis(100);
        }
        assertThat(aliceAdmitted).isEqualTo(5);
        assertThat(backend.liveCounters()).isLessThanOrEqualTo(1_000);
    }

    @Test
    void aKeyThatStartedInTheSketchKeepsItsCountWhenItGetsACounter() {
        LocalBackend backend = new LocalBackend(this.time, 1);
        LimitDefinition limit = LimitDefinition.of("api", 3, Duration.ofSeconds(10), 10);
        backend.tryAcquire(limit, "first", 1);
        for (int i = 0; i < 3; i++) {
            assertThat(backend.tryAcquire(limit, "late", 1).allowed()).isTrue();
        }
        assertThat(backend.overflowDecisions()).isEqualTo(3);
        // "first" expires and frees the room; "late" still has 3 in the sketch, so it stays there.
        this.time.advance(Duration.ofSeconds(9));
        assertThat(backend.tryAcquire(limit, "late", 1).allowed()).isFalse();
        this.time.advance(Duration.ofSeconds(1));
        assertThat(backend.tryAcquire(limit, "late", 1).allowed()).isTrue();
        assertThat(backend.liveCounters()).isEqualTo(1);
    }

    @Test
    void aFloodInOneLimitDropsNoCounterOfAnother() {
        LocalBackend backend = new LocalBackend(this.time, 1_000);
        LimitDefinition login = LimitDefinition.of("login", 3, Duration.ofMinutes(1), 12);
        LimitDefinition search = LimitDefinition.of("search", 100, Duration.ofSeconds(1), 10);
        backend.tryAcquire(login, "alice", 3);
        for (int key = 0; key < 50_000; key++) {
            backend.tryAcquire(search, "junk-" + key, 1);
        }
        assertThat(backend.tryAcquire(login, "alice", 1).allowed()).isFalse();
        assertThat(backend.peek(login, "alice").remaining()).isZero();
    }

    /**
     * Random floods against a model that never forgets: whatever the bound, a key is never admitted
     * more than an unbounded store would admit it, in any limit.
     */
    @Test
    void underAnyFloodNoKeyIsAdmittedMoreThanWithoutABound() {
        for (long seed = 0; seed < 40; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            ManualTimeSource clock = new ManualTimeSource(START);
            LocalBackend bounded = new LocalBackend(clock, random.nextInt(1, 30));
            LocalBackend unbounded = new LocalBackend(clock, Long.MAX_VALUE, Long.MAX_VALUE);
            LimitDefinition[] limits = { LimitDefinition.of("a", random.nextLong(1, 6), Duration.ofMillis(500), 5),
                    new LimitDefinition("b", random.nextLong(1, 6), Duration.ofMillis(300), 1, Algorithm.SLIDING_LOG) };
            for (int step = 0; step < 3_000; step++) {
                LimitDefinition limit = limits[random.nextInt(limits.length)];
                String key = (random.nextInt(4) == 0) ? "victim-" + random.nextInt(3) : "k" + random.nextInt(200);
                long cost = random.nextLong(1, limit.limit() + 1);
                if (bounded.tryAcquire(limit, key, cost).allowed()) {
                    assertThat(unbounded.tryAcquire(limit, key, cost).allowed())
                            .as("seed %d step %d: %s admitted %s beyond its limit", seed, step, limit.name(), key)
                            .isTrue();
                }
                clock.advanceMillis(random.nextInt(0, 20));
            }
        }
    }

    @Test
    void theByteBoundHoldsForLongKeysAndManySubWindows() {
        LocalBackend backend = new LocalBackend(this.time, 1_000_000, 10L * 1024 * 1024);
        LimitDefinition fine = LimitDefinition.of("fine", 10, Duration.ofHours(1), 3600);
        String padding = "x".repeat(8_000);
        for (int key = 0; key < 20_000; key++) {
            backend.tryAcquire(fine, padding + key, 1);
        }
        assertThat(backend.liveBytes()).isLessThanOrEqualTo(10L * 1024 * 1024);
        // Long keys are stored as digests: each counter weighs its 3600 slots, not 8 000 characters.
        assertThat(backend.liveBytes() / backend.liveCounters()).isLessThan(30_000);
        assertThat(backend.liveCounters()).isGreaterThan(300);
    }

    @Test
    void longKeysAreStoredAsDigestsAndStillCountedApart() {
        LocalBackend backend = new LocalBackend(this.time, 1_000);
        LimitDefinition limit = LimitDefinition.of("api", 1, Duration.ofSeconds(10), 10);
        String longKey = "k".repeat(300);
        assertThat(CounterKeys.bounded(longKey)).startsWith("sha256:").hasSize(50);
        assertThat(CounterKeys.bounded("short")).isEqualTo("short");
        assertThat(CounterKeys.bounded(CounterKeys.bounded(longKey))).isNotEqualTo(CounterKeys.bounded(longKey));
        assertThat(backend.tryAcquire(limit, longKey, 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, longKey, 1).allowed()).isFalse();
        assertThat(backend.tryAcquire(limit, longKey + "!", 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, CounterKeys.bounded(longKey), 1).allowed())
                .as("a short key cannot pose as a long key's digest").isTrue();
        String otherLongKey = "o".repeat(300);
        assertThat(backend.tryAcquire(limit, CounterKeys.bounded(otherLongKey), 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, otherLongKey, 1).allowed())
                .as("nor the other way round, when the short key came first").isTrue();
        assertThat(backend.tryAcquire(limit, otherLongKey, 1).allowed()).isFalse();
    }

    /** Refunds happen in normal use (a call mixing a local and a Redis limit that Redis rejects). */
    @Test
    void admitAndRefundPairsKeepASlidingLogWithinItsLimit() {
        LocalBackend backend = new LocalBackend(this.time, 1_000, 10 * 1024);
        LimitDefinition log = new LimitDefinition("log", 5, Duration.ofHours(1), 1, Algorithm.SLIDING_LOG);
        List<LimitRequest> request = List.of(new LimitRequest(log, "alice", 1));
        long bytesOfOneKey = 0;
        for (int pair = 0; pair < 200_000; pair++) {
            Decisions taken = backend.tryAcquireAll(request);
            assertThat(taken.allowed()).as("pair %d", pair).isTrue();
            backend.refund(request, taken);
            bytesOfOneKey = Math.max(bytesOfOneKey, backend.liveBytes());
            this.time.advanceMillis(1);
        }
        assertThat(bytesOfOneKey).as("a new log's bytes, never more").isLessThan(600);
        assertThat(backend.peek(log, "alice").remaining()).isEqualTo(5);
        assertThat(backend.tryAcquire(log, "alice", 5).allowed()).isTrue();
    }

    /** A limit raised at run time lets logs hold more entries: they grow only within the bound. */
    @Test
    void raisingASlidingLogsLimitAtRunTimeKeepsTheByteBound() {
        long bound = 10 * 1024;
        LocalBackend bounded = new LocalBackend(this.time, 1_000, bound);
        LocalBackend unbounded = new LocalBackend(this.time, 1_000, Long.MAX_VALUE);
        LimitDefinition small = new LimitDefinition("log", 5, Duration.ofHours(1), 1, Algorithm.SLIDING_LOG);
        LimitDefinition raised = small.withLimit(100_000);
        for (int key = 0; key < 20; key++) {
            bounded.tryAcquire(small, "k" + key, 1);
            unbounded.tryAcquire(small, "k" + key, 1);
        }
        for (int step = 0; step < 20_000; step++) {
            String key = "k" + (step % 20);
            if (bounded.tryAcquire(raised, key, 1).allowed()) {
                assertThat(unbounded.tryAcquire(raised, key, 1).allowed()).as("step %d", step).isTrue();
            }
            this.time.advanceMillis(1);
            assertThat(bounded.liveBytes()).as("step %d", step).isLessThanOrEqualTo(bound);
        }
        assertThat(bounded.liveCounters()).isEqualTo(20);
        this.time.advance(Duration.ofHours(1));
        assertThat(bounded.liveCounters()).isZero();
        assertThat(bounded.liveBytes()).as("every grown log gave its room back").isZero();
    }

    /** A short key that spells a long key's digest must not share the long key's cells in the sketch. */
    @Test
    void aShortKeySpellingALongKeysDigestSharesNothingWithItInTheSketch() {
        LocalBackend backend = new LocalBackend(this.time, 1);
        LimitDefinition limit = LimitDefinition.of("api", 3, Duration.ofMinutes(1), 10);
        backend.tryAcquire(limit, "occupant", 1);
        String longKey = "victim-".repeat(40);
        String impostor = CounterKeys.digest(longKey);
        for (int i = 0; i < 3; i++) {
            assertThat(backend.tryAcquire(limit, impostor, 1).allowed()).isTrue();
        }
        assertThat(backend.overflowDecisions()).isEqualTo(3);
        assertThat(backend.tryAcquire(limit, longKey, 1).allowed()).as("the long key, through the sketch").isTrue();
    }

    /** The same limit and key twice in one call: counted twice on a counter, and on the sketch too. */
    @Test
    void theSameLimitAndKeyTwiceInOneCallIsRefusedEvenInTheSketch() {
        LocalBackend backend = new LocalBackend(this.time, 1);
        LimitDefinition limit = LimitDefinition.of("api", 1, Duration.ofMinutes(1), 10);
        backend.tryAcquire(limit, "occupant", 1);
        LimitRequest victim = new LimitRequest(limit, "victim", 1);
        assertThatIllegalArgumentException().isThrownBy(() -> backend.tryAcquireAll(List.of(victim, victim)))
                .withMessageContaining("Limit 'api' appears twice for one key");
        assertThat(backend.peek(limit, "victim").remaining()).as("nothing consumed").isEqualTo(1);
        assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).isFalse();
    }

}
