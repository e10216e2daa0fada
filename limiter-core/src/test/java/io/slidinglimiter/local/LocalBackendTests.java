package io.slidinglimiter.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LocalBackendTests {

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L);

    private final LocalBackend backend = new LocalBackend(this.time, 10_000);

    private final LimitDefinition login = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);

    private final LimitDefinition api = LimitDefinition.of("api", 3, Duration.ofSeconds(1), 10);

    @Test
    void resetAllForgetsEveryKeyOfEveryLimitAndGivesTheRoomBack() {
        for (int i = 0; i < 5; i++) {
            this.backend.tryAcquire(this.login, "alice", 1);
            this.backend.tryAcquire(this.login, "k" + i, 1);
        }
        this.backend.tryAcquire(this.api, "bob", 3);
        assertThat(this.backend.tryAcquire(this.login, "alice", 1).allowed()).isFalse();
        assertThat(this.backend.liveCounters()).isEqualTo(7);
        this.backend.resetAll();
        assertThat(this.backend.liveCounters()).isZero();
        assertThat(this.backend.liveBytes()).isZero();
        assertThat(this.backend.peek(this.login, "alice").remaining()).isEqualTo(5);
        assertThat(this.backend.peek(this.api, "bob").remaining()).isEqualTo(3);
        assertThat(this.backend.tryAcquire(this.login, "alice", 5).allowed()).isTrue();
    }

    @Test
    void eachKeyHasItsOwnCounter() {
        assertThat(admitted(this.login, "alice", 10)).isEqualTo(5);
        assertThat(admitted(this.login, "bob", 10)).isEqualTo(5);
    }

    @Test
    void limitsOfDifferentNamesNeverShareACounterForTheSameKey() {
        assertThat(admitted(this.login, "alice", 10)).isEqualTo(5);
        assertThat(admitted(this.api, "alice", 10)).isEqualTo(3);
    }

    @Test
    void definitionsOfTheSameNameShareTheirCounter() {
        LimitDefinition sameNameElsewhere = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);
        this.backend.tryAcquire(this.login, "alice", 3);
        assertThat(this.backend.tryAcquire(sameNameElsewhere, "alice", 1).remaining()).isEqualTo(1);
    }

    @Test
    void aNameOfAnotherObjectFindsTheSameCounters() {
        // The first limits' counters are found by the identity of their name; an equal name held by
        // another String object (read from configuration, say) goes through the map to the same ones.
        LimitDefinition sameNameOtherObject = LimitDefinition.of(new String("login"), 5, Duration.ofMinutes(1), 12);
        this.backend.tryAcquire(this.login, "alice", 2);
        assertThat(this.backend.tryAcquire(sameNameOtherObject, "alice", 2).remaining()).isEqualTo(1);
        assertThat(this.backend.tryAcquire(this.login, "alice", 1).remaining()).isZero();
        assertThat(this.backend.liveCounters()).isEqualTo(1);
    }

    @Test
    void limitsBeyondTheFirstEightAreCountedAsExactly() {
        List<LimitDefinition> limits = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            limits.add(LimitDefinition.of("limit-" + i, i + 1, Duration.ofMinutes(1), 12));
        }
        for (int round = 0; round < 20; round++) {
            for (LimitDefinition limit : limits) {
                this.backend.tryAcquire(limit, "alice", 1);
            }
        }
        for (LimitDefinition limit : limits) {
            assertThat(this.backend.peek(limit, "alice").remaining()).as(limit.name()).isZero();
            assertThat(this.backend.tryAcquire(limit, "alice", 1).allowed()).as(limit.name()).isFalse();
        }
        this.backend.resetAll();
        for (LimitDefinition limit : limits) {
            assertThat(admitted(limit, "alice", 20)).as(limit.name()).isEqualTo(limit.limit());
        }
    }

    @Test
    void theWindowSlidesWithTheTimeSource() {
        assertThat(admitted(this.api, "k", 5)).isEqualTo(3);
        Decision rejected = this.backend.tryAcquire(this.api, "k", 1);
        assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(1));
        this.time.advance(Duration.ofMillis(999));
        assertThat(this.backend.tryAcquire(this.api, "k", 1).allowed()).isFalse();
        this.time.advanceMillis(1);
        assertThat(this.backend.tryAcquire(this.api, "k", 1).allowed()).isTrue();
    }

    @Test
    void aLimitChangedAtRunTimeAppliesOnTheNextDecisionAndKeepsTheCounts() {
        assertThat(admitted(this.login, "alice", 4)).isEqualTo(4);
        LimitDefinition raised = this.login.withLimit(6);
        assertThat(this.backend.tryAcquire(raised, "alice", 1).remaining()).isEqualTo(1);
        LimitDefinition lowered = this.login.withLimit(3);
        Decision decision = this.backend.tryAcquire(lowered, "alice", 1);
        assertThat(decision.allowed()).isFalse();
        assertThat(decision.limit()).isEqualTo(3);
    }

    @Test
    void aNewWindowOrAlgorithmStartsAFreshCounter() {
        assertThat(admitted(this.login, "alice", 5)).isEqualTo(5);
        LimitDefinition longer = LimitDefinition.of("login", 5, Duration.ofMinutes(2), 12);
        assertThat(admitted(longer, "alice", 5)).isEqualTo(5);
        LimitDefinition exact = new LimitDefinition("login", 5, Duration.ofMinutes(2), 12, Algorithm.SLIDING_LOG);
        assertThat(admitted(exact, "alice", 5)).isEqualTo(5);
        assertThat(this.backend.tryAcquire(exact, "alice", 1).allowed()).isFalse();
        // Back to the first window: its earlier counters were dropped, so the key starts afresh.
        assertThat(admitted(this.login, "alice", 6)).isEqualTo(5);
        assertThat(this.backend.liveCounters()).isEqualTo(1);
    }

    @Test
    void peekConsumesNothingAndResetForgetsTheKey() {
        assertThat(this.backend.peek(this.login, "alice").remaining()).isEqualTo(5);
        this.backend.tryAcquire(this.login, "alice", 5);
        Decision peeked = this.backend.peek(this.login, "alice");
        assertThat(peeked.allowed()).isFalse();
        assertThat(peeked.remaining()).isZero();
        assertThat(peeked.retryAfter()).isEqualTo(Duration.ofSeconds(60));
        this.backend.reset(this.login, "alice");
        assertThat(this.backend.peek(this.login, "alice").remaining()).isEqualTo(5);
        assertThat(admitted(this.login, "alice", 6)).isEqualTo(5);
    }

    @Test
    void aCallRejectedByOneLimitConsumesFromNone() {
        LimitDefinition perUser = LimitDefinition.of("per-user", 10, Duration.ofSeconds(1), 10);
        LimitDefinition global = LimitDefinition.of("global", 2, Duration.ofSeconds(1), 10);
        List<LimitRequest> call = List.of(new LimitRequest(perUser, "alice", 1), new LimitRequest(global, "all", 1));
        assertThat(this.backend.tryAcquireAll(call).allowed()).isTrue();
        assertThat(this.backend.tryAcquireAll(call).allowed()).isTrue();
        Decisions third = this.backend.tryAcquireAll(call);
        assertThat(third.allowed()).isFalse();
        assertThat(third.get(0).allowed()).as("per-user alone would admit").isTrue();
        assertThat(third.get(1).allowed()).isFalse();
        assertThat(third.retryAfter()).isEqualTo(Duration.ofSeconds(1));
        // per-user consumed 2, not 3.
        assertThat(this.backend.peek(perUser, "alice").remaining()).isEqualTo(8);
    }

    @Test
    void theSameLimitAndKeyTwiceInOneCallIsRefused() {
        LimitRequest request = new LimitRequest(this.login, "alice", 1);
        assertThatIllegalArgumentException().isThrownBy(() -> this.backend.tryAcquireAll(List.of(request, request)))
                .withMessageContaining("appears twice");
        assertThatIllegalArgumentException().isThrownBy(() -> this.backend.tryAcquireAll(List.of()))
                .withMessageContaining("at least one limit");
        assertThat(this.backend.peek(this.login, "alice").remaining()).isEqualTo(5);
    }

    @Test
    void badKeysAndCostsAreRefusedWithTheValueNamedAndConsumeNothing() {
        this.backend.tryAcquire(this.login, "alice", 2);
        assertThatIllegalArgumentException().isThrownBy(() -> this.backend.tryAcquire(this.login, null, 1))
                .withMessage("Limit 'login': the key must not be null");
        assertThatIllegalArgumentException().isThrownBy(() -> this.backend.tryAcquire(this.login, "", 1))
                .withMessage("Limit 'login': the key must not be empty or blank");
        assertThatIllegalArgumentException().isThrownBy(() -> this.backend.tryAcquire(this.login, " \t", 1))
                .withMessage("Limit 'login': the key must not be empty or blank");
        assertThatExceptionOfType(InvalidCostException.class)
                .isThrownBy(() -> this.backend.tryAcquire(this.login, "alice", 0))
                .withMessage("The cost of limit 'login' was 0; it must be between 1 and 5");
        assertThatExceptionOfType(InvalidCostException.class)
                .isThrownBy(() -> this.backend.tryAcquire(this.login, "alice", -1))
                .withMessage("The cost of limit 'login' was -1; it must be between 1 and 5");
        assertThatExceptionOfType(InvalidCostException.class)
                .isThrownBy(() -> this.backend.tryAcquire(this.login, "alice", 6))
                .withMessage("The cost of limit 'login' was 6; it must be between 1 and 5");
        assertThatExceptionOfType(InvalidCostException.class).isThrownBy(() -> new LimitRequest(this.login, "alice", 6))
                .withMessage("The cost of limit 'login' was 6; it must be between 1 and 5");
        assertThat(this.backend.peek(this.login, "alice").remaining()).isEqualTo(3);
    }

    @Test
    void maxKeysMustBePositive() {
        assertThatIllegalArgumentException().isThrownBy(() -> new LocalBackend(this.time, 0))
                .withMessage("max-keys must be greater than 0 but was 0");
    }

    @Test
    void oddKeysAreDistinctCounters() {
        String huge = "k".repeat(10_000);
        List<String> keys = List.of(huge, huge + "x", "ключ", "鍵", "a\u0000b", "a\nb", "login:alice", "{alice}");
        for (String key : keys) {
            assertThat(admitted(this.login, key, 6)).as(key.length() > 20 ? "huge" : key).isEqualTo(5);
        }
    }

    private long admitted(LimitDefinition limit, String key, int calls) {
        long admitted = 0;
        for (int i = 0; i < calls; i++) {
            admitted += this.backend.tryAcquire(limit, key, 1).allowed() ? 1 : 0;
        }
        return admitted;
    }

    /** A refund that lands after a reset must not give back what the reset already forgot. */
    @Test
    void aRefundAfterAResetGivesNothingBack() {
        List<LimitRequest> one = List.of(new LimitRequest(this.login, "alice", 1));
        Decisions taken = this.backend.tryAcquireAll(one);
        assertThat(admitted(this.login, "alice", 4)).isEqualTo(4);
        this.backend.reset(this.login, "alice");
        this.time.advanceMillis(1);
        assertThat(admitted(this.login, "alice", 5)).isEqualTo(5);
        this.backend.refund(one, taken);
        assertThat(this.backend.tryAcquire(this.login, "alice", 1).allowed()).as("a sixth in one window").isFalse();
    }

    /**
     * An admission right after a reset, in its millisecond, is given back by its refund, as in Redis
     * (where the reset deleted the key and that admission made it anew).
     */
    @Test
    void aRefundOfTheFirstAdmissionAfterAResetInItsMillisecondGivesItBack() {
        assertThat(admitted(this.login, "alice", 5)).isEqualTo(5);
        this.backend.reset(this.login, "alice");
        List<LimitRequest> three = List.of(new LimitRequest(this.login, "alice", 3));
        Decisions taken = this.backend.tryAcquireAll(three);
        this.backend.refund(three, taken);
        assertThat(this.backend.peek(this.login, "alice").remaining()).isEqualTo(5);
    }

    /**
     * Never over at a reset, however the clock reads: five admitted, a reset, five admitted again, then
     * a refund and a settle of decisions made before the reset, all in one millisecond, give nothing
     * back (the counter's generation tells before from after, where time cannot), for both algorithms
     * and for a reset of one key or of every key.
     */
    @Test
    void aRefundOrSettleOfADecisionBeforeAResetInItsMillisecondGivesNothingBack() {
        LimitDefinition log = new LimitDefinition("log", 5, Duration.ofMinutes(1), 1, Algorithm.SLIDING_LOG);
        for (LimitDefinition limit : List.of(this.login, log)) {
            for (boolean every : new boolean[] { false, true }) {
                String key = "mallory-" + every;
                List<LimitRequest> one = List.of(new LimitRequest(limit, key, 1));
                Decisions before = this.backend.tryAcquireAll(one);
                List<LimitRequest> two = List.of(new LimitRequest(limit, key, 2));
                Decisions settledBefore = this.backend.tryAcquireAll(two);
                assertThat(admitted(limit, key, 2)).isEqualTo(2);
                if (every) {
                    this.backend.resetAll();
                }
                else {
                    this.backend.reset(limit, key);
                }
                assertThat(admitted(limit, key, 5)).as("after the reset").isEqualTo(5);
                this.backend.refund(one, before);
                this.backend.settle(two, settledBefore, new long[] { 0 });
                assertThat(this.backend.tryAcquire(limit, key, 1).allowed())
                        .as("%s: a sixth since the %s, in the same millisecond", limit.name(),
                                every ? "reset of every key" : "reset")
                        .isFalse();
            }
        }
    }

    @Test
    void aRefundForAKeyWithoutACounterCreatesNone() {
        Decisions taken = new Decisions(true, List.of(new Decision(true, 5, 4, 0, 0)), this.time.currentTimeMillis());
        this.backend.refund(List.of(new LimitRequest(this.login, "nobody", 1)), taken);
        assertThat(this.backend.liveCounters()).isZero();
    }

    /**
     * A limit of at most 2^53 is counted without wrapping: its whole limit in one call, then nothing
     * more; a larger limit, whose sums could wrap, is refused with its name, and the backend says so
     * as its largest limit (the endpoint refuses a change past it).
     */
    @Test
    void countsNeverWrapAndALimitPastTheBoundIsRefused() {
        try (LocalBackend backend = new LocalBackend(new ManualTimeSource(0), 100)) {
            LimitDefinition largest = LimitDefinition.of("largest", LocalBackend.MAX_LIMIT, Duration.ofSeconds(10), 10);
            assertThat(backend.tryAcquire(largest, "k", LocalBackend.MAX_LIMIT).allowed()).isTrue();
            assertThat(backend.tryAcquire(largest, "k", 1).allowed()).isFalse();
            assertThat(backend.tryAcquire(largest, "k", LocalBackend.MAX_LIMIT).allowed()).isFalse();
            assertThat(backend.peek(largest, "k").remaining()).isZero();
            LimitDefinition beyond = LimitDefinition.of("beyond", Long.MAX_VALUE, Duration.ofSeconds(10), 10);
            assertThatIllegalArgumentException().isThrownBy(() -> backend.tryAcquire(beyond, "k", Long.MAX_VALUE))
                    .withMessageContaining("'beyond'").withMessageContaining("2^53");
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> backend.tryAcquireAll(List.of(new LimitRequest(beyond, "k", 1))));
            assertThatIllegalArgumentException().isThrownBy(() -> backend.admit(beyond, "k", 1));
            assertThat(backend.largestLimit(beyond)).isEqualTo(LocalBackend.MAX_LIMIT);
        }
    }

    /**
     * The sweeper's thread lives while a backend is open: closing the last one ends it, so that an
     * application that stops or fails to start leaves no limiter thread behind; the next backend
     * starts it again.
     */
    @Test
    void closingTheLastBackendEndsTheSweepersThread() throws Exception {
        int before = IdleCounters.openStores();
        List<LocalBackend> backends = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            backends.add(new LocalBackend(new ManualTimeSource(0), 100));
        }
        assertThat(IdleCounters.openStores()).isEqualTo(before + 3);
        assertThat(sweeperThreads()).isNotEmpty();
        for (LocalBackend backend : backends) {
            backend.close();
            backend.close();
        }
        assertThat(IdleCounters.openStores()).as("closed twice, released once").isEqualTo(before);
        if (before == 0) {
            for (Thread thread : sweeperThreads()) {
                thread.join(10_000);
            }
            assertThat(sweeperThreads()).as("no backend open: no thread").isEmpty();
        }
        try (LocalBackend again = new LocalBackend(new ManualTimeSource(0), 100)) {
            assertThat(sweeperThreads()).isNotEmpty();
        }
    }

    private static List<Thread> sweeperThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter((thread) -> thread.getName().equals("limiter-local-sweeper") && thread.isAlive()).toList();
    }

}
