package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring MVC controller method that returns a {@code CompletableFuture}, over real HTTP: decided
 * before the method runs, with the request in its key; the 200 carries the headers, and the 429
 * all three with the problem body, as for a plain method; a denied call never runs.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class StagedResultsHttpTests {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    private int port;

    @Autowired
    private WebTestApplication.Endpoints endpoints;

    @Test
    void aFutureIsLimitedLikeAPlainMethod() throws Exception {
        int before = this.endpoints.futureCalls();
        HttpResponse<String> first = get("/future/ada");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("later, ada");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"future\";q=2;w=60");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"future\";r=1;t=60");
        assertThat(get("/future/ada").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/future/ada");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"future\";q=2;w=60");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"future\";r=0;t=60");
        assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(denied.body()).contains("\"status\":429").contains("\"violated-policies\":[\"future\"]");
        assertThat(this.endpoints.futureCalls() - before).as("the denied call did not run").isEqualTo(2);
    }

    @Test
    void keysFromTheRequestAreIndependent() throws Exception {
        assertThat(get("/future/grace").statusCode()).isEqualTo(200);
        assertThat(get("/future/grace").statusCode()).isEqualTo(200);
        assertThat(get("/future/grace").statusCode()).isEqualTo(429);
        assertThat(get("/future/linus").statusCode()).isEqualTo(200);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return this.client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

}
