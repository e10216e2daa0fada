package io.slidinglimiter.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.testsupport.FreePorts;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application whose Redis does not answer at start (docs/redis.md): one WARN naming the address
 * and what the limiter does meanwhile, then, once decisions fail, the outage's line; the run-time
 * changes' reads, which fail too, add no warning of their own.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisUnreachableAtStartTests {

    /** The limiter's loggers, as Spring Boot's console shortens their names ({@code i.s.a.LimiterRedis...}). */
    private static final Pattern LIMITER_LOGGER = Pattern.compile(" (io\\.slidinglimiter|i\\.s)\\.");

    @Test
    void oneWarningNamesTheAddressThenTheOutageIsLoggedOnce(CapturedOutput output) throws Exception {
        // A port this JVM holds, on which nothing listens: no other test's server can take it.
        int port = FreePorts.next((any) -> true);
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(
                RateLimitersEndpointIntegrationTests.OperationsApplication.class).properties("server.port=0",
                        "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                        "limiter.redis.timeout=100ms", "limiter.backend=redis", "limiter.limits.api.limit=5",
                        "limiter.limits.api.window=1m", "limiter.limits.greet.limit=5",
                        "limiter.limits.greet.window=1m", "limiter.limits.open.limit=5",
                        "limiter.limits.open.window=1m")
                .run()) {
            // The run-time changes are read each second: three failed reads would once have warned.
            RedisServer.sleepMillis(4_000);
            List<String> atStart = limiterWarnings(output);
            assertThat(atStart).hasSize(1);
            assertThat(atStart.get(0)).contains("could not connect to Redis at 127.0.0.1:" + port)
                    .contains("limiter.redis.on-failure=fail-open");
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort()
                            + "/api?user=alice")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as("fail-open").isEqualTo(200);
            List<String> after = limiterWarnings(output);
            assertThat(after).hasSize(2);
            assertThat(after.get(1)).contains("Redis is failing the rate limiter");
        }
    }

    private static List<String> limiterWarnings(CapturedOutput output) {
        return Arrays.stream(output.getOut().split("\n"))
                .filter((line) -> line.contains(" WARN ") && LIMITER_LOGGER.matcher(line).find()).toList();
    }

}
