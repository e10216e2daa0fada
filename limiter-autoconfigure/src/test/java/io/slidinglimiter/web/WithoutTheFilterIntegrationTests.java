package io.slidinglimiter.web;

import java.net.http.HttpResponse;

import jakarta.servlet.Filter;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application that replaced the filter with a disabled registration still answers a rejection
 * with 429, written by the exception resolver, and still not by its catch-all handlers.
 */
@SpringBootTest(classes = { WebTestApplication.class, WithoutTheFilterIntegrationTests.NoFilter.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WithoutTheFilterIntegrationTests {

    @LocalServerPort
    private int port;

    @Test
    void theResolverWritesTheRejection() throws Exception {
        assertThat(get("/catch-all").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/catch-all");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(denied.body()).contains("\"violated-policies\":[\"catch-all\"]").doesNotContain("swallowed");
        assertThat(get("/pages?count=0").statusCode()).isEqualTo(400);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return new LocalHttp(this.port).get(path);
    }

    @Configuration(proxyBeanMethods = false)
    static class NoFilter {

        @Bean
        FilterRegistrationBean<Filter> rateLimitFilter() {
            FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(
                    (request, response, chain) -> chain.doFilter(request, response));
            registration.setEnabled(false);
            return registration;
        }

    }

}
