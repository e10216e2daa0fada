package io.slidinglimiter.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.resilience.InvocationRejectedException;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.core.LimitRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @RateLimited} beside Spring Framework's own resilience annotations ({@code @EnableResilientMethods}):
 * Spring puts {@code @Retryable} and {@code @ConcurrencyLimit} outside every other advice of a bean, so
 * the limit applies to each attempt, and only to calls the concurrency limit let through.
 */
class ResilientMethodsTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            .withUserConfiguration(Services.class);

    @Test
    void eachAttemptOfARetriedMethodTakesAPermit() {
        this.runner.run((context) -> {
            Flaky flaky = context.getBean(Flaky.class);
            flaky.failFirst(2);
            assertThat(flaky.call()).isEqualTo("ok");
            assertThat(flaky.invocations()).isEqualTo(3);
            assertThat(context.getBean(RateLimiters.class).usage("attempts", "*").used())
                    .as("two failed attempts and the one that succeeded").isEqualTo(3);
        });
    }

    @Test
    void aRefusalIsAFailedAttemptThatRetryableRetriesUnlessItExcludesIt() {
        this.runner.run((context) -> {
            LimitRegistry registry = context.getBean(LimitRegistry.class);
            Flaky flaky = context.getBean(Flaky.class);
            flaky.failFirst(1);
            // The limit is 3: the first attempt fails, the second succeeds; two permits taken.
            assertThat(flaky.call()).isEqualTo("ok");
            // One permit left: the first attempt fails on it, both retries are refused by the limit.
            flaky.failFirst(1);
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(flaky::call);
            assertThat(flaky.invocations()).as("refused attempts never reach the method").isEqualTo(3);
            assertThat(registry.statistics("attempts").rejected()).as("each retry asked the limit").isEqualTo(2);

            Polite polite = context.getBean(Polite.class);
            assertThat(polite.call()).isEqualTo("ok");
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(polite::call);
            assertThat(registry.statistics("polite").rejected()).as("excluded: the refusal is not retried")
                    .isEqualTo(1);
            assertThat(polite.invocations()).isEqualTo(1);
        });
    }

    @Test
    void aCallTheConcurrencyLimitRejectsTakesNoPermit() {
        this.runner.run((context) -> {
            Single single = context.getBean(Single.class);
            CompletableFuture<String> holding = CompletableFuture.supplyAsync(single::call);
            assertThat(single.entered()).isTrue();
            try {
                assertThatExceptionOfType(InvocationRejectedException.class).isThrownBy(single::call);
                assertThat(context.getBean(RateLimiters.class).usage("single", "*").used())
                        .as("only the call that holds the slot").isEqualTo(1);
            }
            finally {
                single.release();
            }
            assertThat(holding.get(30, TimeUnit.SECONDS)).isEqualTo("ok");
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class Services {

        @Bean
        Flaky flaky() {
            return new Flaky();
        }

        @Bean
        Polite polite() {
            return new Polite();
        }

        @Bean
        Single single() {
            return new Single();
        }

    }

    static class Flaky {

        final AtomicInteger failures = new AtomicInteger();

        final AtomicInteger invocations = new AtomicInteger();

        @Retryable(maxRetries = 2, delay = 0)
        @RateLimited(name = "attempts", limit = 3, window = "1h")
        public String call() {
            this.invocations.incrementAndGet();
            if (this.failures.getAndDecrement() > 0) {
                throw new IllegalStateException("the downstream failed");
            }
            return "ok";
        }

        public void failFirst(int attempts) {
            this.failures.set(attempts);
        }

        public int invocations() {
            return this.invocations.get();
        }

    }

    static class Polite {

        final AtomicInteger invocations = new AtomicInteger();

        @Retryable(maxRetries = 2, delay = 0, excludes = RateLimitExceededException.class)
        @RateLimited(name = "polite", limit = 1, window = "1h")
        public String call() {
            this.invocations.incrementAndGet();
            return "ok";
        }

        public int invocations() {
            return this.invocations.get();
        }

    }

    static class Single {

        final CountDownLatch entered = new CountDownLatch(1);

        final CountDownLatch release = new CountDownLatch(1);

        @ConcurrencyLimit(limit = 1, policy = ConcurrencyLimit.ThrottlePolicy.REJECT)
        @RateLimited(name = "single", limit = 10, window = "1h")
        public String call() {
            this.entered.countDown();
            try {
                this.release.await(30, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return "ok";
        }

        public boolean entered() throws InterruptedException {
            return this.entered.await(30, TimeUnit.SECONDS);
        }

        public void release() {
            this.release.countDown();
        }

    }

}
