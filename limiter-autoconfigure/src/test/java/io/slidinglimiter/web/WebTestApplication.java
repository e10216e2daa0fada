package io.slidinglimiter.web;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.core.ManualTimeSource;

/**
 * A real application for the web tests: controllers, a service, Spring Security with basic auth,
 * a catch-all exception handler, and a clock the tests move.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import({ OpenSecurity.class, WebTestApplication.Endpoints.class, WebTestApplication.CatchAllController.class,
        WebTestApplication.CatchAllAdvice.class, WebTestApplication.Quotes.class })
class WebTestApplication {

    /** A multiple of every window used, so slots start exactly at the first request. */
    static final long START_MILLIS = 1_700_000_040_000L;

    @Bean
    ManualTimeSource manualTimeSource() {
        return new ManualTimeSource(START_MILLIS);
    }

    @Bean
    InMemoryUserDetailsManager users() {
        return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}pw").roles("USER").build(),
                User.withUsername("bob").password("{noop}pw").roles("USER").build());
    }

    @RestController
    static class Endpoints {

        private final AtomicInteger ruledCalls = new AtomicInteger();

        private final AtomicInteger futureCalls = new AtomicInteger();

        private final AtomicInteger monoCalls = new AtomicInteger();

        private final AtomicInteger fluxCalls = new AtomicInteger();

        private final Quotes quotes;

        Endpoints(Quotes quotes) {
            this.quotes = quotes;
        }

        @GetMapping("/hello/{name}")
        @RateLimited(name = "hello", limit = 2, window = "1m", key = "#name")
        Map<String, String> hello(@PathVariable String name) {
            return Map.of("hello", name);
        }

        @GetMapping("/by-address")
        @RateLimited(name = "by-address", limit = 1, window = "1m", key = "#clientAddress")
        String byAddress() {
            return "ok";
        }

        @GetMapping("/by-header")
        @RateLimited(name = "by-header", limit = 2, window = "1m", key = "#apiKey")
        String byHeader(@RequestHeader(name = "X-Api-Key", required = false) String apiKey) {
            return "ok";
        }

        @GetMapping("/me")
        @RateLimited(name = "me", limit = 2, window = "1m", key = "#principal?.name")
        String me() {
            return "me";
        }

        /** Read through a method: this bean is a class proxy, whose own fields are unset. */
        int ruledCalls() {
            return this.ruledCalls.get();
        }

        @GetMapping("/ruled/thing")
        String ruled() {
            this.ruledCalls.incrementAndGet();
            return "ruled";
        }

        @GetMapping("/both")
        @RateLimited(name = "per-client", limit = 5, window = "1m", key = "#client")
        @RateLimited(name = "all-clients", limit = 3, window = "1m")
        String both(@RequestParam String client) {
            return "both";
        }

        @GetMapping("/orders")
        @RateLimited(name = "big-orders", limit = 1, window = "1m", condition = "#amount > 100")
        String order(@RequestParam int amount) {
            return "ordered " + amount;
        }

        @GetMapping("/pages")
        @RateLimited(name = "pages", limit = 10, window = "1m", cost = "#count")
        String pages(@RequestParam int count) {
            return "pages " + count;
        }

        @GetMapping("/quote")
        String quote() {
            return this.quotes.quote();
        }

        @GetMapping("/annotated-and-ruled")
        @RateLimited(name = "annotated", limit = 5, window = "1m")
        String annotatedAndRuled() {
            return "both kinds";
        }

        /** Spring MVC's asynchronous handling: decided before the method runs, on the request's thread. */
        @GetMapping("/future/{name}")
        @RateLimited(name = "future", limit = 2, window = "1m", key = "#request.remoteAddr + ':' + #name")
        CompletableFuture<String> future(@PathVariable String name) {
            this.futureCalls.incrementAndGet();
            return CompletableFuture.supplyAsync(() -> "later, " + name);
        }

        int futureCalls() {
            return this.futureCalls.get();
        }

        /** A Mono on the servlet stack: decided when Spring MVC subscribes to it, in the request. */
        @GetMapping("/mono/{name}")
        @RateLimited(name = "mono", limit = 2, window = "1m", key = "#request.remoteAddr + ':' + #name")
        Mono<String> mono(@PathVariable String name) {
            return Mono.fromSupplier(() -> {
                this.monoCalls.incrementAndGet();
                return "soon, " + name;
            });
        }

        int monoCalls() {
            return this.monoCalls.get();
        }

        /** A Flux of text on the servlet stack, which Spring MVC streams: decided before the first part is written. */
        @GetMapping("/flux/{name}")
        @RateLimited(name = "flux", limit = 2, window = "1m", key = "#request.remoteAddr + ':' + #name")
        Flux<String> flux(@PathVariable String name) {
            return Flux.defer(() -> {
                this.fluxCalls.incrementAndGet();
                return Flux.just("any time, ", name);
            });
        }

        int fluxCalls() {
            return this.fluxCalls.get();
        }

        /** A charged CompletableFuture: settled to the rows it completed with. */
        @GetMapping("/future-rows")
        @RateLimited(name = "future-rows", limit = 10, window = "1m", cost = "5", charge = "#result.size()")
        CompletableFuture<List<Integer>> futureRows(@RequestParam int count) {
            return CompletableFuture.supplyAsync(() -> IntStream.rangeClosed(1, count).boxed().toList());
        }

        /** A charged Mono: settled to the rows it emitted. */
        @GetMapping("/mono-rows")
        @RateLimited(name = "mono-rows", limit = 10, window = "1m", cost = "5", charge = "#result.size()")
        Mono<List<Integer>> monoRows(@RequestParam int count) {
            return Mono.fromSupplier(() -> IntStream.rangeClosed(1, count).boxed().toList());
        }

        /** A charged Flux of records, which Spring MVC collects into a JSON array: charged the rows it emitted. */
        @GetMapping("/flux-rows")
        @RateLimited(name = "flux-rows", limit = 10, window = "1m", cost = "5", charge = "#result")
        Flux<Map<String, Integer>> fluxRows(@RequestParam int count) {
            return Flux.range(1, count).map((row) -> Map.of("row", row));
        }

    }

    /** Has its own catch-all handler, which would turn every exception into a 500. */
    @RestController
    static class CatchAllController {

        @GetMapping("/catch-all")
        @RateLimited(name = "catch-all", limit = 1, window = "1m")
        String catchAll() {
            return "caught";
        }

        @ExceptionHandler(Exception.class)
        ResponseEntity<String> everything(Exception ex) {
            return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("swallowed: " + ex);
        }

    }

    /** A global catch-all advice, for the handlers without their own. */
    @RestControllerAdvice
    static class CatchAllAdvice {

        @ExceptionHandler(Exception.class)
        ResponseEntity<String> everything(Exception ex) {
            return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("advised: " + ex);
        }

    }

    @Service
    static class Quotes {

        @RateLimited(name = "quotes", limit = 1, window = "1m")
        public String quote() {
            return "quote";
        }

    }

}
