package io.slidinglimiter.sample.grpc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring gRPC service limited by Sliding Limiter: {@code greet.Greeter/SayHello} by the caller's
 * {@code x-api-key} (an annotation), {@code greet.Greeter/StreamHellos} by the client's address (a
 * rule in application.yml). Run it with {@code mvn -pl sample-grpc -am spring-boot:run}; add
 * {@code -Dspring-boot.run.arguments=--sample.client.calls=7} to have it call itself and print what
 * a client sees.
 */
@SpringBootApplication
public class SampleGrpcApplication {

    public static void main(String[] args) {
        SpringApplication.run(SampleGrpcApplication.class, args);
    }

}
