package io.slidinglimiter.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documents are doors that open: every relative link of README.md, BENCHMARKS.md and the pages
 * under docs/ names a file that exists and, for a Markdown file, a heading it has (GitHub's anchors).
 */
class DocumentationLinksTests {

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.+)$", Pattern.MULTILINE);

    /** The repository's root: the tests run in the module's folder. */
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everyRelativeLinkOfTheDocumentsResolves() throws IOException {
        List<Path> documents = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("BENCHMARKS.md")));
        try (Stream<Path> pages = Files.list(ROOT.resolve("docs"))) {
            pages.filter((page) -> page.toString().endsWith(".md")).sorted().forEach(documents::add);
        }
        assertThat(documents).as("README.md links pages under docs/").hasSizeGreaterThan(2);
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path document : documents) {
            Matcher link = LINK.matcher(Files.readString(document));
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("^[a-z]+:.*")) {
                    continue;
                }
                links++;
                int hash = target.indexOf('#');
                String file = (hash >= 0) ? target.substring(0, hash) : target;
                String anchor = (hash >= 0) ? target.substring(hash + 1) : null;
                Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(ROOT.relativize(document) + ": " + target + " (no such file)");
                }
                else if (anchor != null && resolved.toString().endsWith(".md") && !anchors(resolved).contains(anchor)) {
                    broken.add(ROOT.relativize(document) + ": " + target + " (no such heading)");
                }
            }
        }
        assertThat(links).as("relative links found").isPositive();
        assertThat(broken).isEmpty();
    }

    @Test
    void theReadmeStaysADoor() throws IOException {
        assertThat(Files.readAllLines(ROOT.resolve("README.md"))).as("README.md's lines").hasSizeLessThanOrEqualTo(300);
    }

    /** The anchors GitHub gives a Markdown file's headings. */
    private static Set<String> anchors(Path markdown) throws IOException {
        Set<String> anchors = new HashSet<>();
        Matcher heading = HEADING.matcher(Files.readString(markdown));
        while (heading.find()) {
            String slug = heading.group(1).trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            String unique = slug;
            for (int n = 1; !anchors.add(unique); n++) {
                unique = slug + "-" + n;
            }
        }
        return anchors;
    }

}
