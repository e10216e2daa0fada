package io.slidinglimiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample as a user runs it: every demo endpoint limits as the README says.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SampleApplicationTests {

    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    private int port;

    @Test
    void perClientAddressLimit() throws Exception {
        assertThat(statuses("/api/hello", 6)).isEqualTo("200 200 200 200 200 429");
    }

    @Test
    void perUserLimitFromThePath() throws Exception {
        assertThat(statuses("/api/users/alice/profile", 4)).isEqualTo("200 200 200 429");
        assertThat(statuses("/api/users/bob/profile", 1)).isEqualTo("200");
    }

    @Test
    void perApiKeyLimitFromAHeader() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(send(request("/api/data").header("X-Api-Key", "k1")).statusCode()).isEqualTo(200);
        }
        assertThat(send(request("/api/data").header("X-Api-Key", "k1")).statusCode()).isEqualTo(429);
        assertThat(send(request("/api/data").header("X-Api-Key", "k2")).statusCode()).isEqualTo(200);
    }

    @Test
    void keysOnTheProPlanHaveTheirPlansQuota() throws Exception {
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> response = send(request("/api/data").header("X-Api-Key", "pro-k1"));
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"api-key\";q=50;w=10");
        }
    }

    @Test
    void loginLimitOfFivePerMinute() throws Exception {
        assertThat(statuses(() -> request("/login?username=carol").POST(HttpRequest.BodyPublishers.noBody()), 6))
                .isEqualTo("200 200 200 200 200 429");
    }

    /** The login form as a browser posts it, with Spring Cloud Gateway Server MVC on the class path. */
    @Test
    void aFormPostedLoginIsLimitedToo() throws Exception {
        assertThat(statuses(() -> request("/login").header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("username=erin")), 6)).isEqualTo("200 200 200 200 200 429");
    }

    @Test
    void onlyFailedSignInsCount() throws Exception {
        assertThat(statuses(() -> request("/signin?username=dave&password=secret")
                .POST(HttpRequest.BodyPublishers.noBody()), 5)).isEqualTo("200 200 200 200 200");
        assertThat(statuses(() -> request("/signin?username=dave&password=guess")
                .POST(HttpRequest.BodyPublishers.noBody()), 3)).isEqualTo("401 401 401");
        assertThat(statuses(() -> request("/signin?username=dave&password=secret")
                .POST(HttpRequest.BodyPublishers.noBody()), 1)).isEqualTo("429");
    }

    @Test
    void costFromARequestParameter() throws Exception {
        assertThat(send(request("/api/reports?pages=15")).headers().firstValue("RateLimit").orElseThrow())
                .startsWith("\"report-pages\";r=5;");
        assertThat(send(request("/api/reports?pages=6")).statusCode()).isEqualTo(429);
        assertThat(send(request("/api/reports?pages=0")).statusCode()).isEqualTo(400);
    }

    @Test
    void urlRuleWithoutAnnotation() throws Exception {
        assertThat(statuses("/public/news", 11)).endsWith("200 429");
    }

    @Test
    void serviceLayerLimit() throws Exception {
        assertThat(statuses("/api/quote", 11)).endsWith("200 429");
    }

    private String statuses(String path, int requests) throws Exception {
        return statuses(() -> request(path), requests);
    }

    /** The status codes of {@code requests} requests, space-separated. */
    private String statuses(Supplier<HttpRequest.Builder> request, int requests) throws Exception {
        StringBuilder statuses = new StringBuilder();
        for (int i = 0; i < requests; i++) {
            statuses.append(i > 0 ? " " : "").append(send(request.get()).statusCode());
        }
        return statuses.toString();
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path));
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

}
