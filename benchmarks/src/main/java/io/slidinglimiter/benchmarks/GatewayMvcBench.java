package io.slidinglimiter.benchmarks;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Spring Cloud Gateway Server MVC, for wrk: {@code /plain/**} routed as it is, {@code /limited/**}
 * through the {@code RateLimit} filter (keyed by the client's address, a limit never reached), both
 * to {@code /downstream/**} of the same application, on port 8097.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class GatewayMvcBench {

    private static final int PORT = 8097;

    public static void main(String[] args) {
        String routes = "spring.cloud.gateway.server.webmvc.routes";
        String uri = "http://127.0.0.1:" + PORT;
        new SpringApplicationBuilder(GatewayMvcBench.class)
                .properties("server.port=" + PORT, "logging.level.root=warn", BenchApplication.WITHOUT_METRICS,
                        "limiter.limits.limited.limit=" + LocalBenchmarks.NEVER_REACHED,
                        "limiter.limits.limited.window=1s",
                        routes + "[0].id=plain", routes + "[0].uri=" + uri, routes + "[0].predicates[0]=Path=/plain/**",
                        routes + "[0].filters[0].name=PrefixPath", routes + "[0].filters[0].args.prefix=/downstream",
                        routes + "[1].id=limited", routes + "[1].uri=" + uri,
                        routes + "[1].predicates[0]=Path=/limited/**", routes + "[1].filters[0].name=RateLimit",
                        routes + "[1].filters[0].args.limit=limited", routes + "[1].filters[0].args.key=#clientAddress",
                        routes + "[1].filters[1].name=PrefixPath", routes + "[1].filters[1].args.prefix=/downstream")
                .run(args);
    }

    /** The downstream service. */
    @Bean
    RouterFunction<ServerResponse> downstream() {
        return RouterFunctions.route().GET("/downstream/**", (request) -> ServerResponse.ok().body("downstream\n"))
                .build();
    }

}
