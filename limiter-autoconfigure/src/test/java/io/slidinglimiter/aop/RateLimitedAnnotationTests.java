package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.core.RateLimitBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * {@code @RateLimited} on service beans, outside any web request.
 */
class RateLimitedAnnotationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            .withUserConfiguration(Services.class)
            .withPropertyValues("limiter.limits.login.limit=3", "limiter.limits.login.window=1m",
                    "limiter.limits.per-user.limit=5", "limiter.limits.per-user.window=1m",
                    "limiter.limits.global.limit=2", "limiter.limits.global.window=1m");

    @Test
    void aDeniedCallThrowsWithTheLimitItsKeyAndTheWait() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            accounts.login("alice");
            accounts.login("alice");
            accounts.login("alice");
            RateLimitExceededException denied = catchDenied(() -> accounts.login("alice"));
            assertThat(denied.getLimitName()).isEqualTo("login");
            assertThat(denied.getKey()).isEqualTo("alice");
            assertThat(denied.getLimit()).isEqualTo(3);
            assertThat(denied.getWindow()).isEqualTo(Duration.ofMinutes(1));
            assertThat(denied.getRetryAfter()).isEqualTo(Duration.ofMinutes(1));
            assertThat(denied.getViolatedLimits()).containsExactly("login");
            assertThat(accounts.logins()).isEqualTo(3);
            assertThatNoException().isThrownBy(() -> accounts.login("bob"));
        });
    }

    @Test
    void theWindowSlidesWithTheApplicationsTimeSource() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            ManualTimeSource time = context.getBean(ManualTimeSource.class);
            for (int i = 0; i < 3; i++) {
                accounts.login("alice");
            }
            time.advance(Duration.ofSeconds(59));
            catchDenied(() -> accounts.login("alice"));
            time.advance(Duration.ofSeconds(1));
            assertThatNoException().isThrownBy(() -> accounts.login("alice"));
        });
    }

    @Test
    void aCallRejectedByOneLimitConsumesFromNone() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            RateLimitBackend backend = context.getBean(RateLimitBackend.class);
            RateLimiters limiters = context.getBean(RateLimiters.class);
            accounts.transfer("alice");
            accounts.transfer("bob");
            RateLimitExceededException denied = catchDenied(() -> accounts.transfer("carol"));
            assertThat(denied.getLimitName()).isEqualTo("global");
            assertThat(denied.getViolatedLimits()).containsExactly("global");
            assertThat(backend.peek(limiters.definition("per-user"), "carol").remaining()).isEqualTo(5);
            assertThat(backend.peek(limiters.definition("per-user"), "alice").remaining()).isEqualTo(4);
            assertThat(accounts.transfers()).isEqualTo(2);
        });
    }

    @Test
    void aFalseConditionBypassesTheLimit() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            for (int i = 0; i < 10; i++) {
                accounts.pay("alice", 50);
            }
            accounts.pay("alice", 500);
            catchDenied(() -> accounts.pay("alice", 500));
        });
    }

    @Test
    void theCostComesFromAnExpression() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            accounts.importRows(List.of("a", "b", "c", "d"));
            accounts.importRows(List.of("e"));
            catchDenied(() -> accounts.importRows(List.of("f", "g")));
            assertThatNoException().isThrownBy(() -> accounts.importRows(List.of("f")));
        });
    }

    @Test
    void aCostOutsideOneToTheLimitIsRefusedAndConsumesNothing() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            assertThatExceptionOfType(InvalidCostException.class).isThrownBy(() -> accounts.importRows(List.of()))
                    .withMessage("The cost of limit 'rows' was 0; it must be between 1 and 6");
            assertThatExceptionOfType(InvalidCostException.class)
                    .isThrownBy(() -> accounts.importRows(List.of("1", "2", "3", "4", "5", "6", "7")))
                    .withMessage("The cost of limit 'rows' was 7; it must be between 1 and 6");
            accounts.importRows(List.of("1", "2", "3", "4", "5", "6"));
        });
    }

    @Test
    void theProgrammaticApiAndTheAnnotationShareCounters() {
        this.runner.run((context) -> {
            RateLimiters limiters = context.getBean(RateLimiters.class);
            Accounts accounts = context.getBean(Accounts.class);
            assertThat(limiters.tryAcquire("login", "alice", 2).allowed()).isTrue();
            accounts.login("alice");
            catchDenied(() -> accounts.login("alice"));
            assertThat(limiters.tryAcquire("login", "alice").allowed()).isFalse();
        });
    }

    @Test
    void anEmptyKeyIsRejectedByDefault() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            RateLimitExceededException denied = catchDenied(() -> accounts.login(null));
            assertThat(denied.getKey()).isNull();
            assertThat(denied.getLimitName()).isEqualTo("login");
            catchDenied(() -> accounts.login("  "));
            assertThat(accounts.logins()).isZero();
        });
    }

    @Test
    void anEmptyKeyBypassesTheLimitWhenAllowed() {
        this.runner.withPropertyValues("limiter.empty-key=allow").run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            for (int i = 0; i < 10; i++) {
                accounts.login(null);
                accounts.login("");
            }
            assertThat(accounts.logins()).isEqualTo(20);
            assertThat(context.getBean(RateLimiters.class).tryAcquire("login", "*", 3).allowed()).isTrue();
        });
    }

    @Test
    void aKeyThatIsAStringParameterIsReadFromTheArgumentsAndCountsAsItsExpressionWould() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            RateLimiters limiters = context.getBean(RateLimiters.class);
            RateLimitedOperationSource operations = context.getBean(RateLimitedOperationSource.class);
            // Read from the arguments: a String parameter by name or position, and no other expression.
            assertThat(needsContext(operations, accounts, "login", String.class)).isFalse();
            assertThat(needsContext(operations, accounts, "positional", String.class, String.class)).isFalse();
            assertThat(needsContext(operations, accounts, "account", long.class)).isTrue();
            assertThat(needsContext(operations, accounts, "byEmail", String.class)).isTrue();
            assertThat(needsContext(operations, accounts, "pay", String.class, int.class)).isTrue();
            // The same counter as the expression's: the programmatic API shares it.
            accounts.positional("alice", "x");
            assertThat(limiters.peek("positional", "alice").remaining()).isZero();
            assertThat(catchDenied(() -> accounts.positional("alice", "y")).getKey()).isEqualTo("alice");
            accounts.account(42);
            assertThat(catchDenied(() -> accounts.account(42)).getKey()).isEqualTo("42");
            assertThat(limiters.peek("account", "42").remaining()).isZero();
        });
    }

    @Test
    void everyMethodOfAClassFindsItsOwnLimitOnTheCallPathOverloadsIncluded() {
        this.runner.run((context) -> {
            RateLimitedOperationSource operations = context.getBean(RateLimitedOperationSource.class);
            Overloads target = new Overloads();
            // Twice round: the first calls resolve and grow the table, the second only read it.
            for (int round = 0; round < 2; round++) {
                for (Method method : Overloads.class.getDeclaredMethods()) {
                    RateLimited annotation = method.getAnnotation(RateLimited.class);
                    RateLimitedOperation operation = operations.operationOfCall(method, target);
                    assertThat(operation.limits()).singleElement()
                            .satisfies((limit) -> assertThat(limit.limitName()).isEqualTo(annotation.name()));
                }
            }
            assertThat(operations.operationOfCall(Accounts.class.getMethod("logins"), new Accounts())).isNull();
        });
    }

    private static boolean needsContext(RateLimitedOperationSource operations, Object target, String name,
            Class<?>... parameterTypes) throws NoSuchMethodException {
        return operations.operationOfCall(Accounts.class.getMethod(name, parameterTypes), target).limits().get(0)
                .needsContext();
    }

    @Test
    void aKeyExpressionThatFailsCountsAsAnEmptyKey() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            RateLimitExceededException denied = catchDenied(() -> accounts.byEmail(null));
            assertThat(denied.getKey()).isNull();
        });
    }

    @Test
    void hugeAndOddKeysAreDistinctCounters() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            String huge = "x".repeat(10_240);
            List<String> keys = List.of(huge, huge + "y", "ユーザー", "użytkownik", "a\u0000b", "a\r\nb", "a\tb",
                    "login:alice", "{alice}", "*");
            for (String key : keys) {
                for (int i = 0; i < 3; i++) {
                    accounts.login(key);
                }
            }
            assertThat(accounts.logins()).isEqualTo(3 * keys.size());
            for (String key : keys) {
                catchDenied(() -> accounts.login(key));
            }
        });
    }

    @Test
    void parametersArePositionalToo() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            accounts.positional("alice", "x");
            catchDenied(() -> accounts.positional("alice", "y"));
            accounts.positional("bob", "x");
        });
    }

    @Test
    void aTypeLevelAnnotationLimitsEachPublicMethodUnderItsOwnDefaultName() {
        this.runner.run((context) -> {
            Reports reports = context.getBean(Reports.class);
            reports.daily();
            RateLimitExceededException denied = catchDenied(reports::daily);
            assertThat(denied.getLimitName()).isEqualTo("Reports.daily");
            reports.weekly();
            catchDenied(reports::weekly);
            // A method's own annotation replaces the type's.
            for (int i = 0; i < 5; i++) {
                reports.live();
            }
            catchDenied(reports::live);
        });
    }

    @Test
    void beansAndTheMethodAreAvailableToExpressions() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            accounts.tenantScoped("t1");
            RateLimitExceededException denied = catchDenied(() -> accounts.tenantScoped("t1"));
            assertThat(denied.getKey()).isEqualTo("tenant-t1:tenantScoped:1");
        });
    }

    @Test
    void manyThreadsOnOneKeyGetExactlyTheLimitThroughTheAnnotation() {
        this.runner.run((context) -> {
            Accounts accounts = context.getBean(Accounts.class);
            AtomicLong admitted = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> workers = new ArrayList<>();
                for (int thread = 0; thread < 8; thread++) {
                    workers.add(pool.submit(() -> {
                        for (int i = 0; i < 5_000; i++) {
                            try {
                                accounts.hot("one-key");
                                admitted.incrementAndGet();
                            }
                            catch (RateLimitExceededException denied) {
                                // counted by what got through
                            }
                        }
                    }));
                }
                for (Future<?> worker : workers) {
                    worker.get();
                }
            }
            finally {
                pool.shutdownNow();
            }
            assertThat(admitted.get()).isEqualTo(1_000);
            assertThat(accounts.hotCalls()).isEqualTo(1_000);
        });
    }

    private static RateLimitExceededException catchDenied(Runnable call) {
        try {
            call.run();
        }
        catch (RateLimitExceededException ex) {
            return ex;
        }
        throw new AssertionError("Expected the call to be denied");
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {

        @Bean
        ManualTimeSource manualTimeSource() {
            // A multiple of every window below, so slots start exactly at the first call.
            return new ManualTimeSource(1_700_000_040_000L);
        }

        @Bean
        Accounts accounts() {
            return new Accounts();
        }

        @Bean
        Reports reports() {
            return new Reports();
        }

        @Bean
        TenantNames tenantNames() {
            return new TenantNames();
        }

    }

    static class Accounts {

        private int logins;

        private int transfers;

        private final AtomicInteger hotCalls = new AtomicInteger();

        // Read through methods: the bean is a class proxy, whose own fields stay at zero.
        public int logins() {
            return this.logins;
        }

        public int transfers() {
            return this.transfers;
        }

        public int hotCalls() {
            return this.hotCalls.get();
        }

        @RateLimited(name = "hot", limit = 1_000, window = "1m", key = "#key")
        public void hot(String key) {
            this.hotCalls.incrementAndGet();
        }

        @RateLimited(name = "login", key = "#username")
        public void login(String username) {
            this.logins++;
        }

        @RateLimited(name = "per-user", key = "#from")
        @RateLimited(name = "global")
        public void transfer(String from) {
            this.transfers++;
        }

        @RateLimited(name = "payments", limit = 1, window = "1m", key = "#payer", condition = "#amount > 100")
        public void pay(String payer, int amount) {
        }

        @RateLimited(name = "rows", limit = 6, window = "1m", cost = "#rows.size()")
        public void importRows(List<String> rows) {
        }

        @RateLimited(value = "by-email", limit = 5, window = "1m", key = "#email.toLowerCase()")
        public void byEmail(String email) {
        }

        @RateLimited(name = "positional", limit = 1, window = "1m", key = "#p0")
        public void positional(String user, String ignored) {
        }

        @RateLimited(name = "account", limit = 1, window = "1m", key = "#id")
        public void account(long id) {
        }

        @RateLimited(name = "tenant", limit = 1, window = "1m",
                key = "@tenantNames.prefix(#a0) + ':' + #method.name + ':' + #args.length")
        public void tenantScoped(String tenant) {
        }

    }

    static class Overloads {

        @RateLimited(name = "call-0", limit = 1, window = "1m")
        public void call() {
        }

        @RateLimited(name = "call-1", limit = 1, window = "1m")
        public void call(String a) {
        }

        @RateLimited(name = "call-1-int", limit = 1, window = "1m")
        public void call(int a) {
        }

        @RateLimited(name = "call-1-long", limit = 1, window = "1m")
        public void call(long a) {
        }

        @RateLimited(name = "call-2", limit = 1, window = "1m")
        public void call(String a, String b) {
        }

        @RateLimited(name = "call-2-int", limit = 1, window = "1m")
        public void call(String a, int b) {
        }

        @RateLimited(name = "read", limit = 1, window = "1m")
        public void read() {
        }

        @RateLimited(name = "write", limit = 1, window = "1m")
        public void write() {
        }

        @RateLimited(name = "delete", limit = 1, window = "1m")
        public void delete(String a) {
        }

        @RateLimited(name = "list", limit = 1, window = "1m")
        public void list(String a, String b, String c) {
        }

        @RateLimited(name = "find", limit = 1, window = "1m")
        public void find(long a) {
        }

        @RateLimited(name = "count", limit = 1, window = "1m")
        public void count() {
        }

    }

    @RateLimited(limit = 1, window = "1m")
    static class Reports {

        public void daily() {
        }

        public void weekly() {
        }

        @RateLimited(name = "live", limit = 5, window = "1s")
        public void live() {
        }

    }

    static class TenantNames {

        public String prefix(String tenant) {
            return "tenant-" + tenant;
        }

    }

}
