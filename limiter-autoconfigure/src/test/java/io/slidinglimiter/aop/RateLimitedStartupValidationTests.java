package io.slidinglimiter.aop;

import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @RateLimited} that cannot work fails the start, naming the class, the method and the
 * expression or limit.
 */
class RateLimitedStartupValidationTests {

    private static final String PREFIX = "@RateLimited on " + RateLimitedStartupValidationTests.class.getName();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            .withPropertyValues("limiter.limits.login.limit=3", "limiter.limits.login.window=1m");

    @Test
    void anUnknownParameterFailsTheStart() {
        assertFailure(UnknownParameter.class, (message) -> assertThat(message)
                .contains(PREFIX + "$UnknownParameter.login(String)")
                .contains("key expression '#usr' refers to #usr, which is not defined here; available: #args,"
                        + " #clientAddress, #method, #principal, #request, #username"));
    }

    @Test
    void aSyntaxErrorFailsTheStart() {
        assertFailure(SyntaxError.class, (message) -> assertThat(message)
                .contains(PREFIX + "$SyntaxError.login(String)")
                .contains("key expression '#username +' is not valid SpEL"));
    }

    @Test
    void anUndefinedLimitFailsTheStart() {
        assertFailure(UndefinedLimit.class, (message) -> assertThat(message)
                .contains(PREFIX + "$UndefinedLimit.search(String)").contains("no limit is named 'search'"));
    }

    @Test
    void aMissingBeanFailsTheStart() {
        assertFailure(MissingBean.class, (message) -> assertThat(message)
                .contains("refers to bean @tenants, which does not exist"));
    }

    @Test
    void badInlineAttributesFailTheStart() {
        assertFailure(BadInline.class, (message) -> assertThat(message)
                .contains("window 'soon' of limit 'a' is not a duration")
                .contains("limit 'b' sets limit but not window")
                .contains("Limit 'c': window 1000ms cannot be cut into 7 sub-windows")
                .contains("Limit 'd': limit must be greater than 0 but was 0")
                .contains("cost 9 of limit 'e' is outside 1..5")
                .contains("condition expression '#nope' refers to #nope")
                .contains("name 'f' and value 'g' disagree"));
    }

    @Test
    void aChargeThatCannotApplyFailsTheStartNamingTheMethodAndTheExpression() {
        assertFailure(BadCharges.class, (message) -> assertThat(message)
                .contains(PREFIX + "$BadCharges.logout(String)\n        charge expression '#result > 0 ? 1 : 0'"
                        + " refers to #result, which is not defined here")
                .contains(PREFIX + "$BadCharges.login(String)\n        charge expression '#status == 404 ? 1 : 0'"
                        + " refers to #status, which is not defined here")
                .contains(PREFIX + "$BadCharges.search(String)\n        charge expression '#result.size( *'"
                        + " is not valid SpEL"));
    }

    /** Issue 18, item 7: a literal of the wrong type is the developer's error, found at start. */
    @Test
    void aLiteralCostOrChargeThatIsNotANumberFailsTheStart() {
        assertFailure(BadLiterals.class, (message) -> assertThat(message)
                .contains(PREFIX + "$BadLiterals.text(String)\n        cost ''abc'' of limit 'text-cost' is a literal"
                        + " that is not a number of permits from 1 to 5")
                .contains(PREFIX + "$BadLiterals.zero(String)\n        cost ''0'' of limit 'zero-cost'")
                .contains(PREFIX + "$BadLiterals.charged(String)\n        charge ''many'' of limit 'text-charge' is a"
                        + " literal that is not a number of permits from 0 up"));
    }

    @Test
    void theVoidMethodsFailureSaysThereIsNoResult() {
        this.runner.withUserConfiguration(BadCharges.class).run((context) -> assertThat(
                analysis(context.getStartupFailure()).getAction()).contains("The method returns nothing, so there is"
                        + " no #result"));
    }

    @Test
    void aConfiguredChargeWinsAndIsValidatedUnderItsPropertyName() {
        assertFailure(this.runner.withPropertyValues("limiter.limits.login.charge=#nothing"), GoodCharge.class,
                (message) -> assertThat(message).contains(
                        "charge (limiter.limits.login.charge) expression '#nothing' refers to #nothing"));
        this.runner.withPropertyValues("limiter.limits.login.charge=#exception == null ? 0 : 1")
                .withUserConfiguration(GoodCharge.class).run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void aPlanIsValidatedLikeAKeyAndTheConfiguredOneWins() {
        assertFailure(UnknownPlanVariable.class, (message) -> assertThat(message)
                .contains(PREFIX + "$UnknownPlanVariable.login(String)")
                .contains("plan expression '#tier' refers to #tier, which is not defined here"));
        assertFailure(this.runner.withPropertyValues("limiter.limits.login.plan=#nothing"), GoodPlan.class,
                (message) -> assertThat(message).contains(
                        "plan (limiter.limits.login.plan) expression '#nothing' refers to #nothing"));
        this.runner.withPropertyValues("limiter.limits.login.plan=#username").withUserConfiguration(GoodPlan.class)
                .run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void aCostAboveTheLimitsOwnQuotaIsAllowedWhenAPlanHasRoomForIt() {
        this.runner.withPropertyValues("limiter.limits.login.plans.pro.limit=10")
                .withUserConfiguration(CostlyPlan.class).run((context) -> assertThat(context).hasNotFailed());
        assertFailure(CostlyPlan.class, (message) -> assertThat(message)
                .contains("cost 5 of limit 'login' is outside 1..3"));
    }

    @Test
    void theSameLimitTwiceOnOneMethodFailsTheStart() {
        assertFailure(Twice.class, (message) -> assertThat(message).contains("limit 'login' is applied twice"));
    }

    @Test
    void conflictingInlineDefinitionsOfOneNameFailTheStart() {
        assertFailure(Conflicting.class, (message) -> assertThat(message)
                .contains("Limit 'shared' is defined twice, differently"));
    }

    @Test
    void defaultNamesMayNotCollideAcrossClasses() {
        this.runner.withUserConfiguration(FirstOrders.class, SecondOrders.class).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(analysis(context.getStartupFailure()).getDescription())
                    .contains("its default limit name 'Orders.place' is also the default name of");
        });
    }

