package io.slidinglimiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample in the jdbc profile, on a PostgreSQL server of the test's own: they
 * share one limit, as docs/postgresql.md shows, and say so in the endpoint and health.
 */
class SampleJdbcProfileTests {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void twoInstancesShareOneLimitInTheDatabase() throws Exception {
        try (PostgresServer database = PostgresServer.start();
                ConfigurableApplicationContext first = instance(database);
                ConfigurableApplicationContext second = instance(database)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                statuses.add(status((i % 2 == 0) ? first : second, "/api/hello"));
            }
            assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
            assertThat(body(second, "/actuator/ratelimiters/hello")).contains("\"backend\":\"jdbc\"");
            assertThat(body(first, "/actuator/health")).contains("\"ratelimiter\":{").contains("\"jdbc\":\"UP\"");
        }
    }

    private static ConfigurableApplicationContext instance(PostgresServer database) {
        return new SpringApplicationBuilder(SampleApplication.class).profiles("jdbc")
                .properties("server.port=0", "spring.datasource.url=" + database.jdbcUrl(),
                        "spring.datasource.username=" + PostgresServer.USER, "limiter.jdbc.timeout=5s")
                .run();
    }

    private String body(ConfigurableApplicationContext instance, String path) throws Exception {
        int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
        return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private int status(ConfigurableApplicationContext instance, String path) throws Exception {
        int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
        return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

}
