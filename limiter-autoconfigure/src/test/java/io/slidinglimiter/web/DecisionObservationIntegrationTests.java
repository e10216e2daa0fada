package io.slidinglimiter.web;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.micrometer.observation.ObservationRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code limiter.decision} observation per decision, in Spring Boot's own observation registry:
 * its timer carries the keys {@code limit}, {@code outcome} and {@code backend}, and Boot's
 * {@code management.observations.enable.limiter=false} switches it off. Local decisions are
 * observed only with {@code limiter.observations.local=true}; {@code limiter.requests} counts them
 * either way.
 */
class DecisionObservationIntegrationTests {

    @Test
    void byDefaultLocalDecisionsAreCountedNotObserved() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            LocalHttp http = LocalHttp.of(context);
            http.get("/enforced");
            assertThat(http.get("/actuator/metrics/limiter.decision").statusCode()).isEqualTo(404);
            assertThat(http.get("/actuator/metrics/limiter.requests?tag=limit:enforced&tag=outcome:allowed").body())
                    .contains("{\"statistic\":\"COUNT\",\"value\":1.0}");
        }
    }

    @Test
    void withLocalObservationsEachDecisionIsObservedWithItsKeys() throws Exception {
        try (ConfigurableApplicationContext context = start("limiter.observations.local=true")) {
            assertThat(context.getBean(ObservationRegistry.class).isNoop()).isFalse();
            LocalHttp http = LocalHttp.of(context);
            http.get("/enforced");
            http.get("/enforced");
            assertThat(http.get("/actuator/metrics/limiter.decision?tag=limit:enforced&tag=outcome:allowed"
                    + "&tag=backend:local").body()).contains("{\"statistic\":\"COUNT\",\"value\":1.0}");
            assertThat(http.get("/actuator/metrics/limiter.decision?tag=limit:enforced&tag=outcome:rejected"
                    + "&tag=backend:local").body()).contains("{\"statistic\":\"COUNT\",\"value\":1.0}");
        }
    }

    @Test
    void springBootsSwitchTurnsItOff() throws Exception {
        try (ConfigurableApplicationContext context = start("limiter.observations.local=true",
                "management.observations.enable.limiter=false")) {
            LocalHttp http = LocalHttp.of(context);
            http.get("/enforced");
            assertThat(http.get("/actuator/metrics/limiter.decision").statusCode()).isEqualTo(404);
        }
    }

    private static ConfigurableApplicationContext start(String... more) {
        return new SpringApplicationBuilder(ShadowModeIntegrationTests.ShadowApplication.class)
                .properties("server.port=0", "management.endpoints.web.exposure.include=metrics",
                        "limiter.limits.greet.limit=3", "limiter.limits.greet.window=1m")
                .properties(more).run();
    }

}
