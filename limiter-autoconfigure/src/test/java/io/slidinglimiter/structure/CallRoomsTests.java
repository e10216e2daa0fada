package io.slidinglimiter.structure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.Rooms;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The walk of an annotated call goes down only (read from the compiled classes by {@code jdeps}):
 * the interceptor ({@code aop}) reaches the call's kernel ({@code call}), which reaches the
 * expressions and the core; the kernel names no transport, and the interceptor none either: each
 * transport adapts the kernel to its answer.
 */
class CallRoomsTests {

    private static final List<String> TRANSPORTS = List.of("web", "grpc", "gateway", "gateway.mvc", "ai");

    private final Map<String, Set<String>> arrows = Rooms.packageArrows(Path.of("target/classes"),
            "io.slidinglimiter.");

    @Test
    void theCallsKernelNamesNoTransport() {
        assertThat(this.arrows).as("jdeps read the classes").containsKeys("call", "aop", "web");
        assertThat(Rooms.reaches(this.arrows, "call", "aop")).as("call reaches aop").isFalse();
        assertThat(Rooms.reaches(this.arrows, "call", "autoconfigure")).as("call reaches autoconfigure").isFalse();
        for (String transport : TRANSPORTS) {
            assertThat(Rooms.reaches(this.arrows, "call", transport)).as("call reaches " + transport).isFalse();
        }
    }

    /**
     * What {@code jdeps} cannot see: a class named in a string (a reflective lookup, a condition, a
     * context key spelling a class). The kernel, the interceptor and each transport name no class of
     * another room of this module so.
     */
    @Test
    void noRoomNamesAnotherRoomsClassInAString() throws IOException {
        Path sources = Path.of("src/main/java/io/slidinglimiter");
        Pattern named = Pattern.compile("\"io\\.slidinglimiter\\.([a-z.]+)\\.[A-Z]");
        List<String> rooms = new ArrayList<>(List.of("call", "aop"));
        rooms.addAll(TRANSPORTS);
        for (String room : rooms) {
            Path directory = sources.resolve(room.replace('.', '/'));
            try (Stream<Path> files = Files.list(directory)) {
                for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
                    Matcher matcher = named.matcher(Files.readString(file));
                    while (matcher.find()) {
                        assertThat(matcher.group(1)).as(file + " names a class of another room in a string")
                                .isEqualTo(room);
                    }
                }
            }
        }
    }

    @Test
    void theInterceptorNamesNoTransport() {
        for (String transport : TRANSPORTS) {
            assertThat(Rooms.reaches(this.arrows, "aop", transport)).as("aop reaches " + transport).isFalse();
        }
    }

    @Test
    void theWalkOfAnAnnotatedCallGoesDownOnly() {
        List<String> walk = List.of("aop", "call", "expression", "config");
        for (int i = 1; i < walk.size(); i++) {
            for (int j = 0; j < i; j++) {
                assertThat(Rooms.reaches(this.arrows, walk.get(i), walk.get(j)))
                        .as(walk.get(i) + " reaches back to " + walk.get(j)).isFalse();
            }
        }
        for (String transport : TRANSPORTS) {
            assertThat(Rooms.reaches(this.arrows, transport, "aop")).as(transport + " reaches the interceptor")
                    .isFalse();
        }
    }

}
