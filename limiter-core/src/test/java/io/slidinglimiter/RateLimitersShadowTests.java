package io.slidinglimiter;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shadow mode: a limit decided exactly as when enforcing, its would-be rejections counted apart;
 * {@code RateLimiters} returns its true decisions, and never lets it turn a call with enforcing
 * limits away.
 */
class RateLimitersShadowTests {

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_040_000L);

    private final LimitRegistry registry = new LimitRegistry();

    private final RateLimiters rateLimiters = new RateLimiters(this.registry, new LocalBackend(this.time, 10_000));

    /**
     * Seeded schedules against two limits alike but for shadow mode: the shadow one is told the same
     * decisions, counts as shadow-rejected exactly the calls the enforcing one rejects, and holds the
     * same counts.
     */
    @Test
    void aShadowLimitCountsWhatEnforcingWouldHaveRejectedOnTheSameSchedule() {
        for (long seed = 0; seed < 50; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            long limit = random.nextLong(1, 20);
            LimitDefinition enforcing = this.registry.register(LimitDefinition.of("enforcing-" + seed, limit,
                    Duration.ofSeconds(1), 10));
            LimitDefinition shadow = this.registry.register(LimitDefinition.of("shadow-" + seed, limit,
                    Duration.ofSeconds(1), 10));
            this.registry.setShadow(shadow.name(), true);
            for (int step = 0; step < 300; step++) {
                this.time.advanceMillis(random.nextLong(0, 30));
                String key = "k" + random.nextInt(3);
                long cost = random.nextLong(1, limit + 1);
                Decision enforced = this.rateLimiters.tryAcquire(enforcing.name(), key, cost);
                Decision shadowed = (step % 2 == 0) ? this.rateLimiters.tryAcquire(shadow.name(), key, cost)
                        : this.rateLimiters.tryAcquireAll(List.of(new LimitRequest(shadow, key, cost))).get(0);
                assertThat(shadowed).as("the true decision, seed %d step %d", seed, step).isEqualTo(enforced);
                assertThat(this.rateLimiters.peek(shadow.name(), key))
                        .as("seed %d step %d", seed, step).isEqualTo(this.rateLimiters.peek(enforcing.name(), key));
            }
            assertThat(this.registry.statistics(shadow.name()).shadowRejected())
                    .isEqualTo(this.registry.statistics(enforcing.name()).rejected());
            assertThat(this.registry.statistics(shadow.name()).rejected()).isZero();
        }
    }

    /**
     * Beside an enforcing limit, a shadow one never turns the call away, and is decided only when
     * the enforcing one admits the call, as all or nothing would.
     */
    @Test
    void besideAnEnforcingLimitTheShadowOneIsDecidedOnlyWhenTheCallIsAdmitted() {
        LimitDefinition global = this.registry.register(LimitDefinition.of("global", 2, Duration.ofMinutes(1), 10));
        LimitDefinition perUser = this.registry.register(LimitDefinition.of("per-user", 1, Duration.ofMinutes(1), 10));
        this.registry.setShadow("per-user", true);
        for (int i = 0; i < 2; i++) {
            Decisions both = this.rateLimiters.tryAcquireAll(List.of(new LimitRequest(global, "all", 1),
                    new LimitRequest(perUser, "ann", 1)));
            assertThat(both.allowed()).isTrue();
            assertThat(both.get(1).allowed()).as("the shadow limit's true decision").isEqualTo(i == 0);
            assertThat(both.decidedAtMillis()).isEqualTo(this.time.currentTimeMillis());
        }
        Decisions third = this.rateLimiters.tryAcquireAll(List.of(new LimitRequest(global, "all", 1),
                new LimitRequest(perUser, "ann", 1)));
        assertThat(third.allowed()).as("the enforcing limit").isFalse();
        assertThat(third.get(1).allowed()).isTrue();
        assertThat(this.registry.statistics("per-user").shadowRejected()).as("the second call only").isOne();
        assertThat(this.registry.statistics("per-user").allowed()).isOne();
        assertThat(this.registry.statistics("global").rejected()).isOne();
    }

}
