package io.slidinglimiter.benchmarks.peers;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import com.giffing.bucket4j.spring.boot.starter.context.RateLimiting;
import io.github.resilience4j.ratelimiter.annotation.RateLimiter;

/**
 * The peers' own annotations, each in a Spring Boot 4 context of its own, started as their READMEs
 * say.
 * <p>
 * Resilience4j's {@code @RateLimiter} ({@code resilience4j-spring-boot3}) and Bucket4j's
 * starter's {@code @RateLimiting}. {@link #main} starts each and says whether it ran on Boot 4, and
 * the error if not; {@link PeerAnnotationBenchmarks} measures the ones that start.
 */
public final class PeerAnnotations {

    private PeerAnnotations() {
    }

    /** Resilience4j's check that refuses Spring Boot 4. */
    static final String RESILIENCE4J_VERIFIER =
            "io.github.resilience4j.springboot3.verifier.autoconfigure.SpringBoot3VerifierAutoConfiguration";

    /**
     * A limit never reached: 10^9 permits a second, waiting never.
     * @param withoutVerifier whether to exclude the check that refuses Spring Boot 4
     */
    static ConfigurableApplicationContext resilience4j(boolean withoutVerifier) {
        return new SpringApplicationBuilder(Resilience4jApplication.class).web(WebApplicationType.NONE)
                .logStartupInfo(false)
                .properties("logging.level.root=warn",
                        "spring.autoconfigure.exclude=" + (withoutVerifier ? RESILIENCE4J_VERIFIER : ""),
                        // Bucket4j's starter, on the same class path, would stop this context.
                        "bucket4j.enabled=false",
                        "resilience4j.ratelimiter.instances.bench.limit-for-period=1000000000",
                        "resilience4j.ratelimiter.instances.bench.limit-refresh-period=1s",
                        "resilience4j.ratelimiter.instances.bench.timeout-duration=0")
                .run();
    }

    /**
     * The same limit for Bucket4j's starter: a method limit in a JCache (Caffeine's, in memory).
     * @param withCacheManager whether the application declares the JCache CacheManager itself
     */
    static ConfigurableApplicationContext bucket4j(boolean withCacheManager) {
        Class<?> application = withCacheManager ? Bucket4jWithCacheManager.class : Bucket4jApplication.class;
        return new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
                .logStartupInfo(false)
                .properties("logging.level.root=warn", "bucket4j.cache-to-use=jcache",
                        // Resilience4j's starter, on the same class path, would stop this context.
                        "spring.autoconfigure.exclude=" + RESILIENCE4J_VERIFIER, "spring.cache.type=jcache",
                        "spring.cache.jcache.provider=com.github.benmanes.caffeine.jcache.spi.CaffeineCachingProvider",
                        "spring.cache.cache-names=buckets",
                        "bucket4j.methods[0].name=bench", "bucket4j.methods[0].cache-name=buckets",
                        "bucket4j.methods[0].rate-limit.bandwidths[0].capacity=1000000000",
                        "bucket4j.methods[0].rate-limit.bandwidths[0].time=1",
                        "bucket4j.methods[0].rate-limit.bandwidths[0].unit=seconds")
                .run();
    }

    /**
     * Starts each peer's annotation on Spring Boot 4 and calls it once.
     * @param args none
     */
    public static void main(String[] args) {
        for (boolean withoutVerifier : new boolean[] { false, true }) {
            String how = withoutVerifier ? " (its Boot 3 check excluded)" : "";
            try (ConfigurableApplicationContext context = resilience4j(withoutVerifier)) {
                System.out.println("Resilience4j @RateLimiter on Spring Boot 4" + how + ": runs, "
                        + context.getBean(Resilience4jService.class).call("k"));
            }
            catch (Throwable ex) {
                System.out.println("Resilience4j @RateLimiter on Spring Boot 4" + how + ": fails: " + rootCause(ex));
            }
        }
        for (boolean withCacheManager : new boolean[] { false, true }) {
            String how = withCacheManager ? " (a JCache CacheManager bean declared by the application)" : "";
            try (ConfigurableApplicationContext context = bucket4j(withCacheManager)) {
                System.out.println("Bucket4j starter @RateLimiting on Spring Boot 4" + how + ": runs, "
                        + context.getBean(Bucket4jService.class).call("k"));
            }
            catch (Throwable ex) {
                System.out.println("Bucket4j starter @RateLimiting on Spring Boot 4" + how + ": fails: "
                        + rootCause(ex));
            }
        }
    }

    static String rootCause(Throwable ex) {
        Throwable cause = ex;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause.getClass().getName() + ": " + cause.getMessage();
    }

    /** Resilience4j's annotation on a method keyed by nothing (its limiters are per name). */
    public static class Resilience4jService {

        @RateLimiter(name = "bench")
        public String call(String key) {
            return key;
        }

        /** The same method without the annotation, on the same proxy. */
        public String plain(String key) {
            return key;
        }

    }

    /** Bucket4j's starter's annotation. */
    public static class Bucket4jService {

        @RateLimiting(name = "bench")
        public String call(String key) {
            return key;
        }

    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Resilience4jApplication {

        @Bean
        Resilience4jService resilience4jService() {
            return new Resilience4jService();
        }

    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableCaching
    static class Bucket4jApplication {

        @Bean
        Bucket4jService bucket4jService() {
            return new Bucket4jService();
        }

    }

    /**
     * Bucket4j's starter 0.12 orders itself after Spring Boot 3's cache auto-configuration, which
     * Boot 4 moved: it then finds no JCache CacheManager. Here the application declares one.
     */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableCaching
    static class Bucket4jWithCacheManager {

        @Bean
        Bucket4jService bucket4jService() {
            return new Bucket4jService();
        }

        @Bean
        javax.cache.CacheManager jcacheManager() {
            javax.cache.CacheManager manager = javax.cache.Caching
                    .getCachingProvider("com.github.benmanes.caffeine.jcache.spi.CaffeineCachingProvider")
                    .getCacheManager();
            if (manager.getCache("buckets") == null) {
                manager.createCache("buckets", new javax.cache.configuration.MutableConfiguration<>());
            }
            return manager;
        }

    }

}
