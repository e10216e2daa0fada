package io.slidinglimiter.benchmarks;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The smallest application with the starter: one service with an annotated method.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class BenchApplication {

    @Bean
    BenchService benchService() {
        return new BenchService();
    }

}
