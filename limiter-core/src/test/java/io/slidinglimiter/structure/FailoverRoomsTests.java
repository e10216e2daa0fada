package io.slidinglimiter.structure;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.Rooms;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failover every remote backend shares points one way (read from the compiled classes by
 * {@code jdeps}): a decision walks down from the resilient backend through the breakers to the
 * remote backend's interface, and nothing there reaches back up.
 */
class FailoverRoomsTests {

    private static final String FAILOVER = "io.slidinglimiter.failover.";

    @Test
    void theFailoverPointsOneWay() {
        Map<String, Set<String>> arrows = Rooms.arrows(Path.of("target/classes"), FAILOVER);
        assertThat(arrows).as("jdeps read the package").containsKey("ResilientBackend");
        assertThat(Rooms.cycles(arrows)).as("groups of types that reach each other").isEmpty();
    }

    @Test
    void theWalkOfADecisionGoesDownOnly() {
        Map<String, Set<String>> arrows = Rooms.arrows(Path.of("target/classes"), FAILOVER);
        List<String> walk = List.of("ResilientBackend", "SeveralLimits", "FailurePolicies", "ShardBreakers",
                "CircuitBreaker");
        for (int i = 1; i < walk.size(); i++) {
            for (int j = 0; j < i; j++) {
                assertThat(Rooms.reaches(arrows, walk.get(i), walk.get(j)))
                        .as(walk.get(i) + " reaches back to " + walk.get(j)).isFalse();
            }
        }
        for (String spi : List.of("RemoteBackend", "RemoteLeases", "LateFailure", "ShardFailure")) {
            assertThat(Rooms.reaches(arrows, spi, "ResilientBackend")).as(spi + " reaches the resilient backend")
                    .isFalse();
        }
    }

}
