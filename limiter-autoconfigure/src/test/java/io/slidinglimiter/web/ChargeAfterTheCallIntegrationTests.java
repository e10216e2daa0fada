package io.slidinglimiter.web;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Charging after the call (SPEC §3), tried as users would, over real HTTP: failed logins counted
 * alone, a token budget spent as it is used, a reservation settled lower, a URL rule that counts
 * only 404s, a charge that fails; on the local backend, and on one Redis shared by two instances.
 */
class ChargeAfterTheCallIntegrationTests {

    private static final String[] PROPERTIES = {
            "management.endpoints.web.exposure.include=ratelimiters,metrics",
            "limiter.limits.lookups.limit=2", "limiter.limits.lookups.window=1m",
            "limiter.http.rules[0].limit=lookups", "limiter.http.rules[0].path=/lookup/**",
            "limiter.http.rules[0].charge=#status == 404 ? 1 : 0" };

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    @Test
    void onTheLocalBackend() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            LocalHttp http = LocalHttp.of(context);
            failedLoginsAloneCount(http, http);
            aTokenBudgetIsSpentAsItIsUsed(http, http);
            aReservationSettledLowerLeavesRoomForMore(http);
            aUrlRuleCountsOnly404s(http);
            aChargeThatFailsKeepsTheResponseAndIsCounted(http);
        }
    }

    @Test
    void onOneRedisSharedByTwoInstances() throws Exception {
        redis.server().call((connection) -> connection.flushall());
        String[] onRedis = redis.limiterProperties();
        try (ConfigurableApplicationContext first = start(onRedis);
                ConfigurableApplicationContext second = start(onRedis)) {
            failedLoginsAloneCount(LocalHttp.of(first), LocalHttp.of(second));
            aTokenBudgetIsSpentAsItIsUsed(LocalHttp.of(first), LocalHttp.of(second));
            aReservationSettledLowerLeavesRoomForMore(LocalHttp.of(second));
            aUrlRuleCountsOnly404s(LocalHttp.of(first));
        }
    }

    /** Five good logins count nothing; three bad ones use the limit of 3; the right password is then 429. */
    private static void failedLoginsAloneCount(LocalHttp first, LocalHttp second) throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(((i % 2 == 0) ? first : second).get("/login?user=ann&password=right").statusCode())
                    .as("good login %d", i).isEqualTo(200);
        }
        for (int i = 0; i < 3; i++) {
            assertThat(((i % 2 == 0) ? second : first).get("/login?user=ann&password=wrong").statusCode())
                    .as("bad login %d", i).isEqualTo(401);
        }
        HttpResponse<String> locked = first.get("/login?user=ann&password=right");
        assertThat(locked.statusCode()).isEqualTo(429);
        assertThat(locked.headers().firstValue("Retry-After")).isPresent();
        assertThat(second.get("/login?user=bob&password=right").statusCode()).as("another user").isEqualTo(200);
    }

    /**
     * A reservation of 200 tokens against a budget of 1 000 a minute, each call charged the 400 it
     * used: three calls fit, the fourth is denied, and the key shows 1 200 used.
     */
    private static void aTokenBudgetIsSpentAsItIsUsed(LocalHttp first, LocalHttp second) throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(((i % 2 == 0) ? first : second).get("/complete?customer=acme&used=400").statusCode())
                    .as("call %d", i).isEqualTo(200);
        }
        assertThat(second.get("/complete?customer=acme&used=400").statusCode()).isEqualTo(429);
        String usage = first.get("/actuator/ratelimiters/tokens?key=acme").body();
        assertThat(usage).contains("\"used\":1200").contains("\"remaining\":0");
    }

    /** Admitted against 500 of 1 000, settled to 100: exactly six get through, and headers show the settled count. */
    private static void aReservationSettledLowerLeavesRoomForMore(LocalHttp http) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            HttpResponse<String> response = http.get("/report");
            statuses.add(response.statusCode());
            if (i == 0) {
                assertThat(response.headers().firstValue("RateLimit").orElseThrow())
                        .as("settled before the body was written").startsWith("\"reports\";r=900;t=");
            }
        }
        assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 200, 429, 429);
    }

    /** A rule charging 404s only: found pages are free, two misses use the limit of 2. */
    private static void aUrlRuleCountsOnly404s(LocalHttp http) throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(http.get("/lookup/known").statusCode()).isEqualTo(200);
        }
        assertThat(http.get("/lookup/unknown-1").statusCode()).isEqualTo(404);
        assertThat(http.get("/lookup/unknown-2").statusCode()).isEqualTo(404);
        assertThat(http.get("/lookup/known").statusCode()).isEqualTo(429);
    }

    /** The method's 200 reaches the client; the call stays at its cost and limiter.charge.errors counts it. */
    private static void aChargeThatFailsKeepsTheResponseAndIsCounted(LocalHttp http) throws Exception {
        HttpResponse<String> response = http.get("/broken-charge");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("fine");
        assertThat(http.get("/actuator/metrics/limiter.charge.errors?tag=limit:broken-charge").body())
                .contains("\"value\":1.0");
        assertThat(http.get("/actuator/ratelimiters/broken-charge?key=*").body()).contains("\"used\":1");
    }

    private static ConfigurableApplicationContext start(String... more) {
        return LocalHttp.start(ChargingApplication.class, List.of(PROPERTIES), more);
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, ChargingApplication.Endpoints.class, ChargingApplication.Accounts.class,
            ChargingApplication.Unauthorized.class })
    static class ChargingApplication {

        /** A whole number of minutes: every window starts with the test. */
        @Bean
        ManualTimeSource manualTimeSource() {
            return new ManualTimeSource(1_700_000_040_000L);
        }

        @RestController
        static class Endpoints {

            private final Accounts accounts;

            Endpoints(Accounts accounts) {
                this.accounts = accounts;
            }

            @GetMapping("/login")
            String login(@RequestParam String user, @RequestParam String password) {
                return this.accounts.login(user, password);
            }

            @GetMapping("/complete")
            @RateLimited(name = "tokens", limit = 1000, window = "1m", key = "#customer", cost = "200",
                    charge = "#result.totalTokens()")
            Completion complete(@RequestParam String customer, @RequestParam long used) {
                return new Completion("...", used);
            }

            @GetMapping("/report")
            @RateLimited(name = "reports", limit = 1000, window = "1m", cost = "500", charge = "100")
            String report() {
                return "report";
            }

            @GetMapping("/lookup/{name}")
            ResponseEntity<String> lookup(@PathVariable String name) {
                return name.equals("known") ? ResponseEntity.ok("found") : ResponseEntity.notFound().build();
            }

            @GetMapping("/broken-charge")
            @RateLimited(name = "broken-charge", limit = 10, window = "1m", charge = "#result.noSuchMethod()")
            String brokenCharge() {
                return "fine";
            }

        }

        /** A login service: counts failed attempts only. */
        static class Accounts {

            @RateLimited(name = "failed-logins", limit = 3, window = "1m", key = "#user",
                    charge = "#exception != null ? 1 : 0")
            public String login(String user, String password) {
                if (!password.equals("right")) {
                    throw new BadCredentials();
                }
                return "welcome " + user;
            }

        }

        static class BadCredentials extends RuntimeException {

            BadCredentials() {
                super("Bad credentials");
            }

        }

        @RestControllerAdvice
        static class Unauthorized {

            @ExceptionHandler(BadCredentials.class)
            ResponseEntity<String> badCredentials() {
                return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("bad credentials");
            }

        }

        /** What a language model answered, and the tokens it used. */
        record Completion(String text, long totalTokens) {
        }

    }

}
