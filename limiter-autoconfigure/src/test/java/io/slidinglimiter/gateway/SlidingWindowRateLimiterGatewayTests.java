package io.slidinglimiter.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.slidinglimiter.autoconfigure.LimiterGatewayAutoConfiguration;
import io.slidinglimiter.web.reactive.ReactiveHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Cloud Gateway route to a downstream server that the test starts, limited by
 * {@code slidingWindowRateLimiter} through the gateway's standard {@code RequestRateLimiter} filter
 * and the route's own {@code KeyResolver}: the 429 carries the headers once and the problem body;
 * the gateway's {@code RedisRateLimiter} (Spring Data Redis is on the class path) stays the
 * filter's default.
 */
@SpringBootTest(classes = SlidingWindowRateLimiterGatewayTests.GatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=reactive", "limiter.limits.downstream.limit=3",
                "limiter.limits.downstream.window=1m", "limiter.gateway.routes.renamed=downstream" })
@ExtendWith(OutputCaptureExtension.class)
class SlidingWindowRateLimiterGatewayTests {

    private static final DisposableServer downstream = HttpServer.create().host("127.0.0.1").port(0)
            .route((routes) -> routes.get("/**", (request, response) -> response.sendString(Mono.just("downstream"))))
            .bindNow();

    @LocalServerPort
    private int port;

    @Autowired
    private RequestRateLimiterGatewayFilterFactory requestRateLimiter;

    private WebTestClient client;

    @DynamicPropertySource
    static void routes(DynamicPropertyRegistry registry) {
        String prefix = "spring.cloud.gateway.server.webflux.routes";
        String[] ids = { "downstream", "renamed" };
        for (int i = 0; i < ids.length; i++) {
            String route = prefix + "[" + i + "]";
            registry.add(route + ".id", () -> ids[Integer.parseInt(route.replaceAll("\\D", ""))]);
            registry.add(route + ".uri", () -> "http://127.0.0.1:" + downstream.port());
            registry.add(route + ".predicates[0]", () -> "Path=/" + ids[Integer.parseInt(route.replaceAll("\\D", ""))]
                    + "/**");
            registry.add(route + ".filters[0].name", () -> "RequestRateLimiter");
            registry.add(route + ".filters[0].args.rate-limiter", () -> "#{@slidingWindowRateLimiter}");
            registry.add(route + ".filters[0].args.key-resolver", () -> "#{@clientKeyResolver}");
        }
    }

    @AfterAll
    static void stopDownstream() {
        downstream.disposeNow();
    }

    @BeforeEach
    void bind() {
        this.client = ReactiveHttp.client(this.port);
    }

    @Test
    void threeRequestsPassThenA429WithRetryAfterAndTheRateLimitHeaders() {
        for (int i = 0; i < 3; i++) {
            this.client.get().uri("/downstream/a").exchange().expectStatus().isOk()
                    .expectHeader().valueEquals("RateLimit-Policy", "\"downstream\";q=3;w=60")
                    .expectHeader().valueMatches("RateLimit", "\"downstream\";r=" + (2 - i) + ";t=\\d+")
                    .expectBody(String.class).isEqualTo("downstream");
        }
        this.client.get().uri("/downstream/a").exchange().expectStatus().isEqualTo(429)
                .expectHeader().valueMatches("Retry-After", "[1-9][0-9]*")
                .expectHeader().valueMatches("RateLimit", "\"downstream\";r=0;t=[1-9][0-9]*")
                .expectHeader().values("RateLimit-Policy", (values) -> assertThat(values).as("written once")
                        .containsExactly("\"downstream\";q=3;w=60"))
                .expectHeader().contentTypeCompatibleWith("application/problem+json")
                .expectBody(String.class).value((body) -> assertThat(body).contains("\"status\":429")
                        .contains("\"violated-policies\":[\"downstream\"]").contains("Rate limit 'downstream'"));
    }

    @Test
    void aRouteCanNameTheLimitItUsesAndTheGatewaysOwnLimiterStaysTheDefault() {
        assertThat(this.requestRateLimiter.getDefaultRateLimiter()).isInstanceOf(RedisRateLimiter.class);
        this.client.get().uri("/renamed/b").exchange().expectStatus().isOk()
                .expectHeader().valueEquals("RateLimit-Policy", "\"downstream\";q=3;w=60");
    }

    /** A route built in Java, which the start cannot check, without a limit: a 500, logged once. */
    @Test
    void aJavaRouteWithoutALimitFailsItsRequestsAndIsLoggedOnce(CapturedOutput output) {
        this.client.get().uri("/unlimited/a").exchange().expectStatus().is5xxServerError();
        this.client.get().uri("/unlimited/a").exchange().expectStatus().is5xxServerError();
        String message = "Route 'java-unlimited' uses slidingWindowRateLimiter, but no limit 'java-unlimited' is"
                + " defined: define limiter.limits.java-unlimited";
        assertThat(output.getAll().split("Every request on the route fails until then; logged once", -1))
                .as("logged once").hasSize(2);
        assertThat(output).contains(message);
        assertThat(output.getAll()).as("no stack trace repeated per request")
                .doesNotContain("at io.slidinglimiter.gateway.SlidingWindowRateLimiter");
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class GatewayApplication {

        /** A route built in Java with no limit of its id. */
        @Bean
        RouteLocator javaRoutes(RouteLocatorBuilder routes, KeyResolver clientKeyResolver,
                @Qualifier(LimiterGatewayAutoConfiguration.BEAN_NAME) SlidingWindowRateLimiter limiter) {
            return routes.routes().route("java-unlimited", (route) -> route.path("/unlimited/**")
                    .filters((filters) -> filters.requestRateLimiter((config) -> config.setKeyResolver(clientKeyResolver)
                            .setRateLimiter(limiter)))
                    .uri("http://127.0.0.1:" + downstream.port())).build();
        }

        /** The route's key: the client's address. */
        @Bean
        KeyResolver clientKeyResolver() {
            return (exchange) -> Mono.just(exchange.getRequest().getRemoteAddress().getAddress().getHostAddress()
                    + exchange.getRequest().getPath().subPath(0, 2).value());
        }

        @Bean
        SecurityWebFilterChain openToAll(ServerHttpSecurity http) {
            return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
                    .csrf((csrf) -> csrf.disable()).build();
        }

    }

}
