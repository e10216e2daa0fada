package io.slidinglimiter.structure;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.Rooms;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rooms of {@code redis/} point one way: no type reaches, through others, back to one that
 * reaches it (read from the compiled classes by {@code jdeps}), and the walk of a key goes down only.
 */
class RedisRoomsTests {

    @Test
    void theRedisPackagePointsOneWay() {
        Map<String, Set<String>> arrows = Rooms.arrows(Path.of("target/classes"), "io.slidinglimiter.redis.");
        assertThat(arrows).as("jdeps read the package").containsKey("ResilientRedisBackend");
        assertThat(Rooms.cycles(arrows)).as("groups of types that reach each other").isEmpty();
    }

    @Test
    void theWalkOfAKeyGoesDownOnly() {
        Map<String, Set<String>> arrows = Rooms.arrows(Path.of("target/classes"), "io.slidinglimiter.redis.");
        List<String> walk = List.of("ResilientRedisBackend", "Leases", "RedisBackend", "ScriptMessages");
        for (int i = 1; i < walk.size(); i++) {
            for (int j = 0; j < i; j++) {
                assertThat(Rooms.reaches(arrows, walk.get(i), walk.get(j))).as(walk.get(i) + " reaches back to " + walk.get(j))
                        .isFalse();
            }
        }
        assertThat(Rooms.reaches(arrows, "RedisBackend", "LettuceScriptRunner")).as("the script runs through the runner")
                .isTrue();
    }

}
