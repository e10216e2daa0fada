package io.slidinglimiter.gateway.mvc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.web.OpenSecurity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;

/**
 * Spring Cloud Gateway Server MVC routing to a downstream server the test starts, over real HTTP: a
 * Java route with {@link LimiterFilterFunctions#rateLimit(String, java.util.function.Function)} and a
 * route in properties with the {@code RateLimit} filter. Admitted requests reach the downstream
 * with the {@code RateLimit} headers; a denial is the library's 429 with all three headers and the
 * problem body, and never reaches the downstream; a missing key is the library's 400; a filter
 * naming an undefined limit fails the start; a route named like a limit without the filter is
 * logged.
 */
@SpringBootTest(classes = GatewayMvcRateLimitTests.GatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=servlet", "limiter.limits.orders.limit=2",
                "limiter.limits.orders.window=1m", "limiter.limits.reports.limit=2", "limiter.limits.reports.window=1m",
                "limiter.limits.shortcuts.limit=2", "limiter.limits.shortcuts.window=1m" })
@ExtendWith(OutputCaptureExtension.class)
class GatewayMvcRateLimitTests {

    private static final AtomicInteger downstreamHits = new AtomicInteger();

    private static final HttpServer downstream = startDownstream();

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void routes(DynamicPropertyRegistry registry) {
        String route = "spring.cloud.gateway.server.webmvc.routes[0]";
        registry.add(route + ".id", () -> "reports-route");
        registry.add(route + ".uri", () -> "http://127.0.0.1:" + downstream.getAddress().getPort());
        registry.add(route + ".predicates[0]", () -> "Path=/reports/**");
        registry.add(route + ".filters[0].name", () -> "RateLimit");
        registry.add(route + ".filters[0].args.limit", () -> "reports");
        registry.add(route + ".filters[0].args.key", () -> "#request.headers().firstHeader('X-User')");
        // SPEC §5's shortcut form: the limit, then a key (here with a comma of its own) over the route's ServerRequest.
        String shortcut = "spring.cloud.gateway.server.webmvc.routes[1]";
        registry.add(shortcut + ".id", () -> "shortcut-route");
        registry.add(shortcut + ".uri", () -> "http://127.0.0.1:" + downstream.getAddress().getPort());
        registry.add(shortcut + ".predicates[0]", () -> "Path=/shortcut/**");
        registry.add(shortcut + ".filters[0]",
                () -> "RateLimit=shortcuts,#request.headers().firstHeader('X-User') + T(String).valueOf(',')");
    }

    @AfterAll
    static void stopDownstream() {
        downstream.stop(0);
    }

    @Test
    void aJavaRouteIsLimitedAndADenialNeverReachesTheDownstream() throws Exception {
        assertLimited("/orders/1?customer=acme", "/orders/1?customer=globex", "orders", null);
    }

    @Test
    void aRouteInPropertiesIsLimitedByTheRateLimitFilter() throws Exception {
        assertLimited("/reports/1", "/reports/1", "reports", "ada");
    }

    @Test
    void aRouteInPropertiesInTheShortcutFormIsLimitedByItsKeyOverTheServerRequest() throws Exception {
        assertLimited("/shortcut/1", "/shortcut/1", "shortcuts", "ada");
    }

