package io.slidinglimiter.standalone;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code limiter-core} and {@code limiter-redis} stand alone: the local and the Redis backend,
 * through {@code RateLimiters}, in a class loader that holds the two, Lettuce and its dependencies,
 * and no Spring (nor commons-logging, which arrives with spring-core).
 */
class CoreWithoutSpringTests {

    @Test
    void theLocalAndRedisBackendsDecideWithoutSpringOnTheClassPath() throws Exception {
        try (RedisServer server = RedisServer.start(); URLClassLoader withoutSpring = withoutSpring()) {
            assertThatExceptionOfType(ClassNotFoundException.class)
                    .isThrownBy(() -> withoutSpring.loadClass("org.springframework.core.SpringVersion"));
            assertThatExceptionOfType(ClassNotFoundException.class)
                    .isThrownBy(() -> withoutSpring.loadClass("org.apache.commons.logging.LogFactory"));
            Class<?> scenario = withoutSpring.loadClass(WithoutSpringScenario.class.getName());
            assertThat(scenario.getClassLoader()).isSameAs(withoutSpring);
            // Lettuce finds its flight-recorder events through the context class loader of whichever
            // thread connects: here the application's, whose Lettuce is another copy. Off for this loader.
            String jfr = System.setProperty("io.lettuce.core.jfr", "false");
            Object verdicts;
            try {
                verdicts = scenario.getMethod("run", String.class).invoke(null, "redis://127.0.0.1:" + server.port());
            }
            finally {
                if (jfr == null) {
                    System.clearProperty("io.lettuce.core.jfr");
                }
                else {
                    System.setProperty("io.lettuce.core.jfr", jfr);
                }
            }
            assertThat(verdicts).asList().containsExactly(true, true, false, true, true, false);
        }
    }

    /** The test class path without Spring, with no parent but the platform's. */
    private static URLClassLoader withoutSpring() throws MalformedURLException {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<URL> urls = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            String path = entry.replace(File.separatorChar, '/');
            if (path.contains("/org/springframework/") || path.contains("commons-logging")
                    || path.contains("spring-jcl")) {
                continue;
            }
            urls.add(new File(entry).toURI().toURL());
        }
        return new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
    }

}
