package io.slidinglimiter.core;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.entry;

class LimitRegistryTests {

    private final LimitRegistry registry = new LimitRegistry();

    private final LimitDefinition login = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);

    @Test
    void anEqualDefinitionOfTheSameNameIsShared() {
        this.registry.register(this.login);
        assertThat(this.registry.register(LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12)))
                .isEqualTo(this.login);
        assertThat(this.registry.all()).containsExactly(this.login);
    }

    @Test
    void aDifferentDefinitionOfTheSameNameIsRefused() {
        this.registry.register(this.login);
        assertThatIllegalStateException()
                .isThrownBy(() -> this.registry.register(LimitDefinition.of("login", 6, Duration.ofMinutes(1), 12)))
                .withMessage("Limit 'login' is defined twice, differently: 5 per PT1M in 12 sub-windows"
                        + " (sliding-window-counter) and 6 per PT1M in 12 sub-windows (sliding-window-counter)");
    }

    @Test
    void aNameBuiltAtRunTimeFindsTheLimitRegisteredUnderALiteral() {
        // Registered names are interned for a reference comparison; a name read from configuration
        // or built from parts is another String object and must find the same limit.
        this.registry.register(LimitDefinition.of(new String("api"), 5, Duration.ofSeconds(1), 10));
        String built = new StringBuilder("a").append("pi").toString();
        assertThat(this.registry.handle(built)).isSameAs(this.registry.handle("api"));
        assertThat(this.registry.get(built).name()).isEqualTo("api");
    }

    @Test
    void everyLimitIsFoundByItsNameWhetherOrNotItIsOneOfTheFirstEight() {
        // The first eight limits are kept apart and found by reference; the rest, and names that are
        // other String objects, through the map. Each way must end at the same handle.
        for (int i = 0; i < 12; i++) {
            this.registry.register(LimitDefinition.of("limit-" + i, i + 1, Duration.ofSeconds(1), 10));
        }
        for (int i = 0; i < 12; i++) {
            String literal = ("limit-" + i).intern();
            String built = new StringBuilder("limit-").append(i).toString();
            LimitRegistry.Handle handle = this.registry.handle(literal);
            assertThat(handle.definition().limit()).isEqualTo(i + 1);
            assertThat(this.registry.handle(built)).isSameAs(handle);
        }
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.handle("limit-12"))
                .withMessageStartingWith("No limit is named 'limit-12'");
    }

    @Test
    void anUnknownNameIsRefusedNamingTheKnownOnes() {
        this.registry.register(this.login);
        this.registry.register(LimitDefinition.of("api", 5, Duration.ofSeconds(1), 10));
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.get("logn"))
                .withMessage("No limit is named 'logn'; known limits: [api, login]");
        assertThat(this.registry.find("logn")).isEmpty();
    }

    @Test
    void aLimitChangedAtRunTimeAppliesOnTheNextDecisionAndKeepsTheCounts() {
        this.registry.register(this.login);
        RateLimiters limiters = new RateLimiters(this.registry,
                new LocalBackend(new ManualTimeSource(1_700_000_040_000L), 100));
        assertThat(limiters.tryAcquire("login", "alice", 4).remaining()).isEqualTo(1);
        this.registry.updateLimit("login", 10);
        assertThat(limiters.tryAcquire("login", "alice").remaining()).isEqualTo(5);
        this.registry.updateLimit("login", 5);
        assertThat(limiters.tryAcquire("login", "alice").allowed()).isFalse();
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.updateLimit("login", 0))
                .withMessageContaining("limit must be greater than 0 but was 0");
        assertThat(this.registry.get("login").limit()).isEqualTo(5);
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.updateLimit("nope", 3))
                .withMessageContaining("No limit is named 'nope'");
    }

    @Test
    void aPlanIsTheLimitWithAnotherQuotaOnTheSameCounter() {
        this.registry.register(this.login);
        this.registry.setPlans("login", Map.of("pro", 8L, "team", 20L));
        LimitRegistry.Handle handle = this.registry.handle("login");
        assertThat(handle.definition("pro")).isEqualTo(this.login.withLimit(8));
        assertThat(handle.definition(null)).isSameAs(handle.definition("")).isSameAs(handle.definition());
        assertThat(handle.plans()).containsExactly(entry("pro", 8L), entry("team", 20L));
        assertThat(handle.largestLimit()).isEqualTo(20);
        RateLimiters limiters = new RateLimiters(this.registry,
                new LocalBackend(new ManualTimeSource(1_700_000_040_000L), 100));
        assertThat(limiters.tryAcquire("login", "alice", 5).remaining()).isZero();
        assertThat(limiters.tryAcquire("login", "alice").allowed()).isFalse();
        Decision upgraded = limiters.tryAcquire("login", "alice", 1, "pro");
        assertThat(upgraded.allowed()).as("the count is kept, the quota is the plan's").isTrue();
        assertThat(upgraded.limit()).isEqualTo(8);
        assertThat(upgraded.remaining()).isEqualTo(2);
        assertThat(limiters.tryAcquire("login", "alice", 3, "pro").allowed()).isFalse();
        assertThat(limiters.tryAcquire("login", "alice", 1, null).allowed()).as("back to the limit's own").isFalse();
    }

    @Test
    void anUnknownPlanHasTheLimitsOwnQuota() {
        this.registry.register(this.login);
        this.registry.setPlans("login", Map.of("pro", 8L));
        assertThat(this.registry.handle("login").definition("gold")).isEqualTo(this.login);
        assertThat(this.registry.handle("login").definition(" ")).isEqualTo(this.login);
    }

    @Test
    void plansFollowRunTimeChangesOfTheLimit() {
        this.registry.register(this.login);
        this.registry.setPlans("login", Map.of("pro", 8L));
        this.registry.updateLimit("login", 6);
        assertThat(this.registry.handle("login").definition("pro").limit()).as("a plan keeps its own quota")
                .isEqualTo(8);
        LimitDefinition longer = LimitDefinition.of("login", 5, Duration.ofMinutes(2), 12);
        this.registry.redefine(longer);
        assertThat(this.registry.handle("login").definition("pro")).isEqualTo(longer.withLimit(8));
        this.registry.setPlans("login", Map.of());
        assertThat(this.registry.handle("login").definition("pro")).isEqualTo(longer);
    }

    @Test
    void aPlanNeedsANameAndAPositiveLimit() {
        this.registry.register(this.login);
        assertThatExceptionOfType(InvalidLimitException.class)
                .isThrownBy(() -> this.registry.setPlans("login", Map.of("pro", 0L)))
                .withMessage("Limit 'login': plan 'pro' must have a limit greater than 0 but had 0");
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.setPlans("login", Map.of(" ", 3L)))
                .withMessage("Limit 'login': a plan needs a name");
        assertThat(this.registry.handle("login").plans()).as("nothing changed").isEmpty();
    }

}
