package io.slidinglimiter.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Methods that return a {@code CompletableFuture} or a {@code CompletionStage}: decided before the
 * method runs, so a denied call starts no work; a denial is the stage's failure, not a throw; a
 * charge is settled with what the stage completes with. Behind {@code @Async} the decision is made
 * on the executor's thread, where Spring runs the method: the denial fails the future Spring
 * returns, and the method's body does not run either.
 */
class StagedCallsTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            .withUserConfiguration(Services.class);

    @Test
    void aDeniedFutureFailsWithTheDenialAndItsWorkNeverStarts() {
        this.runner.run((context) -> {
            Reports reports = context.getBean(Reports.class);
            assertThat(reports.build("q1").get(5, TimeUnit.SECONDS)).isEqualTo("report q1");
            assertThat(reports.build("q1").get(5, TimeUnit.SECONDS)).isEqualTo("report q1");
            CompletableFuture<String> denied = reports.build("q1");
            assertThat(denied).isCompletedExceptionally();
            assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> denied.get(5, TimeUnit.SECONDS))
                    .withCauseInstanceOf(RateLimitExceededException.class);
            assertThat(reports.runs()).as("the denied call's body").isEqualTo(2);
            assertThat(reports.build("q2").get(5, TimeUnit.SECONDS)).as("another key").isEqualTo("report q2");
        });
    }

    @Test
    void aChargeIsSettledWithWhatTheStageCompletesWith() {
        this.runner.run((context) -> {
            Reports reports = context.getBean(Reports.class);
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            CompletableFuture<Integer> rows = new CompletableFuture<>();
            CompletionStage<Integer> stage = reports.rows(rows);
            assertThat(rateLimiters.usage("rows", "*").used()).as("reserved while it runs").isEqualTo(5);
            rows.complete(2);
            assertThat(stage.toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(2);
            assertThat(rateLimiters.usage("rows", "*").used()).as("charged what it returned").isEqualTo(2);
        });
    }

    @Test
    void behindAsyncADenialFailsTheFutureAndTheBodyNeverRuns() {
        this.runner.run((context) -> {
            Exports exports = context.getBean(Exports.class);
            assertThat(exports.export("x").get(5, TimeUnit.SECONDS)).startsWith("export x on ");
            CompletableFuture<String> denied = exports.export("x");
            assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> denied.get(5, TimeUnit.SECONDS))
                    .withCauseInstanceOf(RateLimitExceededException.class);
            assertThat(exports.runs()).as("the denied call's body").isEqualTo(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class Services {

        @Bean
        Reports reports() {
            return new Reports();
        }

        @Bean
        Exports exports() {
            return new Exports();
        }

    }

    public static class Reports {

        private final AtomicInteger runs = new AtomicInteger();

        @RateLimited(name = "reports", limit = 2, window = "1m", key = "#query")
        public CompletableFuture<String> build(String query) {
            this.runs.incrementAndGet();
            return CompletableFuture.supplyAsync(() -> "report " + query);
        }

        @RateLimited(name = "rows", limit = 10, window = "1m", cost = "5", charge = "#result")
        public CompletionStage<Integer> rows(CompletableFuture<Integer> rows) {
            return rows;
        }

        int runs() {
            return this.runs.get();
        }

    }

    public static class Exports {

        private final AtomicInteger runs = new AtomicInteger();

        @Async
        @RateLimited(name = "exports", limit = 1, window = "1m", key = "#name")
        public CompletableFuture<String> export(String name) {
            this.runs.incrementAndGet();
            return CompletableFuture.completedFuture("export " + name + " on " + Thread.currentThread().getName());
        }

        int runs() {
            return this.runs.get();
        }

    }

}