    @Test
    void aNameDefinedInlineElsewhereCanBeUsedByName() {
        this.runner.withUserConfiguration(SharedByName.class).run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void theFailureAnalysisSaysHowToFixIt() {
        this.runner.withUserConfiguration(UnknownParameter.class).run((context) -> {
            FailureAnalysis analysis = analysis(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith("Sliding Limiter's configuration is invalid:");
            assertThat(analysis.getAction()).contains("compile with -parameters");
        });
    }

    private void assertFailure(Class<?> configuration, Consumer<String> assertions) {
        assertFailure(this.runner, configuration, assertions);
    }

    private static void assertFailure(ApplicationContextRunner runner, Class<?> configuration,
            Consumer<String> assertions) {
        FailureAnalysisAccess.assertStartFails(runner.withUserConfiguration(configuration), assertions);
    }

    private static FailureAnalysis analysis(Throwable failure) {
        return FailureAnalysisAccess.of(failure);
    }


    @Configuration(proxyBeanMethods = false)
    static class UnknownParameter {

        @Bean
        Object service() {
            return new Object() {
            };
        }

        @RateLimited(name = "login", key = "#usr")
        public void login(String username) {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class BadCharges {

        @RateLimited(name = "logout-limit", limit = 5, window = "1m", charge = "#result > 0 ? 1 : 0")
        public void logout(String username) {
        }

        @RateLimited(name = "login-limit", limit = 5, window = "1m", charge = "#status == 404 ? 1 : 0")
        public String login(String username) {
            return username;
        }

        @RateLimited(name = "search-limit", limit = 5, window = "1m", charge = "#result.size( *")
        public java.util.List<String> search(String query) {
            return java.util.List.of(query);
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class BadLiterals {

        @RateLimited(name = "text-cost", limit = 5, window = "1m", cost = "'abc'")
        public void text(String query) {
        }

        @RateLimited(name = "zero-cost", limit = 5, window = "1m", cost = "'0'")
        public void zero(String query) {
        }

        @RateLimited(name = "text-charge", limit = 5, window = "1m", charge = "'many'")
        public String charged(String query) {
            return query;
        }

        @RateLimited(name = "string-cost", limit = 5, window = "1m", cost = "'3'")
        public void fine(String query) {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class GoodCharge {

        @RateLimited(name = "login", charge = "#exception != null ? 1 : 0")
        public String login(String username) {
            return username;
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class UnknownPlanVariable {

        @RateLimited(name = "login", plan = "#tier")
        public String login(String username) {
            return username;
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class GoodPlan {

        @RateLimited(name = "login", plan = "#username == 'ada' ? 'pro' : null")
        public String login(String username) {
            return username;
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class CostlyPlan {

        @RateLimited(name = "login", cost = "5", plan = "#username == 'ada' ? 'pro' : null")
        public String login(String username) {
            return username;
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class SyntaxError {

        @RateLimited(name = "login", key = "#username +")
        public void login(String username) {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class UndefinedLimit {

        @RateLimited(name = "search", key = "#query")
        public void search(String query) {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class MissingBean {

        @RateLimited(name = "login", key = "@tenants.of(#username)")
        public void login(String username) {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class BadInline {

        @RateLimited(name = "a", limit = 5, window = "soon")
        public void a() {
        }

        @RateLimited(name = "b", limit = 5)
        public void b() {
        }

        @RateLimited(name = "c", limit = 5, window = "1s", subWindows = 7)
        public void c() {
        }

        @RateLimited(name = "d", limit = 0, window = "1s")
        public void d() {
        }

        @RateLimited(name = "e", limit = 5, window = "1s", cost = "9")
        public void e() {
        }

        @RateLimited(name = "login", condition = "#nope")
        public void condition() {
        }

        @RateLimited(name = "f", value = "g", limit = 5, window = "1s")
        public void f() {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class Twice {

        @RateLimited(name = "login")
        @RateLimited(name = "login", key = "#user")
        public void login(String user) {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class Conflicting {

        @RateLimited(name = "shared", limit = 5, window = "1s")
        public void one() {
        }

        @RateLimited(name = "shared", limit = 6, window = "1s")
        public void two() {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class SharedByName {

        @RateLimited(name = "orders")
        public void usesIt() {
        }

        @RateLimited(name = "orders", limit = 5, window = "1s")
        public void definesIt() {
        }

    }

    static class First {

        static class Orders {

            @RateLimited(limit = 5, window = "1s")
            public void place() {
            }

        }

    }

    static class Second {

        static class Orders {

            @RateLimited(limit = 5, window = "1s")
            public void place() {
            }

        }

    }

    @Configuration(proxyBeanMethods = false)
    static class FirstOrders {

        @Bean
        First.Orders firstOrders() {
            return new First.Orders();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class SecondOrders {

        @Bean
        Second.Orders secondOrders() {
            return new Second.Orders();
        }

    }

}
