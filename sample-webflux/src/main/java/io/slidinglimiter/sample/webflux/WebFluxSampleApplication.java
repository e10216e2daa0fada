package io.slidinglimiter.sample.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The WebFlux sample: {@code mvn -pl sample-webflux -am spring-boot:run}, then see the README.
 */
@SpringBootApplication
public class WebFluxSampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(WebFluxSampleApplication.class, args);
    }

}
