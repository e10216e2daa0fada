package io.slidinglimiter.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packages point one way: {@code autoconfigure} wires {@code aop}, {@code web},
 * {@code expression} and {@code config}; none of those reaches back up, and {@code web} does not
 * reach into {@code aop}.
 */
class PackageLayeringTests {

    private static final Path SOURCES = Path.of("src/main/java/io/slidinglimiter");

    @Test
    void noLowerPackageImportsAutoconfigure() throws IOException {
        for (String lower : List.of("aop", "web", "expression", "config")) {
            assertThat(importers(lower, "io.slidinglimiter.autoconfigure")).as(lower).isEmpty();
        }
    }

    @Test
    void webAndExpressionDoNotImportAop() throws IOException {
        assertThat(importers("web", "io.slidinglimiter.aop")).isEmpty();
        assertThat(importers("expression", "io.slidinglimiter.aop")).isEmpty();
        assertThat(importers("expression", "io.slidinglimiter.web")).isEmpty();
    }

    private static List<String> importers(String lowerPackage, String upperPackage) throws IOException {
        try (Stream<Path> files = Files.list(SOURCES.resolve(lowerPackage))) {
            return files.filter((file) -> contains(file, "import " + upperPackage + ".")
                    || contains(file, "import static " + upperPackage + "."))
                    .map((file) -> file.getFileName().toString())
                    .toList();
        }
    }

    private static boolean contains(Path file, String text) {
        try {
            return Files.readString(file).contains(text);
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

}
