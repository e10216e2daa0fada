package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.function.IntSupplier;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.slidinglimiter.RateLimiters;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring MVC's asynchronous handling, over real HTTP: a controller method that returns a
 * {@code CompletableFuture} (decided before the method runs), a {@code Mono} or a {@code Flux}
 * (decided when Spring MVC subscribes to it, streamed or collected), with the request in its key;
 * the 200 carries the headers, and the 429 all three with the problem body, as for a plain method,
 * though the application has a catch-all {@code @ExceptionHandler}; a denied call never runs.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AsynchronousControllersHttpTests {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    private int port;

    @Autowired
    private WebTestApplication.Endpoints endpoints;

    @Autowired
    private RateLimiters rateLimiters;

    @Test
    void aFutureIsLimitedLikeAPlainMethod() throws Exception {
        assertLimitedLikeAPlainMethod("future", "later, ", this.endpoints::futureCalls);
    }

    @Test
    void keysFromTheRequestAreIndependent() throws Exception {
        assertThat(get("/future/margaret").statusCode()).isEqualTo(200);
        assertThat(get("/future/margaret").statusCode()).isEqualTo(200);
        assertThat(get("/future/margaret").statusCode()).isEqualTo(429);
        assertThat(get("/future/linus").statusCode()).isEqualTo(200);
    }

    @Test
    void aMonoOnTheServletStackSeesTheRequestAndAnswersWithTheHeaders() throws Exception {
        assertLimitedLikeAPlainMethod("mono", "soon, ", this.endpoints::monoCalls);
    }

    @Test
    void aStreamedFluxOnTheServletStackSeesTheRequestAndAnswersWithTheHeaders() throws Exception {
        assertLimitedLikeAPlainMethod("flux", "any time, ", this.endpoints::fluxCalls);
    }

    @Test
    void aFutureAndAMonoAreChargedWhatTheyCompletedWith() throws Exception {
        for (String limit : new String[] { "future-rows", "mono-rows" }) {
            HttpResponse<String> rows = get("/" + limit + "?count=2");
            assertThat(rows.statusCode()).isEqualTo(200);
            assertThat(rows.body()).isEqualTo("[1,2]");
            assertThat(this.rateLimiters.usage(limit, "*").used()).as(limit).isEqualTo(2);
        }
    }

    @Test
    void aFluxIsChargedTheElementsItEmitted() throws Exception {
        HttpResponse<String> rows = get("/flux-rows?count=3");
        assertThat(rows.statusCode()).isEqualTo(200);
        assertThat(rows.body()).isEqualTo("[{\"row\":1},{\"row\":2},{\"row\":3}]");
        assertThat(rows.headers().firstValue("RateLimit")).as("settled before the body was written")
                .hasValue("\"flux-rows\";r=7;t=60");
        assertThat(this.rateLimiters.usage("flux-rows", "*").used()).as("settled to the rows").isEqualTo(3);
    }

    /**
     * Two calls with one key admitted with the headers, the third a 429 with all three and the
     * problem body, another key admitted; the denied call's body never ran.
     */
    private void assertLimitedLikeAPlainMethod(String limit, String greeting, IntSupplier bodyRuns)
            throws Exception {
        int before = bodyRuns.getAsInt();
        HttpResponse<String> first = get("/" + limit + "/ada");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo(greeting + "ada");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"" + limit + "\";q=2;w=60");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"" + limit + "\";r=1;t=60");
        assertThat(get("/" + limit + "/ada").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/" + limit + "/ada");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"" + limit + "\";q=2;w=60");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"" + limit + "\";r=0;t=60");
        assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(denied.body()).contains("\"status\":429").contains("\"violated-policies\":[\"" + limit + "\"]");
        assertThat(get("/" + limit + "/grace").statusCode()).as("another key").isEqualTo(200);
        assertThat(bodyRuns.getAsInt() - before).as("the denied call did not run").isEqualTo(3);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return this.client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

}
