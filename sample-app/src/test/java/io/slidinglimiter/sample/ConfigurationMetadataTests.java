package io.slidinglimiter.sample;

import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.jar.JarFile;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.json.JsonParserFactory;

import io.slidinglimiter.autoconfigure.LimiterProperties;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.failover.FailurePolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata IDEs read (IntelliJ IDEA, VS Code's Spring Boot Tools), as an
 * application gets it from the starter: a description for every property of a limit, a plan and
 * a URL rule, which the annotation processor leaves out for map values and list elements, with
 * value hints for the algorithm, the backend and the failure policy; and the file they were merged
 * from kept out of the jar.
 */
class ConfigurationMetadataTests {

    private static final String ADDITIONAL = "META-INF/additional-spring-configuration-metadata.json";

    private static Path published;

    private static Map<String, Map<String, Object>> properties;

    private static Map<String, Map<String, Object>> hints;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void readTheMetadataTheApplicationGets() throws IOException, URISyntaxException {
        published = Path.of(LimiterProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Map<String, Object> metadata = JsonParserFactory.getJsonParser()
                .parseMap(read(published, "META-INF/spring-configuration-metadata.json"));
        properties = byName((List<Map<String, Object>>) metadata.get("properties"));
        hints = byName((List<Map<String, Object>>) metadata.get("hints"));
    }

    @Test
    void everyPropertyOfALimitAPlanAndARuleIsDescribed() {
        assertDescribed("limiter.limits.*.", LimiterProperties.Limit.class);
        assertDescribed("limiter.limits.*.plans.*.", LimiterProperties.Plan.class);
        assertDescribed("limiter.http.rules[*].", LimiterProperties.Rule.class);
    }

    @Test
    void theAlgorithmTheBackendAndTheFailurePolicyHaveTheirValuesHinted() {
        assertThat(hinted("limiter.limits.*.algorithm"))
                .containsExactlyElementsOf(Arrays.stream(Algorithm.values()).map(Algorithm::id).toList());
        assertThat(hinted("limiter.limits.*.backend")).containsExactly("local", "redis");
        assertThat(hinted("limiter.limits.*.on-failure"))
                .containsExactlyElementsOf(Arrays.stream(FailurePolicy.values()).map(FailurePolicy::id).toList());
        assertThat(hinted("limiter.redis.on-failure")).isEqualTo(hinted("limiter.limits.*.on-failure"));
        assertThat(hinted("limiter.http.rules[*].methods")).contains("GET", "POST");
    }

    @Test
    void theFileTheMetadataWasMergedFromStaysOutOfTheJar() throws IOException {
        if (Files.isDirectory(published)) {
            // Run before the jar was built (mvn test): the merged file is all there is to check.
            assertThat(properties).containsKey("limiter.limits.*.limit");
            return;
        }
        try (JarFile jar = new JarFile(published.toFile())) {
            assertThat(jar.getEntry(ADDITIONAL)).as("%s in %s", ADDITIONAL, published).isNull();
        }
    }

    private static void assertDescribed(String prefix, Class<?> type) {
        for (PropertyDescriptor property : beanProperties(type)) {
            String name = prefix + kebab(property.getName());
            assertThat(properties).as("metadata of %s", name).containsKey(name);
            assertThat((String) properties.get(name).get("description")).as("description of %s", name).isNotBlank();
            assertThat(properties.get(name).get("sourceType")).isEqualTo(type.getName());
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> hinted(String name) {
        assertThat(hints).as("hints of %s", name).containsKey(name);
        List<Map<String, Object>> values = (List<Map<String, Object>>) hints.get(name).get("values");
        return values.stream().map((value) -> (String) value.get("value")).toList();
    }

    private static List<PropertyDescriptor> beanProperties(Class<?> type) {
        try {
            return Arrays.stream(Introspector.getBeanInfo(type, Object.class).getPropertyDescriptors())
                    .filter((property) -> property.getWriteMethod() != null).toList();
        }
        catch (java.beans.IntrospectionException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    private static Map<String, Map<String, Object>> byName(List<Map<String, Object>> items) {
        return items.stream().collect(Collectors.toMap((item) -> (String) item.get("name"), Function.identity(),
                (first, second) -> first, HashMap::new));
    }

    private static String read(Path location, String entry) throws IOException {
        if (Files.isDirectory(location)) {
            return Files.readString(location.resolve(entry));
        }
        try (JarFile jar = new JarFile(location.toFile()); InputStream in = jar.getInputStream(jar.getEntry(entry))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

}
