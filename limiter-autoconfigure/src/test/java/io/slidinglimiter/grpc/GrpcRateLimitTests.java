package io.slidinglimiter.grpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.StringValue;
import com.google.rpc.QuotaFailure;
import com.google.rpc.RetryInfo;
import io.grpc.BindableService;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;
import org.springframework.test.util.AopTestUtils;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A Spring gRPC server (Netty, a free port) called by a real channel: {@code @RateLimited} service
 * methods keyed by {@code #metadata} and {@code #clientAddress}, unary and server-streaming, and
 * {@code limiter.grpc.rules} for a service without annotations. A denial is
 * {@code RESOURCE_EXHAUSTED} with its description, {@code RetryInfo} and {@code QuotaFailure}
 * details and the {@code ratelimit} trailers, and never reaches the service; a missing key is
 * {@code INVALID_ARGUMENT}; a client retries after the {@code RetryInfo} it was given, or on its own
 * after the server's pushback. Locally and on Redis.
 */
class GrpcRateLimitTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    /** One application per backend for the tests that use their own keys; started on first use. */
    private static final Map<String, ConfigurableApplicationContext> shared = new HashMap<>();

    private static final Metadata.Key<String> API_KEY = Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

    private static final Metadata.Key<String> USER = Metadata.Key.of("x-user", Metadata.ASCII_STRING_MARSHALLER);

    static final MethodDescriptor<StringValue, StringValue> SAY_HELLO = method("test.Greeter/SayHello",
            MethodDescriptor.MethodType.UNARY);

    static final MethodDescriptor<StringValue, StringValue> COUNT = method("test.Greeter/Count",
            MethodDescriptor.MethodType.SERVER_STREAMING);

    static final MethodDescriptor<StringValue, StringValue> PING = method("test.Plain/Ping",
            MethodDescriptor.MethodType.UNARY);

    static final MethodDescriptor<StringValue, StringValue> FREE = method("test.Free/Ping",
            MethodDescriptor.MethodType.UNARY);

    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() throws InterruptedException {
        for (ManagedChannel channel : this.channels) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        this.contexts.forEach(ConfigurableApplicationContext::close);
    }

    @AfterAll
    static void closeShared() {
        shared.values().forEach(ConfigurableApplicationContext::close);
        shared.clear();
    }

    private ConfigurableApplicationContext shared(String backend) {
        return shared.computeIfAbsent(backend, (name) -> application(name));
    }

    @ParameterizedTest
    @ValueSource(strings = { "local", "redis" })
    void anAnnotatedUnaryMethodIsLimitedByMetadataAndADenialNeverReachesTheService(String backend) throws Exception {
        ConfigurableApplicationContext context = shared(backend);
        Channel channel = channel(context);
        Greeter greeter = greeter(context);
        int hellos = greeter.hellos.get();
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        Channel captured = ClientInterceptors.intercept(channel,
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
        assertThat(hello(captured, "alpha")).isEqualTo("hello alpha");
        assertThat(headers.get().get(GrpcRateLimitInterceptor.POLICY)).isEqualTo("\"hello\";q=2;w=60");
        assertThat(headers.get().get(GrpcRateLimitInterceptor.RATE_LIMIT)).startsWith("\"hello\";r=1;t=");
        assertThat(hello(captured, "alpha")).isEqualTo("hello alpha");

        StatusRuntimeException denied = deniedHello(captured, "alpha");
        assertThat(denied.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(denied.getStatus().getDescription()).startsWith("Rate limit 'hello' of 2 per 60s exceeded; retry after");
        Metadata denial = denied.getTrailers();
        assertThat(denial.get(GrpcRateLimitInterceptor.POLICY)).isEqualTo("\"hello\";q=2;w=60");
        assertThat(denial.get(GrpcRateLimitInterceptor.RATE_LIMIT)).startsWith("\"hello\";r=0;t=");
        long retryAfterSeconds = Long.parseLong(denial.get(GrpcRateLimitInterceptor.RETRY_AFTER));
        assertThat(retryAfterSeconds).isBetween(1L, 60L);
        assertThat(Long.parseLong(denial.get(GrpcRateLimitInterceptor.PUSHBACK))).isBetween(1L, 60_000L);
        RetryInfo retry = detail(denied, RetryInfo.class);
        assertThat(retry.getRetryDelay().getSeconds()).as("Retry-After's delay").isEqualTo(retryAfterSeconds);
        assertThat(detail(denied, QuotaFailure.class).getViolations(0).getSubject()).isEqualTo("limit:hello");
        assertThat(greeter.hellos.get() - hellos).as("the denied call never ran").isEqualTo(2);

        assertThat(hello(captured, "beta")).as("another key's quota").isEqualTo("hello beta");
        assertThat(context.getBean(RateLimiters.class).usage("hello", "alpha").used()).isEqualTo(2);
    }

    @ParameterizedTest
    @ValueSource(strings = { "local", "redis" })
    void aServerStreamingMethodIsLimitedByTheClientsAddress(String backend) {
        ConfigurableApplicationContext context = shared(backend);
        Channel channel = channel(context);
        int counts = greeter(context).counts.get();
        List<String> counted = new ArrayList<>();
        ClientCalls.blockingServerStreamingCall(channel, COUNT, CallOptions.DEFAULT, StringValue.of("3"))
                .forEachRemaining((value) -> counted.add(value.getValue()));
        assertThat(counted).containsExactly("1", "2", "3");
        StatusRuntimeException denied = (StatusRuntimeException) catchThrowable(() -> ClientCalls
                .blockingServerStreamingCall(channel, COUNT, CallOptions.DEFAULT, StringValue.of("3")).next());
        assertThat(denied.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(denied.getTrailers().get(GrpcRateLimitInterceptor.POLICY)).isEqualTo("\"count\";q=1;w=60");
        assertThat(context.getBean(RateLimiters.class).usage("count", "127.0.0.1").used()).isEqualTo(1);
        assertThat(greeter(context).counts.get() - counts).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = { "local", "redis" })
    void aRuleLimitsAServiceWithoutAnnotationsBeforeItIsCalled(String backend) {
        ConfigurableApplicationContext context = shared(backend);
        Channel channel = channel(context);
        Plain plain = AopTestUtils.getUltimateTargetObject(context.getBean(Plain.class));
        int pings = plain.pings.get();
        Channel ada = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(user("ada")));
        for (int i = 0; i < 3; i++) {
            assertThat(ClientCalls.blockingUnaryCall(ada, PING, CallOptions.DEFAULT, StringValue.of("ping")).getValue())
                    .isEqualTo("pong");
        }
        StatusRuntimeException denied = (StatusRuntimeException) catchThrowable(
                () -> ClientCalls.blockingUnaryCall(ada, PING, CallOptions.DEFAULT, StringValue.of("ping")));
        assertThat(denied.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(denied.getStatus().getDescription()).startsWith("Rate limit 'pings' of 3 per 60s exceeded");
        assertThat(denied.getTrailers().get(GrpcRateLimitInterceptor.POLICY)).isEqualTo("\"pings\";q=3;w=60");
        assertThat(plain.pings.get() - pings).as("the rule decided before the service").isEqualTo(3);
        Channel grace = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(user("grace")));
        assertThat(ClientCalls.blockingUnaryCall(grace, PING, CallOptions.DEFAULT, StringValue.of("ping")).getValue())
                .isEqualTo("pong");
    }

    @Test
    void aServiceWithNothingToLimitIsCalledAsItIs() {
        ConfigurableApplicationContext context = shared("local");
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        Channel captured = ClientInterceptors.intercept(channel(context),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
        for (int i = 0; i < 5; i++) {
            assertThat(ClientCalls.blockingUnaryCall(captured, FREE, CallOptions.DEFAULT, StringValue.of("ping"))
                    .getValue()).isEqualTo("pong");
        }
        assertThat(headers.get().get(GrpcRateLimitInterceptor.RATE_LIMIT)).isNull();
        assertThat(trailers.get().get(GrpcRateLimitInterceptor.RATE_LIMIT)).isNull();
    }

    @Test
    void aMissingKeyIsInvalidArgumentAndNeverReachesTheService() {
        ConfigurableApplicationContext context = shared("local");
        int hellos = greeter(context).hellos.get();
        StatusRuntimeException refused = (StatusRuntimeException) catchThrowable(
                () -> ClientCalls.blockingUnaryCall(channel(context), SAY_HELLO, CallOptions.DEFAULT, StringValue.of("x")));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(refused.getStatus().getDescription()).contains("Rate limit 'hello' needs a key")
                .contains("#metadata['x-api-key']");
        assertThat(refused.getTrailers().get(GrpcRateLimitInterceptor.RETRY_AFTER)).isNull();
        assertThat(greeter(context).hellos.get()).isEqualTo(hellos);
    }

    @Test
    void withoutHeadersOnAdmittedCallsOnlyDenialsCarryThem() {
        ConfigurableApplicationContext context = start("local", "limiter.grpc.headers=false");
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        Channel captured = ClientInterceptors.intercept(channel(context),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
        hello(captured, "delta");
        assertThat(headers.get().get(GrpcRateLimitInterceptor.RATE_LIMIT)).isNull();
        hello(captured, "delta");
        assertThat(deniedHello(captured, "delta").getTrailers().get(GrpcRateLimitInterceptor.RATE_LIMIT))
                .startsWith("\"hello\";r=0;t=");
    }

    @Test
    void aClientThatWaitsTheRetryInfoItWasGivenIsAdmitted() throws Exception {
        ConfigurableApplicationContext context = start("local");
        ManualTimeSource clock = context.getBean(ManualTimeSource.class);
        Channel channel = channel(context);
        hello(channel, "gamma");
        hello(channel, "gamma");
        StatusRuntimeException denied = deniedHello(channel, "gamma");
        com.google.protobuf.Duration delay = detail(denied, RetryInfo.class).getRetryDelay();
        clock.advance(Duration.ofSeconds(delay.getSeconds(), delay.getNanos()));
        assertThat(hello(channel, "gamma")).as("retried after the RetryInfo's delay").isEqualTo("hello gamma");
    }

    /** End to end with the real clock: gRPC's own retry waits the server's pushback, then is admitted. */
    @Test
    void aClientWithARetryPolicyRetriesAfterTheServersPushback() {
        ConfigurableApplicationContext context = start("local", "limiter.limits.quick.limit=1",
                "limiter.limits.quick.window=500ms", "limiter.limits.quick.sub-windows=5",
                "limiter.grpc.rules[1].method=test.Plain/Ping", "limiter.grpc.rules[1].limit=quick",
                "test.system-clock=true");
        Map<String, ?> retryPolicy = Map.of("maxAttempts", 2.0, "initialBackoff", "0.01s", "maxBackoff", "0.01s",
                "backoffMultiplier", 1.0, "retryableStatusCodes", List.of("RESOURCE_EXHAUSTED"));
        Map<String, ?> serviceConfig = Map.of("methodConfig",
                List.of(Map.of("name", List.of(Map.of("service", "test.Plain")), "retryPolicy", retryPolicy)));
        ManagedChannel retrying = NettyChannelBuilder.forAddress("127.0.0.1", port(context)).usePlaintext()
                .defaultServiceConfig(serviceConfig).enableRetry().build();
        this.channels.add(retrying);
        Channel ada = ClientInterceptors.intercept(retrying, MetadataUtils.newAttachHeadersInterceptor(user("ada")));
        assertThat(ClientCalls.blockingUnaryCall(ada, PING, CallOptions.DEFAULT, StringValue.of("ping")).getValue())
                .isEqualTo("pong");
        // The channel's own backoff is 10 ms and it tries twice: only waiting the pushback (at least
        // the 400 ms until the first permit leaves the window) gets the second attempt admitted.
        assertThat(ClientCalls.blockingUnaryCall(ada, PING, CallOptions.DEFAULT, StringValue.of("ping")).getValue())
                .as("denied once, then retried by the channel").isEqualTo("pong");
        assertThat(((Plain) AopTestUtils.getUltimateTargetObject(context.getBean(Plain.class))).pings.get()).isEqualTo(2);
        assertThat(context.getBean(RateLimiters.class).usage("quick", "*").used()).isEqualTo(1);
    }

    @Test
    void aRuleForAMethodNoServiceServesOrOverAnUndefinedLimitFailsTheStart() {
        Throwable unserved = catchThrowable(() -> start("local", "limiter.grpc.rules[1].method=test.Greeter/SayHi",
                "limiter.grpc.rules[1].limit=pings"));
        assertThat(FailureAnalysisAccess.of(unserved).getDescription()).contains("limiter.grpc.rules[1].method")
                .contains("names 'test.Greeter/SayHi', which no gRPC service of the application serves");
        assertThat(FailureAnalysisAccess.of(unserved).getAction()).contains("test.Greeter/SayHello");
        Throwable undefined = catchThrowable(() -> start("local", "limiter.grpc.rules[1].method=test.Plain/Ping",
                "limiter.grpc.rules[1].limit=nope"));
        assertThat(FailureAnalysisAccess.of(undefined).getDescription()).contains("limiter.grpc.rules[1].limit")
                .contains("names 'nope', which is not under limiter.limits");
        Throwable badName = catchThrowable(() -> start("local", "limiter.grpc.rules[1].method=Ping",
                "limiter.grpc.rules[1].limit=pings"));
        assertThat(FailureAnalysisAccess.of(badName).getDescription()).contains("limiter.grpc.rules[1].method")
                .contains("'Ping' is not a full gRPC method name");
        Throwable badKey = catchThrowable(() -> start("local", "limiter.grpc.rules[1].method=test.Plain/Ping",
                "limiter.grpc.rules[1].limit=pings", "limiter.grpc.rules[1].key=#request.remoteAddr"));
        assertThat(FailureAnalysisAccess.of(badKey).getDescription()).contains("limiter.grpc.rules[1].key");
        assertThat(FailureAnalysisAccess.of(badKey).getAction()).contains("#metadata and #clientAddress");
    }

    @Test
    void metadataInTheKeyOfAMethodThatServesNoGrpcCallFailsTheStart() {
        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(GrpcApplication.class, NotGrpc.class)
                .web(WebApplicationType.NONE).properties("spring.grpc.server.port=0", "limiter.limits.hello.limit=2",
                        "limiter.limits.hello.window=1m", "limiter.limits.count.limit=1", "limiter.limits.count.window=1m")
                .run().close());
        assertThat(FailureAnalysisAccess.of(failure).getDescription()).contains("NotGrpc.lookUp(String)")
                .contains("#metadata");
        assertThat(FailureAnalysisAccess.of(failure).getAction()).contains("in a gRPC service, #metadata");
    }

    private static String hello(Channel channel, String apiKey) {
        Channel keyed = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(apiKey(apiKey)));
        return ClientCalls.blockingUnaryCall(keyed, SAY_HELLO, CallOptions.DEFAULT, StringValue.of(apiKey)).getValue();
    }

    private static StatusRuntimeException deniedHello(Channel channel, String apiKey) {
        Throwable failure = catchThrowable(() -> hello(channel, apiKey));
        assertThat(failure).isInstanceOf(StatusRuntimeException.class);
        return (StatusRuntimeException) failure;
    }

    private static <T extends com.google.protobuf.Message> T detail(StatusRuntimeException failure, Class<T> type)
            throws InvalidProtocolBufferException {
        com.google.rpc.Status status = StatusProto.fromThrowable(failure);
        assertThat(status).as("grpc-status-details-bin").isNotNull();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
        for (Any detail : status.getDetailsList()) {
            if (detail.is(type)) {
                return detail.unpack(type);
            }
        }
        throw new AssertionError("No " + type.getSimpleName() + " in " + status);
    }

    private static Metadata apiKey(String value) {
        Metadata metadata = new Metadata();
        metadata.put(API_KEY, value);
        return metadata;
    }

    private static Metadata user(String value) {
        Metadata metadata = new Metadata();
        metadata.put(USER, value);
        return metadata;
    }

    /** The service itself: Spring gives out a proxy, whose own fields are never set. */
    private static Greeter greeter(ConfigurableApplicationContext context) {
        return AopTestUtils.getUltimateTargetObject(context.getBean(Greeter.class));
    }

    private Channel channel(ConfigurableApplicationContext context) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port(context)).usePlaintext().build();
        this.channels.add(channel);
        return channel;
    }

    private static int port(ConfigurableApplicationContext context) {
        return context.getBean(GrpcApplication.class).port.get();
    }

    private ConfigurableApplicationContext start(String backend, String... more) {
        ConfigurableApplicationContext context = application(backend, more);
        this.contexts.add(context);
        return context;
    }

    private static ConfigurableApplicationContext application(String backend, String... more) {
        List<String> properties = new ArrayList<>(List.of("spring.grpc.server.port=0",
                "limiter.limits.hello.limit=2",
                "limiter.limits.hello.window=1m", "limiter.limits.count.limit=1", "limiter.limits.count.window=1m",
                "limiter.limits.pings.limit=3", "limiter.limits.pings.window=1m",
                "limiter.grpc.rules[0].method=test.Plain/*", "limiter.grpc.rules[0].limit=pings",
                "limiter.grpc.rules[0].key=#metadata['x-user']"));
        if (backend.equals("redis")) {
            properties.addAll(List.of(redis.limiterProperties()));
        }
        properties.addAll(List.of(more));
        return new SpringApplicationBuilder(GrpcApplication.class).web(WebApplicationType.NONE)
                .properties(properties.toArray(String[]::new)).run();
    }

    private static MethodDescriptor<StringValue, StringValue> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<StringValue, StringValue>newBuilder().setType(type).setFullMethodName(name)
                .setRequestMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance())).build();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class GrpcApplication {

        final AtomicInteger port = new AtomicInteger();

        /** The reset times the assertions expect, unless a test runs on the system's clock. */
        @Bean
        @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "test.system-clock",
                havingValue = "false", matchIfMissing = true)
        ManualTimeSource manualTimeSource() {
            return new ManualTimeSource(1_700_000_040_000L);
        }

        @Bean
        Greeter greeter() {
            return new Greeter();
        }

        @Bean
        Plain plain() {
            return new Plain();
        }

        @Bean
        Free free() {
            return new Free();
        }

        @EventListener
        void started(GrpcServerStartedEvent event) {
            this.port.set(event.getPort());
        }

    }

    /**
     * A service written as grpc-java generates them: its methods are called on the bean Spring
     * gives out (a proxy here), since {@code bindService} is final and binds {@code this}.
     */
    static class Greeter implements BindableService {

        final AtomicInteger hellos = new AtomicInteger();

        final AtomicInteger counts = new AtomicInteger();

        @RateLimited(name = "hello", key = "#metadata['x-api-key']")
        public void sayHello(StringValue request, StreamObserver<StringValue> responses) {
            this.hellos.incrementAndGet();
            responses.onNext(StringValue.of("hello " + request.getValue()));
            responses.onCompleted();
        }

        @RateLimited(name = "count", key = "#clientAddress")
        public void count(StringValue request, StreamObserver<StringValue> responses) {
            this.counts.incrementAndGet();
            for (int i = 1; i <= Integer.parseInt(request.getValue()); i++) {
                responses.onNext(StringValue.of(Integer.toString(i)));
            }
            responses.onCompleted();
        }

        @Override
        public final ServerServiceDefinition bindService() {
            return ServerServiceDefinition.builder("test.Greeter")
                    .addMethod(SAY_HELLO, ServerCalls.asyncUnaryCall(this::sayHello))
                    .addMethod(COUNT, ServerCalls.asyncServerStreamingCall(this::count))
                    .build();
        }

    }

    /** A service with neither annotations nor rules: the interceptor lets its calls through untouched. */
    static class Free implements BindableService {

        public void ping(StringValue request, StreamObserver<StringValue> responses) {
            responses.onNext(StringValue.of("pong"));
            responses.onCompleted();
        }

        @Override
        public ServerServiceDefinition bindService() {
            return ServerServiceDefinition.builder("test.Free").addMethod(FREE, ServerCalls.asyncUnaryCall(this::ping))
                    .build();
        }

    }

    /** A bean that is no gRPC service: its keys have no #metadata. */
    static class NotGrpc {

        @RateLimited(name = "hello", key = "#metadata['x-api-key']")
        public String lookUp(String name) {
            return name;
        }

    }

    /** A service without annotations, limited by limiter.grpc.rules. */
    static class Plain implements BindableService {

        final AtomicInteger pings = new AtomicInteger();

        public void ping(StringValue request, StreamObserver<StringValue> responses) {
            this.pings.incrementAndGet();
            responses.onNext(StringValue.of("pong"));
            responses.onCompleted();
        }

        @Override
        public final ServerServiceDefinition bindService() {
            return ServerServiceDefinition.builder("test.Plain")
                    .addMethod(PING, ServerCalls.asyncUnaryCall(this::ping))
                    .build();
        }

    }

}
