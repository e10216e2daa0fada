package io.slidinglimiter.metrics;

import org.junit.jupiter.api.Test;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default convention's keys and name for each limit, backend and outcome; they are worked out
 * once and reused, and must be what a decision built them from whatever came before.
 */
class DefaultDecisionObservationConventionTests {

    private final DefaultDecisionObservationConvention convention = new DefaultDecisionObservationConvention();

    @Test
    void eachOutcomeHasItsKeys() {
        assertThat(keysOf("api", "local", true)).containsExactlyInAnyOrder(KeyValue.of("limit", "api"),
                KeyValue.of("outcome", "allowed"), KeyValue.of("backend", "local"));
        assertThat(keysOf("api", "local", false)).contains(KeyValue.of("outcome", "rejected"));
        assertThat(keysOf("api", "local", null)).contains(KeyValue.of("outcome", "error"));
        assertThat(keysOf("api", "local", true)).contains(KeyValue.of("outcome", "allowed"));
    }

    @Test
    void theNameAndKeysAreThoseOfTheLimitsDecided() {
        DecisionObservationContext both = new DecisionObservationContext("per-user,global", "redis");
        assertThat(this.convention.getName()).isEqualTo("limiter.decision");
        assertThat(this.convention.getContextualName(both)).isEqualTo("limiter per-user,global");
        assertThat(keysOf("per-user,global", "redis", false)).contains(KeyValue.of("limit", "per-user,global"),
                KeyValue.of("backend", "redis"));
        assertThat(keysOf("api", "redis", false)).contains(KeyValue.of("limit", "api"));
    }

    @Test
    void aLimitThatMovedToAnotherBackendShowsTheNewOne() {
        assertThat(keysOf("api", "local", true)).contains(KeyValue.of("backend", "local"));
        assertThat(keysOf("api", "redis", true)).contains(KeyValue.of("backend", "redis"));
        assertThat(keysOf("api", "local", true)).contains(KeyValue.of("backend", "local"));
    }

    @Test
    void aRepeatedDecisionReusesItsKeys() {
        assertThat(keysOf("api", "local", true)).isSameAs(keysOf("api", "local", true));
    }

    @Test
    void limitsBeyondTheCachedOnesStillGetTheirOwnKeys() {
        for (int i = 0; i < DefaultDecisionObservationConvention.MAX_CACHED_LIMITS + 10; i++) {
            assertThat(keysOf("limit-" + i, "local", true)).contains(KeyValue.of("limit", "limit-" + i));
        }
        String beyond = "limit-" + (DefaultDecisionObservationConvention.MAX_CACHED_LIMITS + 5);
        assertThat(keysOf(beyond, "redis", false)).containsExactlyInAnyOrder(KeyValue.of("limit", beyond),
                KeyValue.of("outcome", "rejected"), KeyValue.of("backend", "redis"));
        assertThat(this.convention.getContextualName(new DecisionObservationContext(beyond, "redis")))
                .isEqualTo("limiter " + beyond);
    }

    private KeyValues keysOf(String limits, String backend, Boolean allowed) {
        DecisionObservationContext context = new DecisionObservationContext(limits, backend);
        if (allowed != null) {
            context.setAllowed(allowed);
        }
        return this.convention.getLowCardinalityKeyValues(context);
    }

}
