package io.slidinglimiter.test;

import java.util.concurrent.atomic.AtomicReference;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;

import io.slidinglimiter.annotation.RateLimited;

/**
 * The application the test classes share: one service with a limit of two calls a minute.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class LimitedApplication {

    /** The first context a test class saw, for the others to compare theirs with. */
    static final AtomicReference<ApplicationContext> FIRST_CONTEXT = new AtomicReference<>();

    @Bean
    Greeter greeter() {
        return new Greeter();
    }

    static class Greeter {

        @RateLimited(name = "greet", limit = 2, window = "1m")
        public String greet() {
            return "hello";
        }

    }

}
