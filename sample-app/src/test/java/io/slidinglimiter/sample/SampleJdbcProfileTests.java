package io.slidinglimiter.sample;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample in the jdbc profile, on a PostgreSQL server of the test's own: they
 * share one limit, as docs/postgresql.md shows, and say so in the endpoint and health.
 */
class SampleJdbcProfileTests {

    @Test
    void twoInstancesShareOneLimitInTheDatabase() throws Exception {
        try (PostgresServer database = PostgresServer.start();
                ConfigurableApplicationContext first = instance(database);
                ConfigurableApplicationContext second = instance(database)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                statuses.add(Instances.status((i % 2 == 0) ? first : second, "/api/hello"));
            }
            assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
            assertThat(Instances.body(second, "/actuator/ratelimiters/hello")).contains("\"backend\":\"jdbc\"");
            assertThat(Instances.body(first, "/actuator/health")).contains("\"ratelimiter\":{").contains("\"jdbc\":\"UP\"");
        }
    }

    private static ConfigurableApplicationContext instance(PostgresServer database) {
        // As arguments: the profile's own file names a database at localhost:5432, which defaults would not override.
        return new SpringApplicationBuilder(SampleApplication.class).profiles("jdbc")
                .run("--server.port=0", "--spring.datasource.url=" + database.jdbcUrl(),
                        "--spring.datasource.username=" + PostgresServer.USER, "--limiter.jdbc.timeout=5s");
    }

}
