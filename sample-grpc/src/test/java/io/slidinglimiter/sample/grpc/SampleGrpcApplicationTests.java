package io.slidinglimiter.sample.grpc;

import java.util.concurrent.TimeUnit;

import com.google.rpc.RetryInfo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

import io.slidinglimiter.sample.grpc.proto.GreeterGrpc;
import io.slidinglimiter.sample.grpc.proto.HelloReply;
import io.slidinglimiter.sample.grpc.proto.HelloRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** The sample as a user runs it, on a free port: the annotated method and the rule, over a real channel. */
class SampleGrpcApplicationTests {

    @Test
    void greetingsAreLimitedPerApiKeyAndStreamsPerClient() throws Exception {
        int[] port = new int[1];
        SpringApplication application = new SpringApplication(SampleGrpcApplication.class);
        application.addListeners((ApplicationListener<GrpcServerStartedEvent>) (event) -> port[0] = event.getPort());
        try (ConfigurableApplicationContext context = application.run("--spring.grpc.server.port=0")) {
            ManagedChannel channel = ManagedChannelBuilder.forAddress("localhost", port[0]).usePlaintext().build();
            try {
                Metadata headers = new Metadata();
                headers.put(Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER), "demo");
                GreeterGrpc.GreeterBlockingStub greeter = GreeterGrpc.newBlockingStub(channel)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
                HelloRequest request = HelloRequest.newBuilder().setName("demo").build();
                for (int i = 0; i < 5; i++) {
                    assertThat(greeter.sayHello(request).getMessage()).isEqualTo("Hello demo");
                }
                StatusRuntimeException denied = (StatusRuntimeException) catchThrowable(() -> greeter.sayHello(request));
                assertThat(denied.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(StatusProto.fromThrowable(denied).getDetailsList()).anyMatch((detail) -> detail.is(RetryInfo.class));

                for (int i = 0; i < 2; i++) {
                    greeter.streamHellos(request).forEachRemaining(HelloReply::getMessage);
                }
                StatusRuntimeException streamDenied = (StatusRuntimeException) catchThrowable(
                        () -> greeter.streamHellos(request).next());
                assertThat(streamDenied.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(streamDenied.getStatus().getDescription()).startsWith("Rate limit 'streams' of 2 per 60s");
            }
            finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

}
