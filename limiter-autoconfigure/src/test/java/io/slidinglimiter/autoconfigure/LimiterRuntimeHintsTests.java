package io.slidinglimiter.autoconfigure;

import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.annotation.RateLimits;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an ahead-of-time processed application is told to keep: every Lua script, the annotation's
 * attributes, and each annotated method for its proxy's reflective call.
 */
class LimiterRuntimeHintsTests {

    private final RuntimeHints hints = new RuntimeHints();

    @Test
    void everyLuaScriptIsAResourceHint() throws IOException {
        new LimiterRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
        Resource[] scripts = new PathMatchingResourcePatternResolver()
                .getResources("classpath*:" + LimiterRuntimeHints.LUA_SCRIPTS);
        assertThat(scripts).extracting(Resource::getFilename).contains("decide.lua", "now.lua", "write.lua",
                "fast-path.lua", "sliding-window-counter.lua", "sliding-log.lua", "batch.lua");
        for (Resource script : scripts) {
            assertThat(RuntimeHintsPredicates.resource().forResource("io/slidinglimiter/redis/" + script.getFilename()))
                    .accepts(this.hints);
        }
    }

    @Test
    void theAnnotationsAttributesCanBeRead() {
        new LimiterRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
        for (Class<?> annotation : List.of(RateLimited.class, RateLimits.class)) {
            Stream.of(annotation.getDeclaredMethods()).forEach((attribute) -> assertThat(
                    RuntimeHintsPredicates.reflection().onMethodInvocation(attribute)).accepts(this.hints));
        }
    }

    @Test
    void annotatedMethodsOnceOrRepeatedAreRegisteredForTheirProxysCall() {
        new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(this.hints, Service.class);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Service.class, "once")).accepts(this.hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Service.class, "twice")).accepts(this.hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Service.class, "free")).rejects(this.hints);
    }

    @Test
    void theAutoConfigurationImportsTheHints() {
        assertThat(LimiterAutoConfiguration.class.getAnnotation(ImportRuntimeHints.class).value())
                .containsExactly(LimiterRuntimeHints.class);
    }

    /**
     * An application processed ahead of time with no limit on Redis, run with one: the start fails
     * instead of counting in memory.
     */
    @Test
    void aRedisLimitWithoutTheRedisAutoConfigurationFailsTheStart() {
        ApplicationContextRunner aotWithoutRedis = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LimiterAutoConfiguration.class));
        FailureAnalysisAccess.assertStartFails(aotWithoutRedis.withPropertyValues("limiter.backend=redis"),
                (description) -> assertThat(description).contains("limiter.backend\n        is redis, but the"
                        + " Redis backend was not configured: this application was processed ahead of time"));
        FailureAnalysisAccess.assertStartFails(aotWithoutRedis.withPropertyValues("limiter.limits.a.limit=1",
                "limiter.limits.a.window=1s", "limiter.limits.a.backend=redis"),
                (description) -> assertThat(description).contains("limiter.limits.a.backend\n        is redis"));
        aotWithoutRedis.run((context) -> assertThat(context).hasNotFailed());
    }

    static class Service {

        @RateLimited(limit = 1, window = "1s")
        public String once() {
            return "once";
        }

        @RateLimited(name = "a", limit = 1, window = "1s")
        @RateLimited(name = "b", limit = 1, window = "1s")
        public String twice() {
            return "twice";
        }

        public String free() {
            return "free";
        }

    }

}
