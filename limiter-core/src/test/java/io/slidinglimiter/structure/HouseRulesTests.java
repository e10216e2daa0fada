package io.slidinglimiter.structure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The house rules a reader can rely on, over the main sources of every module.
 * <p>
 * No file is longer than {@value #MAX_LINES} lines (the {@code @ConfigurationProperties} class
 * aside, shaped as Spring Boot's own are): an alarm, not a target. Every class says its one job in
 * the first sentence of its Javadoc, without "and".
 */
class HouseRulesTests {

    static final int MAX_LINES = 500;

    private static final Path ROOT = Path.of("..");

    /** A top-level type's Javadoc and the declaration it comes before. */
    private static final Pattern TYPE_DOC = Pattern.compile("/\\*\\*(.*?)\\*/\\s*(?:@[\\w.]+(?:\\([^)]*\\))?\\s*)*"
            + "(?:public\\s+|final\\s+|abstract\\s+|sealed\\s+|non-sealed\\s+)*(?:class|interface|enum|record|@interface)\\s+\\w+",
            Pattern.DOTALL);

    /** Where a first sentence ends: a full stop before white space, or a new paragraph. */
    private static final Pattern SENTENCE_END = Pattern.compile("\\.(?=\\s)|<p>");

    @Test
    void noMainFileIsLongerThanTheLimit() throws IOException {
        Map<String, Long> tooLong = new TreeMap<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path file : mainSources(files)) {
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

    @Test
    void everyMainTypeNamesOneJobInItsFirstSentence() throws IOException {
        Map<String, String> twoJobs = new TreeMap<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path file : mainSources(files)) {
                if (file.getFileName().toString().equals("package-info.java")) {
                    continue;
                }
                Matcher doc = TYPE_DOC.matcher(Files.readString(file));
                if (!doc.find()) {
                    twoJobs.put(ROOT.relativize(file).toString(), "(no Javadoc)");
                    continue;
                }
                String text = doc.group(1).replaceAll("(?m)^\\s*\\*\\s?", " ").replaceAll("\\s+", " ").trim();
                Matcher end = SENTENCE_END.matcher(text);
                String first = end.find() ? text.substring(0, end.start()) : text;
                if (first.matches(".*\\band\\b.*")) {
                    twoJobs.put(ROOT.relativize(file).toString(), first);
                }
            }
        }
        assertThat(twoJobs).as("types whose first Javadoc sentence names more than one job").isEmpty();
    }

    private static List<Path> mainSources(Stream<Path> files) {
        return files.filter((path) -> path.toString().endsWith(".java") && path.toString().contains("/src/main/java/")
                && !path.toString().contains("/target/")).toList();
    }

}
