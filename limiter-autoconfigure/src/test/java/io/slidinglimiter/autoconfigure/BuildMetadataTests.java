package io.slidinglimiter.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The module's own build wrote the metadata its jar ships: the configuration properties (IDE
 * completion) and the auto-configurations' conditions (read before their classes load). javac runs
 * no processor found on the class path since Java 23, so the build declares them; built on any JDK,
 * the jar holds both.
 */
class BuildMetadataTests {

    @Test
    void theConfigurationPropertiesAreDescribed() throws IOException {
        String metadata = ownResource("META-INF/spring-configuration-metadata.json");
        assertThat(metadata).contains("\"name\": \"limiter.enabled\"").contains("\"name\": \"limiter.redis.timeout\"")
                .contains("\"name\": \"limiter.local.overflow-keys\"");
    }

    @Test
    void theAutoConfigurationsConditionsAreDescribed() throws IOException {
        assertThat(ownResource("META-INF/spring-autoconfigure-metadata.properties"))
                .contains(LimiterActuatorAutoConfiguration.class.getName() + ".AutoConfigureAfter=")
                .contains(LimiterAutoConfiguration.class.getName() + "=");
    }

    /** A resource of this module's output, not of another jar on the class path. */
    private static String ownResource(String name) throws IOException {
        URL classes = LimiterAutoConfiguration.class.getProtectionDomain().getCodeSource().getLocation();
        URL resource = new URL(classes, name);
        try (InputStream in = resource.openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new AssertionError("No " + name + " in " + classes + ": did the build run its annotation processors?",
                    ex);
        }
    }

}
