package io.slidinglimiter.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.web.OpenSecurity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The starter in an application as people run it: Actuator and Micrometer (and Spring Security)
 * on the class path, user aspects, and no start-up warning about a limiter bean.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupHygieneTests {

    @Test
    void withActuatorAndMicrometerNoLimiterBeanMissesPostProcessingAndUserAspectsApply(CapturedOutput output) {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ServiceApplication.class)
                .web(WebApplicationType.NONE).run()) {
            Greeter greeter = context.getBean(Greeter.class);
            greeter.greet();
            greeter.greet();
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::greet);
            assertThat(greeter.greetings()).hasValue(2);

            CallCounter calls = context.getBean(CallCounter.class);
            context.getBean(RateLimiters.class).tryAcquire("Greeter.greet", "*");
            // The three annotated calls are decided through RateLimiters too, and so is the direct one.
            assertThat(calls.rateLimiters).hasValue(4);
            assertThat(calls.backend).hasValue(4);
        }
        assertNoPostProcessorWarningAboutTheLimiter(output);
    }

    @Test
    void withSpringSecurityAndActuatorOverHttpTheStartIsCleanAndLimitsApply(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(WebApplication.class)
                .properties("server.port=0").run()) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            HttpClient client = HttpClient.newHttpClient();
            HttpRequest hello = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/hello")).build();
            List<Integer> statuses = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                statuses.add(client.send(hello, HttpResponse.BodyHandlers.discarding()).statusCode());
            }
            assertThat(statuses).containsExactly(200, 200, 429);
        }
        assertNoPostProcessorWarningAboutTheLimiter(output);
    }

    private static void assertNoPostProcessorWarningAboutTheLimiter(CapturedOutput output) {
        assertThat(output.getAll()).contains("Started");
        assertThat(output.getAll().lines().filter((line) -> line.contains("BeanPostProcessorChecker"))
                .filter((line) -> line.toLowerCase().contains("limit")))
                .isEmpty();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class ServiceApplication {

        @Bean
        Greeter greeter() {
            return new Greeter();
        }

        @Bean
        CallCounter callCounter() {
            return new CallCounter();
        }

    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(OpenSecurity.class)
    static class WebApplication {

        @Bean
        HelloController helloController() {
            return new HelloController();
        }

    }

    @Service
    static class Greeter {

        private final AtomicInteger greetings = new AtomicInteger();

        @RateLimited(limit = 2, window = "1m")
        public String greet() {
            this.greetings.incrementAndGet();
            return "hello";
        }

        AtomicInteger greetings() {
            return this.greetings;
        }

    }

    @RestController
    static class HelloController {

        @GetMapping("/hello")
        @RateLimited(limit = 2, window = "1m")
        String hello() {
            return "hello";
        }

    }

    /** A user's own aspect on the limiter's beans: it must still apply to them. */
    @Aspect
    static class CallCounter {

        final AtomicInteger rateLimiters = new AtomicInteger();

        final AtomicInteger backend = new AtomicInteger();

        @Around("execution(* io.slidinglimiter.RateLimiters.tryAcquire(..))"
                + " || execution(* io.slidinglimiter.RateLimiters.acquireOrReject(..))")
        Object countRateLimiters(ProceedingJoinPoint call) throws Throwable {
            this.rateLimiters.incrementAndGet();
            return call.proceed();
        }

        /** Decisions reaching the backend (the metrics' one look at its parts at start is not one). */
        @Around("execution(* io.slidinglimiter.core.RateLimitBackend.tryAcquire*(..))"
                + " || execution(* io.slidinglimiter.core.RateLimitBackend.admit(..))"
                + " || execution(* io.slidinglimiter.core.RateLimitBackend.acquireOrReject(..))")
        Object countBackend(ProceedingJoinPoint call) throws Throwable {
            this.backend.incrementAndGet();
            return call.proceed();
        }

    }

}
