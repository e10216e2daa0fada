package io.slidinglimiter.sample.grpc;

import java.util.concurrent.TimeUnit;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;
import org.springframework.context.event.EventListener;

import io.slidinglimiter.sample.grpc.proto.GreeterGrpc;
import io.slidinglimiter.sample.grpc.proto.HelloRequest;

/**
 * With {@code --sample.client.calls=N}.
 * <p>
 * Calls the running service N times as one API key and prints
 * what a gRPC client sees, the status, the {@code RetryInfo} and the {@code ratelimit} trailers.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("sample.client.calls")
class SelfCallingClient {

    private static final Metadata.Key<String> API_KEY = Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

    private static final Metadata.Key<String> RATE_LIMIT = Metadata.Key.of("ratelimit", Metadata.ASCII_STRING_MARSHALLER);

    private volatile int port;

    @EventListener
    void started(GrpcServerStartedEvent event) {
        this.port = event.getPort();
    }

    @Bean
    ApplicationRunner callItself(@Value("${sample.client.calls}") int calls) {
        return (arguments) -> {
            ManagedChannel channel = ManagedChannelBuilder.forAddress("localhost", this.port).usePlaintext().build();
            try {
                Metadata headers = new Metadata();
                headers.put(API_KEY, "demo");
                GreeterGrpc.GreeterBlockingStub greeter = GreeterGrpc.newBlockingStub(channel)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
                for (int i = 1; i <= calls; i++) {
                    System.out.println("call " + i + ": " + call(greeter));
                }
            }
            finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        };
    }

    private static String call(GreeterGrpc.GreeterBlockingStub greeter) throws InvalidProtocolBufferException {
        try {
            return "OK " + greeter.sayHello(HelloRequest.newBuilder().setName("demo").build()).getMessage();
        }
        catch (StatusRuntimeException ex) {
            String retry = "";
            for (Any detail : StatusProto.fromThrowable(ex).getDetailsList()) {
                if (detail.is(RetryInfo.class)) {
                    retry = ", RetryInfo " + detail.unpack(RetryInfo.class).getRetryDelay().getSeconds() + "s";
                }
            }
            return ex.getStatus().getCode() + " " + ex.getStatus().getDescription() + retry + ", ratelimit: "
                    + ex.getTrailers().get(RATE_LIMIT);
        }
    }

}
