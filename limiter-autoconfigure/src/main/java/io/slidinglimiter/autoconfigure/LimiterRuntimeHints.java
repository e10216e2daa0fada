package io.slidinglimiter.autoconfigure;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.annotation.RateLimits;

/**
 * What an ahead-of-time processed application needs of the limiter beyond what Spring Boot registers.
 * <p>
 * What an ahead-of-time processed application (and a native image) needs beyond what Spring Boot
 * registers for the properties and the endpoint: the Redis backend's Lua scripts, read as resources
 * when it starts, and the annotation's attributes, read reflectively when a method's limits are
 * resolved. The annotated methods themselves are registered through {@code @Reflective}.
 */
class LimiterRuntimeHints implements RuntimeHintsRegistrar {

    /** Where the Redis backend's scripts are: {@code RedisScripts} joins them into one. */
    static final String LUA_SCRIPTS = "io/slidinglimiter/redis/*.lua";

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        hints.resources().registerPattern(LUA_SCRIPTS);
        hints.reflection().registerType(RateLimited.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(RateLimits.class, MemberCategory.INVOKE_PUBLIC_METHODS);
    }

}
