package io.slidinglimiter.web;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.micrometer.observation.ObservationRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code limiter.decision} observation per decision, in Spring Boot's own observation registry:
 * its timer carries the keys {@code limit}, {@code outcome} and {@code backend}, and Boot's
 * {@code management.observations.enable.limiter=false} switches it off.
 */
class DecisionObservationIntegrationTests {

    @Test
    void eachDecisionIsObservedWithItsKeys() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
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
        try (ConfigurableApplicationContext context = start("management.observations.enable.limiter=false")) {
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
