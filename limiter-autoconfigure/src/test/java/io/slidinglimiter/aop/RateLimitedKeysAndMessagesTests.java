package io.slidinglimiter.aop;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Keys that cannot be computed, and how a denial reads.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitedKeysAndMessagesTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            .withUserConfiguration(Config.class);

    @Test
    void aKeyExpressionThatThrowsIsAnEmptyKeyLoggedOnce(CapturedOutput output) {
        this.runner.run((context) -> {
            Service service = context.getBean(Service.class);
            for (int i = 0; i < 3; i++) {
                RateLimitExceededException denied = assertThatExceptionOfType(RateLimitExceededException.class)
                        .isThrownBy(() -> service.substring("ab")).actual();
                assertThat(denied.isMissingKey()).isTrue();
                assertThat(denied.getRetryAfter()).isZero();
                assertThat(denied.getKey()).isNull();
                assertThat(denied).hasMessage("Rate limit 'substring' needs a key, but the key expression"
                        + " #text.substring(5) gave none for this call. Waiting will not help: send what the key is"
                        + " made from.");
            }
            assertThatNoException().isThrownBy(() -> service.substring("abcdefg"));
        });
        assertThat(output.getAll().split("Key expression '#text.substring\\(5\\)'", -1)).hasSize(2);
    }

    @Test
    void underEmptyKeyAllowAThrowingKeyBypassesTheLimit() {
        this.runner.withPropertyValues("limiter.empty-key=allow").run((context) -> {
            Service service = context.getBean(Service.class);
            for (int i = 0; i < 3; i++) {
                assertThatNoException().isThrownBy(() -> service.substring("ab"));
            }
        });
    }

    @Test
    void theExceptionReadsLikeTheHttpDetailAndSaysWhenTheCostDidIt() {
        this.runner.run((context) -> {
            Service service = context.getBean(Service.class);
            ManualTimeSource time = context.getBean(ManualTimeSource.class);
            service.pages(4);
            time.advance(Duration.ofMillis(700));
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.pages(2))
                    .withMessage("Rate limit 'pages' of 5 per 10s exceeded; retry after 10s. This call costs 2;"
                            + " 1 left.");
            service.pages(1);
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.pages(1))
                    .withMessage("Rate limit 'pages' of 5 per 10s exceeded; retry after 10s.");
            service.fast();
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::fast)
                    .withMessage("Rate limit 'fast' of 1 per 500ms exceeded; retry after 1s.");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Config {

        @Bean
        ManualTimeSource manualTimeSource() {
            return new ManualTimeSource(1_700_000_040_000L);
        }

        @Bean
        Service service() {
            return new Service();
        }

    }

    static class Service {

        @RateLimited(name = "substring", limit = 1, window = "1m", key = "#text.substring(5)")
        public void substring(String text) {
        }

        @RateLimited(name = "pages", limit = 5, window = "10s", cost = "#count")
        public void pages(int count) {
        }

        @RateLimited(name = "fast", limit = 1, window = "500ms", subWindows = 5)
        public void fast() {
        }

    }

}
