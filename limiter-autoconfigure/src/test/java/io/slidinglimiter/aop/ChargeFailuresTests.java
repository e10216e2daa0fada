package io.slidinglimiter.aop;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterRedisAutoConfiguration;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A charge that cannot be settled never reaches the caller: the method's own result or exception
 * comes back unchanged, the call stays at its cost, the failure is counted per limit and logged once.
 */
@ExtendWith(OutputCaptureExtension.class)
class ChargeFailuresTests {

    private static RedisServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            .withUserConfiguration(Services.class);

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        server.close();
    }

    @Test
    void aNullNegativeNonNumericOrFailingChargeLeavesTheCallAtItsCost(CapturedOutput output) {
        this.runner.run((context) -> {
            Charged charged = context.getBean(Charged.class);
            for (int i = 0; i < 2; i++) {
                assertThat(charged.nothing()).isNull();
                assertThat(charged.negative()).isEqualTo("ok");
                assertThat(charged.text()).isEqualTo("many");
                assertThat(charged.failing()).isEqualTo("ok");
                assertThatIllegalStateException().isThrownBy(charged::throwing).withMessage("the method's own");
            }
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            LimitRegistry registry = context.getBean(LimitRegistry.class);
            for (String limit : new String[] { "null-charge", "negative-charge", "text-charge", "failing-charge",
                    "throwing-method" }) {
                assertThat(rateLimiters.usage(limit, "*").used()).as(limit + " stays at its cost").isEqualTo(2);
                assertThat(registry.statistics(limit).chargeErrors()).as(limit + " counted").isEqualTo(2);
                assertThat(output.getOut().split("of limit '" + limit + "'", -1)).as(limit + " logged once")
                        .hasSize(2);
            }
            assertThat(output.getOut()).contains("The charge '#result' of limit 'null-charge' gave null, not a"
                    + " number of permits (0 or more): the call stays counted at its cost.")
                    .contains("The charge '-5' of limit 'negative-charge' gave -5");
        });
    }

    @Test
    void aSettleThatCannotReachRedisKeepsTheResultAndIsCounted(CapturedOutput output) {
        server.restart();
        this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                LimiterRedisAutoConfiguration.class))
                .withPropertyValues("limiter.backend=redis", "limiter.redis.timeout=500ms",
                        "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + server.port())
                .run((context) -> {
                    Charged charged = context.getBean(Charged.class);
                    assertThat(charged.stopsRedis()).isEqualTo("done");
                    assertThat(context.getBean(LimitRegistry.class).statistics("stops-redis").chargeErrors())
                            .isEqualTo(1);
                    assertThat(output.getOut()).contains("of limit 'stops-redis' could not be settled");
                });
        server.restart();
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {

        @Bean
        Charged charged() {
            return new Charged();
        }

    }

    static class Charged {

        @RateLimited(name = "null-charge", limit = 10, window = "1m", charge = "#result")
        public String nothing() {
            return null;
        }

        @RateLimited(name = "negative-charge", limit = 10, window = "1m", charge = "-5")
        public String negative() {
            return "ok";
        }

        @RateLimited(name = "text-charge", limit = 10, window = "1m", charge = "#result")
        public String text() {
            return "many";
        }

        @RateLimited(name = "failing-charge", limit = 10, window = "1m", charge = "#result.length() / 0")
        public String failing() {
            return "ok";
        }

        @RateLimited(name = "throwing-method", limit = 10, window = "1m", charge = "#result.length()")
        public String throwing() {
            throw new IllegalStateException("the method's own");
        }

        /** Charged below its cost; Redis stops before the settle can reach it. */
        @RateLimited(name = "stops-redis", limit = 10, window = "1m", cost = "2", charge = "1")
        public String stopsRedis() {
            server.stop();
            return "done";
        }

    }

}