    @Test
    void aMissingKeyIsTheLibrarys400AndNeverReachesTheDownstream() throws Exception {
        int before = downstreamHits.get();
        HttpResponse<String> missing = get("/reports/1", null);
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.headers().firstValue("Retry-After")).isEmpty();
        assertThat(missing.body()).contains("\"status\":400");
        assertThat(downstreamHits.get()).isEqualTo(before);
    }

    @Test
    void aRateLimitFilterNamingAnUndefinedLimitFailsTheStart() {
        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .properties("server.port=0", "spring.cloud.gateway.server.webmvc.routes[0].id=nowhere",
                        "spring.cloud.gateway.server.webmvc.routes[0].uri=http://127.0.0.1:1",
                        "spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/nowhere/**",
                        "spring.cloud.gateway.server.webmvc.routes[0].filters[0].name=RateLimit",
                        "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.limit=undefined",
                        "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.key=#clientAddress")
                .run().close());
        assertThat(failure).hasMessageContaining("spring.cloud.gateway.server.webmvc.routes (id 'nowhere')")
                .hasMessageContaining("naming 'undefined', which is not under limiter.limits");
    }

    @Test
    void aRateLimitFilterWithAKeyThatIsNotValidSpelFailsTheStart() {
        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .properties("server.port=0", "limiter.limits.orders.limit=5", "limiter.limits.orders.window=1m",
                        "spring.cloud.gateway.server.webmvc.routes[0].id=broken",
                        "spring.cloud.gateway.server.webmvc.routes[0].uri=http://127.0.0.1:1",
                        "spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/broken/**",
                        "spring.cloud.gateway.server.webmvc.routes[0].filters[0].name=RateLimit",
                        "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.limit=orders",
                        "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.key=#request.(")
                .run().close());
        assertThat(failure).hasMessageContaining("spring.cloud.gateway.server.webmvc.routes (id 'broken')")
                .hasMessageContaining("has a RateLimit filter whose key '#request.(' is not valid SpEL");
    }

    @Test
    void aRouteNamedLikeALimitWithoutTheFilterIsLoggedWithBothWaysToApplyIt(CapturedOutput output) {
        new SpringApplicationBuilder(GatewayApplication.class)
                .properties("server.port=0", "limiter.limits.unfiltered.limit=5", "limiter.limits.unfiltered.window=1m",
                        "spring.cloud.gateway.server.webmvc.routes[0].id=unfiltered",
                        "spring.cloud.gateway.server.webmvc.routes[0].uri=http://127.0.0.1:1",
                        "spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/unfiltered/**")
                .run().close();
        assertThat(output).contains("Route 'unfiltered' of the gateway has the name of limit 'unfiltered' but no"
                + " RateLimit filter").contains("LimiterFilterFunctions.rateLimit(\"unfiltered\", ...)");
    }

    /**
     * Two requests with one key reach the downstream with the headers; the third is a 429 with all
     * three and the problem body, and does not reach it; another key is admitted.
     */
    private void assertLimited(String path, String otherPath, String limit, String user) throws Exception {
        int before = downstreamHits.get();
        HttpResponse<String> first = get(path, user);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("downstream");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"" + limit + "\";q=2;w=60");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"" + limit + "\";r=1;t=60");
        assertThat(get(path, user).statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get(path, user);
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"" + limit + "\";r=0;t=60");
        assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(denied.body()).contains("\"status\":429").contains("\"violated-policies\":[\"" + limit + "\"]");
        assertThat(downstreamHits.get() - before).as("the denial never reached the downstream").isEqualTo(2);
        assertThat(get(otherPath, (user != null) ? "grace" : null).statusCode()).as("another key").isEqualTo(200);
    }

    private HttpResponse<String> get(String path, String user) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path));
        if (user != null) {
            request.header("X-User", user);
        }
        return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpServer startDownstream() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", (exchange) -> {
                downstreamHits.incrementAndGet();
                byte[] body = "downstream".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            server.start();
            return server;
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(OpenSecurity.class)
    static class GatewayApplication {

        /** The reset times the assertions expect: a clock that stands still at a window's start. */
        @Bean
        ManualTimeSource manualTimeSource() {
            return new ManualTimeSource(1_700_000_040_000L);
        }

        /** A Java route, keyed by a query parameter. */
        @Bean
        RouterFunction<ServerResponse> ordersRoute() {
            return route("orders-route").GET("/orders/**", http())
                    .before(uri("http://127.0.0.1:" + downstream.getAddress().getPort()))
                    .filter(LimiterFilterFunctions.rateLimit("orders",
                            (request) -> request.param("customer").orElse(null)))
                    .build();
        }

    }

}
