package io.slidinglimiter.structure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A house rule a reader can rely on: no main source file of any module is longer than
 * {@value #MAX_LINES} lines (the {@code @ConfigurationProperties} class aside, shaped as Spring
 * Boot's own are). An alarm, not a target.
 */
class HouseRulesTests {

    static final int MAX_LINES = 500;

    private static final Path ROOT = Path.of("..");

    @Test
    void noMainFileIsLongerThanTheLimit() throws IOException {
        Map<String, Long> tooLong = new TreeMap<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path file : files.filter((path) -> path.toString().endsWith(".java")
                    && path.toString().contains("/src/main/java/") && !path.toString().contains("/target/")).toList()) {
                long lines;
                try (Stream<String> text = Files.lines(file)) {
                    lines = text.count();
                }
                if (lines > MAX_LINES && !file.getFileName().toString().equals("LimiterProperties.java")) {
                    tooLong.put(ROOT.relativize(file).toString(), lines);
                }
            }
        }
        assertThat(tooLong).isEmpty();
    }

}
