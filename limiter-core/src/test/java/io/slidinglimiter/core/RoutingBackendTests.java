package io.slidinglimiter.core;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RoutingBackendTests {

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L);

    private final LocalBackend first = new LocalBackend(this.time, 1_000);

    private final LocalBackend second = new LocalBackend(this.time, 1_000);

    private final LimitDefinition perUser = LimitDefinition.of("per-user", 5, Duration.ofMinutes(1), 10);

    private final LimitDefinition global = LimitDefinition.of("global", 2, Duration.ofMinutes(1), 10);

    private final RoutingBackend routing = new RoutingBackend(List.of(this.first, this.second), this.second,
            Map.of("per-user", this.first));

    @Test
    void eachLimitGoesToItsBackend() {
        this.routing.tryAcquire(this.perUser, "alice", 2);
        this.routing.tryAcquire(this.global, "all", 1);
        assertThat(this.first.peek(this.perUser, "alice").remaining()).isEqualTo(3);
        assertThat(this.second.peek(this.perUser, "alice").remaining()).isEqualTo(5);
        assertThat(this.second.peek(this.global, "all").remaining()).isEqualTo(1);
    }

    @Test
    void limitsChooseTheirBackendsByName() {
        Map<String, RateLimitBackend> byName = new LinkedHashMap<>();
        byName.put("first", this.first);
        byName.put("second", this.second);
        RateLimitBackend routed = RoutingBackend.byName(byName, "second", Map.of("per-user", "first"));
        routed.tryAcquire(this.perUser, "alice", 2);
        routed.tryAcquire(this.global, "all", 1);
        assertThat(this.first.peek(this.perUser, "alice").remaining()).isEqualTo(3);
        assertThat(this.second.peek(this.global, "all").remaining()).isEqualTo(1);
        assertThat(RoutingBackend.byName(byName, "second", Map.of("global", "second"))).as("one backend used")
                .isSameAs(this.second);
        assertThatIllegalArgumentException().isThrownBy(() -> RoutingBackend.byName(byName, "second",
                Map.of("per-user", "memcached"))).withMessage("No backend is named 'memcached': the backends are"
                        + " first, second");
    }

    @Test
    void aBackendsNameIsLowerCaseAndNotBlank() {
        assertThat(new NamedBackend("redis", this.first).name()).isEqualTo("redis");
        assertThatIllegalArgumentException().isThrownBy(() -> new NamedBackend("Redis", this.first));
        assertThatIllegalArgumentException().isThrownBy(() -> new NamedBackend(" ", this.first));
    }

    @Test
    void aLaterBackendsRejectionRefundsWhatTheEarlierOneTook() {
        List<Boolean> outcomes = List.of("alice", "bob", "carol").stream()
                .map((user) -> this.routing.tryAcquireAll(List.of(new LimitRequest(this.global, "all", 1),
                        new LimitRequest(this.perUser, user, 3))).allowed())
                .toList();
        assertThat(outcomes).containsExactly(true, true, false);
        assertThat(this.first.peek(this.perUser, "carol").remaining()).as("refunded").isEqualTo(5);
        assertThat(this.first.peek(this.perUser, "alice").remaining()).isEqualTo(2);
    }

    @Test
    void refundsDoNotGiveBackPermitsThatAlreadyLeftTheWindow() {
        Decisions taken = this.first.tryAcquireAll(List.of(new LimitRequest(this.perUser, "dave", 4)));
        this.time.advance(Duration.ofMinutes(1));
        this.first.tryAcquire(this.perUser, "dave", 5);
        this.first.refund(List.of(new LimitRequest(this.perUser, "dave", 4)), taken);
        assertThat(this.first.peek(this.perUser, "dave").remaining()).isZero();
    }

    /** Each backend decides by its own clock (Redis by Redis time): a refund must use each group's. */
    @Test
    void aRefundGivesEachBackendBackAtTheTimeItDecided() {
        ManualTimeSource otherClock = new ManualTimeSource(this.time.currentTimeMillis() + 3_600_000);
        LocalBackend elsewhere = new LocalBackend(otherClock, 1_000);
        RoutingBackend split = new RoutingBackend(List.of(this.first, elsewhere), elsewhere,
                Map.of("per-user", this.first));
        List<LimitRequest> call = List.of(new LimitRequest(this.perUser, "erin", 2), new LimitRequest(this.global,
                "all", 1));
        Decisions taken = split.tryAcquireAll(call);
        assertThat(taken.allowed()).isTrue();
        split.refund(call, taken);
        assertThat(this.first.peek(this.perUser, "erin").remaining()).isEqualTo(5);
        assertThat(elsewhere.peek(this.global, "all").remaining()).isEqualTo(2);
    }

}
