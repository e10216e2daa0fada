package io.slidinglimiter.autoconfigure;

import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every bad property fails the start with a failure analysis naming the property and the fix.
 */
class LimiterPropertiesValidationTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(LimiterAutoConfigurationTests.LIMITER);

    @Test
    void limitMustBePositive() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.login.limit")
                    .contains("Limit 'login': limit must be greater than 0 but was 0");
            assertThat(analysis.getAction()).contains("Set limiter.limits.login.limit to a number of permits");
        }, "limiter.limits.login.limit=0", "limiter.limits.login.window=1m");
    }

    @Test
    void windowMustDivideIntoTheSubWindows() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.login.window")
                    .contains("window 1500ms cannot be cut into 7 sub-windows of whole milliseconds");
            assertThat(analysis.getAction()).contains("limiter.limits.login.sub-windows");
        }, "limiter.limits.login.limit=5", "limiter.limits.login.window=1500ms", "limiter.limits.login.sub-windows=7");
    }

    @Test
    void aRedisLimitAboveWhatLuaCountsExactlyFailsTheStart() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.huge.limit")
                    .contains("is 100000000000000000, more than Redis counts exactly (9007199254740991");
            assertThat(analysis.getAction()).contains("Set limiter.limits.huge.limit to at most 9007199254740991")
                    .contains("limiter.limits.huge.backend to local");
        }, "limiter.limits.huge.limit=100000000000000000", "limiter.limits.huge.window=1m",
                "limiter.limits.huge.backend=redis");
    }

    @Test
    void aLeaseOnALocalLimitFailsTheStartSayingWhy() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.api.lease")
                    .contains("is true, but the limit's counters are local: a lease takes permits from a shared server"
                            + " (redis or jdbc)");
            assertThat(analysis.getAction()).contains("Set limiter.limits.api.backend to redis or jdbc, or remove"
                    + " limiter.limits.api.lease.");
        }, "limiter.limits.api.limit=10", "limiter.limits.api.window=1m", "limiter.limits.api.lease=true");
    }

    @Test
    void aLeaseOnASlidingLogFailsTheStartSayingWhy() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.api.lease")
                    .contains("counts by sliding-log, which records each admission at its millisecond");
            assertThat(analysis.getAction()).contains("limiter.limits.api.algorithm to sliding-window-counter");
        }, "limiter.limits.api.limit=10", "limiter.limits.api.window=1m", "limiter.limits.api.lease=true",
                "limiter.limits.api.backend=redis", "limiter.limits.api.algorithm=sliding-log");
    }

    @Test
    void windowMustBePositive() {
        assertFailure(analysis -> assertThat(analysis.getDescription()).contains("limiter.limits.api.window")
                .contains("window must be positive but was PT0S"),
                "limiter.limits.api.limit=5", "limiter.limits.api.window=0s");
    }

    @Test
    void subWindowsMustBeBetweenOneAnd3600() {
        assertFailure(analysis -> assertThat(analysis.getDescription()).contains("limiter.limits.api.sub-windows")
                .contains("sub-windows must be between 1 and 3600 but was 3601"),
                "limiter.limits.api.limit=5", "limiter.limits.api.window=1h", "limiter.limits.api.sub-windows=3601");
        assertFailure(analysis -> assertThat(analysis.getDescription()).contains("limiter.default-sub-windows")
                .contains("but was 0"), "limiter.default-sub-windows=0");
    }

    @Test
    void limitAndWindowAreRequired() {
        assertFailure(analysis -> assertThat(analysis.getDescription())
                .contains("limiter.limits.api.limit\n        is missing")
                .contains("limiter.limits.api.window\n        is missing"), "limiter.limits.api.algorithm=sliding-log");
    }

    @Test
    void aPlanNeedsAPositiveLimit() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.api.plans.pro.limit")
                    .contains("must be greater than 0 but was 0").contains("limiter.limits.api.plans.team.limit")
                    .contains("must be greater than 0 but was -3");
            assertThat(analysis.getAction()).contains("Set limiter.limits.api.plans.pro.limit to the permits per"
                    + " window of callers on plan 'pro'");
        }, "limiter.limits.api.limit=5", "limiter.limits.api.window=1m", "limiter.limits.api.plans.pro.limit=0",
                "limiter.limits.api.plans.team.limit=-3");
    }

    @Test
    void aRulesPlanMayUseOnlyTheRequestsVariables() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.limits.api.plan")
                    .contains("#customer").contains("limiter.http.rules[0]");
            assertThat(analysis.getAction()).contains("Write the plan over #request, #principal and #clientAddress");
        }, "limiter.limits.api.limit=5", "limiter.limits.api.window=1m", "limiter.limits.api.plan=#customer.plan",
                "limiter.http.rules[0].limit=api", "limiter.http.rules[0].path=/api/**");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertFailure(analysis -> assertThat(analysis.getDescription()).contains("limiter.limits.a.limit")
                .contains("limiter.limits.b.sub-windows").contains("limiter.local.max-keys"),
                "limiter.limits.a.limit=-1", "limiter.limits.a.window=1s", "limiter.limits.b.limit=1",
                "limiter.limits.b.window=1s", "limiter.limits.b.sub-windows=0", "limiter.local.max-keys=0");
    }

    @Test
    void anOverflowCapacityOfZeroFailsTheStart() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.local.overflow-keys")
                    .contains("must be greater than 0 but was 0");
            assertThat(analysis.getAction()).contains("Set limiter.local.overflow-keys");
        }, "limiter.local.overflow-keys=0");
    }

    @Test
    void aMaxWaitShorterThanTheTimeoutFailsTheStart() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.redis.max-wait")
                    .contains("(50ms) is shorter than limiter.redis.timeout (200ms)");
            assertThat(analysis.getAction()).contains("Set limiter.redis.max-wait")
                    .contains("to at least limiter.redis.timeout");
        }, "limiter.redis.timeout=200ms", "limiter.redis.max-wait=50ms");
    }

    @Test
    void redisWithoutSpringDataRedisNamesTheDependencyToAdd() {
        this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
                .withPropertyValues("limiter.limits.login.limit=5", "limiter.limits.login.window=1m",
                        "limiter.limits.login.backend=redis")
                .run((context) -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new LimiterConfigurationFailureAnalyzer()
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("limiter.limits.login.backend")
                            .contains("Spring Data Redis with Lettuce is not on the class path");
                    assertThat(analysis.getAction())
                            .contains("Add org.springframework.boot:spring-boot-starter-data-redis");
                });
    }

    /** A backend is chosen by the name a module contributes it under: one no module brings fails the start. */
    @Test
    void aBackendNoModuleBringsFailsTheStartNamingTheBackendsThereAre() {
        FailureAnalysisAccess.assertStartFails(this.runner.withPropertyValues("limiter.backend=memcached"),
                (description) -> assertThat(description).contains("limiter.backend\n        is 'memcached', but no"
                        + " backend has that name: this application has local"));
        this.runner.withPropertyValues("limiter.limits.a.limit=1", "limiter.limits.a.window=1s",
                "limiter.limits.a.backend=Memcached").run((context) -> {
                    FailureAnalysis analysis = new LimiterConfigurationFailureAnalyzer()
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("limiter.limits.a.backend")
                            .contains("is 'memcached'");
                    assertThat(analysis.getAction()).contains("Set limiter.limits.a.backend to one of local");
                });
        this.runner.withPropertyValues("limiter.backend=LOCAL", "limiter.limits.a.limit=1",
                "limiter.limits.a.window=1s", "limiter.limits.a.backend=Local")
                .run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void anUnknownAlgorithmFailsBinding() {
        this.runner.withPropertyValues("limiter.limits.a.limit=1", "limiter.limits.a.window=1s",
                "limiter.limits.a.algorithm=token-bucket").run((context) -> assertThat(
                        FailureAnalysisAccess.bindFailure(context.getStartupFailure()).getProperty().getName().toString())
                        .isEqualTo("limiter.limits.a.algorithm"));
    }

    @Test
    void badRulesNameTheirIndex() {
        assertFailure(analysis -> {
            assertThat(analysis.getDescription()).contains("limiter.http.rules[0].limit")
                    .contains("names 'nope', which is not under limiter.limits");
            assertThat(analysis.getDescription()).contains("limiter.http.rules[1].path").contains("not a path pattern");
            assertThat(analysis.getDescription()).contains("limiter.http.rules[2].key")
                    .contains("refers to #userId, which is not defined here; available: #clientAddress, #principal, #request");
            assertThat(analysis.getDescription()).contains("limiter.http.rules[3].methods");
            assertThat(analysis.getDescription()).contains("limiter.http.rules[4].key").contains("is not valid SpEL");
            assertThat(analysis.getDescription()).contains("limiter.http.rules[5].charge")
                    .contains("refers to #result, which is not defined here; available: #clientAddress, #principal,"
                            + " #request, #response, #status");
        }, "limiter.limits.api.limit=5", "limiter.limits.api.window=1s",
                "limiter.http.rules[5].limit=api", "limiter.http.rules[5].path=/f",
                "limiter.http.rules[5].charge=#result == null ? 0 : 1",
                "limiter.http.rules[0].limit=nope", "limiter.http.rules[0].path=/a/**",
                "limiter.http.rules[1].limit=api", "limiter.http.rules[1].path=/a/**/b/**",
                "limiter.http.rules[2].limit=api", "limiter.http.rules[2].path=/c", "limiter.http.rules[2].key=#userId",
                "limiter.http.rules[3].limit=api", "limiter.http.rules[3].path=/d", "limiter.http.rules[3].methods=FETCH",
                "limiter.http.rules[4].limit=api", "limiter.http.rules[4].path=/e", "limiter.http.rules[4].key=#request.(");
    }

    private void assertFailure(Consumer<FailureAnalysis> assertions, String... properties) {
        this.runner.withPropertyValues(properties).run((context) -> {
            assertThat(context).hasFailed();
            FailureAnalyzer analyzer = new LimiterConfigurationFailureAnalyzer();
            FailureAnalysis analysis = analyzer.analyze(context.getStartupFailure());
            assertThat(analysis).as("a failure analysis of %s", context.getStartupFailure()).isNotNull();
            assertions.accept(analysis);
        });
    }

}
