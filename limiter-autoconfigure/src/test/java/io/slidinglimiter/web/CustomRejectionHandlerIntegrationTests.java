package io.slidinglimiter.web;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link RateLimitRejectionHandler} bean replaces the 429 writer; {@code limiter.http.headers=false}
 * keeps the RateLimit headers off allowed responses but not off rejections.
 */
@SpringBootTest(classes = { WebTestApplication.class, CustomRejectionHandlerIntegrationTests.PlainRejection.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "limiter.http.headers=false")
class CustomRejectionHandlerIntegrationTests {

    @LocalServerPort
    private int port;

    @Test
    void theApplicationsHandlerWritesTheRejection() throws Exception {
        HttpResponse<String> allowed = get("/hello/custom");
        assertThat(allowed.statusCode()).isEqualTo(200);
        assertThat(allowed.headers().firstValue("RateLimit")).isEmpty();
        assertThat(allowed.headers().firstValue("RateLimit-Policy")).isEmpty();
        get("/hello/custom");
        HttpResponse<String> denied = get("/hello/custom");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.body()).isEqualTo("slow down, hello");
        assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"hello\";r=0;t=60");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return new LocalHttp(this.port).get(path);
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainRejection {

        @Bean
        RateLimitRejectionHandler plainRejection() {
            return (request, response, exception) -> {
                response.setStatus(429);
                response.setContentType("text/plain");
                response.getWriter().write("slow down, " + exception.getLimitName());
            };
        }

    }

}
