package io.slidinglimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class LimitRegistryTest {

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

}
