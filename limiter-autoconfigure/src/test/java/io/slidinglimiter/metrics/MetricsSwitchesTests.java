package io.slidinglimiter.metrics;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanDefinitionStoreException;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.context.ConfigurableApplicationContext;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.testsupport.ThreadAllocation;
import io.slidinglimiter.core.TimedBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The starter's per-decision meters, in an application with Actuator. A local decision is neither
 * timed nor observed unless {@code limiter.observations.local} is set: it is the backend's alone,
 * allocating nothing, and {@code limiter.requests} still counts it. With the property set every
 * decision is timed ({@code limiter.backend.duration}) and observed ({@code limiter.decision}), and
 * Boot's switches apply: {@code management.observations.enable.*} (longest match first, then
 * {@code all}) leaves the observation out, and {@code management.metrics.enable.*} the timer. With
 * both off a decision is again the backend's alone.
 */
class MetricsSwitchesTests {

    private static final String TIMER_OFF = "management.metrics.enable.limiter.backend.duration=false";

    private static final String OBSERVATION_OFF = "management.observations.enable.limiter=false";

    private static final String[] METERED = { "limiter.limits.metered.limit=1000000000",
            "limiter.limits.metered.window=1h" };

    @Test
    void byDefaultALocalDecisionIsNeitherTimedNorObservedAndStillCounted() throws Throwable {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(MeteredApplication.class)
            .web(WebApplicationType.NONE).properties(METERED).run()) {
            assertThat(context.getBeansOfType(LimiterObservations.class)).as("observations are on").hasSize(1);
            assertThat(context.getBean(RateLimitBackend.class)).isNotInstanceOf(TimedBackend.class);
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            ThreadAllocation.Measured admissions = ThreadAllocation.of(() -> rateLimiters.admit("metered", "k"));
            assertThat(admissions.bytesPerCall()).as("bytes allocated per admission").isZero();
            assertThat(context.getBean(MeterRegistry.class).get("limiter.requests").tag("limit", "metered")
                .tag("outcome", "allowed").functionCounter().count()).isEqualTo(ThreadAllocation.TOTAL_CALLS);
            assertThat(context.getBean(MeterRegistry.class).find("limiter.backend.duration").timers()).isEmpty();
            assertThat(decisionTimerCount(context)).isZero();
        }
    }

    @Test
    void withLocalObservationsEachDecisionIsTimedAndObserved() {
        try (ConfigurableApplicationContext context = start()) {
            decideTwice(context);
            assertThat(backendTimer(context).count()).isEqualTo(2);
            assertThat(decisionTimerCount(context)).isEqualTo(2);
        }
    }

    @Test
    void bootsObservationSwitchLeavesTheObservationOutAndKeepsTheTimer() {
        try (ConfigurableApplicationContext context = start(OBSERVATION_OFF)) {
            assertThat(context.getBeansOfType(LimiterObservations.class)).isEmpty();
            decideTwice(context);
            assertThat(backendTimer(context).count()).isEqualTo(2);
            assertThat(decisionTimerCount(context)).isZero();
        }
    }

    @Test
    void theLongestMatchOfTheObservationSwitchWins() {
        try (ConfigurableApplicationContext context = start("management.observations.enable.all=false",
                "management.observations.enable.limiter.decision=true")) {
            decideTwice(context);
            assertThat(decisionTimerCount(context)).isEqualTo(2);
        }
        try (ConfigurableApplicationContext context = start("management.observations.enable.limiter=true",
                "management.observations.enable.limiter.decision=false")) {
            decideTwice(context);
            assertThat(decisionTimerCount(context)).isZero();
        }
        try (ConfigurableApplicationContext context = start("management.observations.enable.all=false")) {
            assertThat(context.getBeansOfType(LimiterObservations.class)).isEmpty();
        }
    }

    /** Read as Boot reads it, a switch that is not a boolean fails the start with Boot's binding analysis. */
    @Test
    void aSwitchThatIsNotABooleanFailsTheStartNamingIt() {
        Throwable failure = catchThrowable(() -> start("management.observations.enable.limiter=maybe"));
        assertThat(failure).isInstanceOf(BeanDefinitionStoreException.class)
            .hasRootCauseMessage("Invalid boolean value 'maybe'");
        BindException binding = FailureAnalysisAccess.bindFailure(failure);
        assertThat(binding.getProperty().getName().toString()).isEqualTo("management.observations.enable.limiter");
    }

    @Test
    void bootsMetricsSwitchLeavesTheTimerOutAndKeepsTheObservation() {
        try (ConfigurableApplicationContext context = start(TIMER_OFF)) {
            decideTwice(context);
            assertThat(context.getBean(MeterRegistry.class).find("limiter.backend.duration").timers()).isEmpty();
            assertThat(decisionTimerCount(context)).isEqualTo(2);
        }
    }

    @Test
    void withBothSwitchedOffADecisionIsTheBackendsAloneAndStillCounted() throws Throwable {
        try (ConfigurableApplicationContext context = start(TIMER_OFF, OBSERVATION_OFF)) {
            assertThat(context.getBean(RateLimitBackend.class)).isNotInstanceOf(TimedBackend.class);
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            ThreadAllocation.Measured admissions = ThreadAllocation.of(() -> rateLimiters.admit("metered", "k"));
            assertThat(admissions.bytesPerCall()).as("bytes allocated per admission").isZero();
            long calls = ThreadAllocation.TOTAL_CALLS;
            assertThat(admissions.answeredYes()).isEqualTo(calls);
            assertThat(context.getBean(MeterRegistry.class).get("limiter.requests").tag("limit", "metered")
                .tag("outcome", "allowed").functionCounter().count()).isEqualTo(calls);
            assertThat(decisionTimerCount(context)).isZero();
        }
    }

    private static void decideTwice(ConfigurableApplicationContext context) {
        RateLimiters rateLimiters = context.getBean(RateLimiters.class);
        assertThat(rateLimiters.tryAcquire("metered", "k").allowed()).isTrue();
        assertThat(rateLimiters.admit("metered", "k")).isTrue();
    }

    private static Timer backendTimer(ConfigurableApplicationContext context) {
        return context.getBean(MeterRegistry.class).get("limiter.backend.duration").tag("backend", "local").timer();
    }

    private static long decisionTimerCount(ConfigurableApplicationContext context) {
        Timer timer = context.getBean(MeterRegistry.class).find("limiter.decision").tag("limit", "metered")
            .tag("backend", "local").timer();
        return (timer != null) ? timer.count() : 0;
    }

    /** An application whose local decisions are timed and observed, with Boot's switches. */
    private static ConfigurableApplicationContext start(String... switches) {
        return new SpringApplicationBuilder(MeteredApplication.class).web(WebApplicationType.NONE)
            .properties(METERED)
            .properties("limiter.observations.local=true")
            .properties(switches)
            .run();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class MeteredApplication {

    }

}
