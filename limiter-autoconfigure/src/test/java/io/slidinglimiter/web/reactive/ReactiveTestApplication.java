package io.slidinglimiter.web.reactive;

import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.core.ManualTimeSource;

/**
 * A real WebFlux application for the reactive web tests: controllers returning {@code Mono} and
 * {@code Flux}, a service, a catch-all exception handler, and Spring Security with basic auth that
 * permits every request. The controller and the advice are member classes, registered as such.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class ReactiveTestApplication {

    /** The fake clock's start: the local backend's counters count on it. */
    public static final long START_MILLIS = 1_800_000_000_000L;

    @Bean
    ManualTimeSource manualTimeSource() {
        return new ManualTimeSource(START_MILLIS);
    }

    @Bean
    SecurityWebFilterChain openToAll(ServerHttpSecurity http) {
        return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
                .httpBasic(Customizer.withDefaults())
                .csrf((csrf) -> csrf.disable())
                .build();
    }

    @Bean
    MapReactiveUserDetailsService users() {
        return new MapReactiveUserDetailsService(User.withUsername("alice").password("{noop}pw").roles("USER").build(),
                User.withUsername("bob").password("{noop}pw").roles("USER").build());
    }

    @Bean
    Quotes quotes() {
        return new Quotes();
    }

    /** The controller. */
    @RestController
    public static class Endpoints {

        private final Quotes quotes;

        Endpoints(Quotes quotes) {
            this.quotes = quotes;
        }

        @GetMapping("/hello/{name}")
        @RateLimited(name = "hello", limit = 2, window = "1m", key = "#name")
        public Mono<String> hello(@PathVariable String name) {
            return Mono.just("hello " + name);
        }

        @GetMapping("/stream")
        @RateLimited(name = "stream", limit = 1, window = "1m", key = "#clientAddress")
        public Flux<String> stream() {
            return Flux.just("a", "b", "c");
        }

        @GetMapping("/who")
        @RateLimited(name = "who", limit = 1, window = "1m", key = "#principal?.name")
        public Mono<String> who() {
            return Mono.just("you");
        }

        @GetMapping("/address")
        @RateLimited(name = "address", limit = 5, window = "1m", key = "#request.remoteAddress.address.hostAddress")
        public Mono<String> address() {
            return Mono.just("here");
        }

        @GetMapping("/both/{user}")
        @RateLimited(name = "per-user", limit = 3, window = "1m", key = "#user")
        @RateLimited(name = "global", limit = 4, window = "1m")
        public Mono<String> both(@PathVariable String user) {
            return Mono.just(user);
        }

        @GetMapping("/reports")
        @RateLimited(name = "report-pages", limit = 5, window = "1m", key = "#clientAddress", cost = "#pages")
        public Mono<String> report(@RequestParam int pages) {
            return Mono.just(pages + " pages");
        }

        @GetMapping("/broken-condition")
        @RateLimited(name = "broken-condition", limit = 5, window = "1m", condition = "#request.noSuchProperty == 1")
        public Mono<String> brokenCondition() {
            return Mono.just("never");
        }

        @GetMapping("/tokens/{customer}")
        @RateLimited(name = "reactive-tokens", limit = 1000, window = "1m", key = "#customer", cost = "200",
                charge = "#result")
        public Mono<Long> tokens(@PathVariable String customer,
                @RequestParam long used) {
            return Mono.just(used);
        }

        @GetMapping("/rows")
        @RateLimited(name = "rows", limit = 5, window = "1m", charge = "#result")
        public Flux<String> rows() {
            return Flux.just("a", "b", "c");
        }

        @GetMapping("/lookup/{name}")
        public Mono<ResponseEntity<String>> lookup(@PathVariable String name) {
            return Mono.just(name.equals("known") ? ResponseEntity.ok("found") : ResponseEntity.notFound().build());
        }

        @GetMapping("/shadowed")
        @RateLimited(name = "reactive-shadow", limit = 1, window = "1m")
        public Mono<String> shadowed() {
            return Mono.just("shadowed");
        }

        @GetMapping("/quote")
        public Mono<String> quote() {
            return this.quotes.quote();
        }

        @GetMapping("/ruled/{id}")
        public Mono<String> ruled(@PathVariable String id) {
            return Mono.just(id);
        }

    }

    /** A service whose limit is decided when its result is subscribed to. */
    public static class Quotes {

        private final AtomicInteger served = new AtomicInteger();

        @RateLimited(name = "quotes", limit = 2, window = "1m")
        public Mono<String> quote() {
            return Mono.fromSupplier(() -> "quote " + this.served.incrementAndGet());
        }

        /** @return how many quotes were made */
        public int served() {
            return this.served.get();
        }

    }

    /** An application's catch-all handler, which must not turn a rejection into another status. */
    @RestControllerAdvice
    public static class CatchAll {

        @ExceptionHandler(Exception.class)
        ResponseEntity<String> anything(Exception ex) {
            return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("caught by the application");
        }

    }

}
