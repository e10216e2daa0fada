package io.slidinglimiter.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import com.google.protobuf.StringValue;
import io.grpc.BindableService;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

import io.slidinglimiter.annotation.RateLimited;

/**
 * gRPC calls a second through a Spring gRPC server (Netty), called over one real channel by callers
 * in the same JVM.
 * <p>
 * {@code bench.Plain/Ping} (no limit), {@code bench.Ruled/Ping} (a rule of
 * {@code limiter.grpc.rules}) and {@code bench.Annotated/Ping} ({@code @RateLimited}), every limit
 * keyed by {@code #clientAddress} and never reached. With {@code off} the limiter is disabled
 * ({@code limiter.enabled=false}: no interceptor at all) and only the plain service is called; with
 * {@code quiet} admitted calls carry no {@code ratelimit} headers ({@code limiter.grpc.headers=false}).
 * Arguments: {@code on|quiet|off}, callers, seconds per round, rounds.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class GrpcBench {

    static final MethodDescriptor<StringValue, StringValue> PLAIN = ping("bench.Plain/Ping");

    static final MethodDescriptor<StringValue, StringValue> RULED = ping("bench.Ruled/Ping");

    static final MethodDescriptor<StringValue, StringValue> ANNOTATED = ping("bench.Annotated/Ping");

    private final AtomicInteger port = new AtomicInteger();

    public static void main(String[] args) throws Exception {
        boolean limiter = !"off".equals(args[0]);
        boolean headers = !"quiet".equals(args[0]);
        int callers = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GrpcBench.class)
                .web(WebApplicationType.NONE)
                .properties("spring.grpc.server.port=0", "logging.level.root=warn", BenchApplication.WITHOUT_METRICS,
                        "limiter.enabled=" + limiter, "limiter.grpc.headers=" + headers,
                        "limiter.limits.ping.limit=" + LocalBenchmarks.NEVER_REACHED,
                        "limiter.limits.ping.window=1s", "limiter.grpc.rules[0].method=bench.Ruled/Ping",
                        "limiter.grpc.rules[0].limit=ping", "limiter.grpc.rules[0].key=#clientAddress")
                .run()) {
            ManagedChannel channel = NettyChannelBuilder
                    .forAddress("127.0.0.1", context.getBean(GrpcBench.class).port.get()).usePlaintext().build();
            List<MethodDescriptor<StringValue, StringValue>> targets = limiter ? List.of(PLAIN, RULED, ANNOTATED)
                    : List.of(PLAIN);
            // The same 30 s of warm-up either way: each target 10 s, or the plain one three times.
            for (int i = 0; i < 3; i++) {
                run(channel, targets.get(i % targets.size()), callers, 10);
            }
            for (int round = 1; round <= rounds; round++) {
                for (MethodDescriptor<StringValue, StringValue> target : targets) {
                    long calls = run(channel, target, callers, seconds);
                    System.out.printf("limiter %s, %s, %d callers: %d calls/s%n", args[0],
                            target.getFullMethodName(), callers, calls / seconds);
                }
            }
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** Calls {@code target} from {@code callers} threads for {@code seconds}; the calls that succeeded. */
    private static long run(ManagedChannel channel, MethodDescriptor<StringValue, StringValue> target, int callers,
            int seconds) throws InterruptedException {
        AtomicBoolean running = new AtomicBoolean(true);
        LongAdder calls = new LongAdder();
        CountDownLatch done = new CountDownLatch(callers);
        StringValue request = StringValue.of("ping");
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            Thread thread = new Thread(() -> {
                while (running.get()) {
                    ClientCalls.blockingUnaryCall(channel, target, CallOptions.DEFAULT, request);
                    calls.increment();
                }
                done.countDown();
            });
            thread.start();
            threads.add(thread);
        }
        Thread.sleep(seconds * 1000L);
        running.set(false);
        done.await();
        return calls.sum();
    }

    @EventListener
    void started(GrpcServerStartedEvent event) {
        this.port.set(event.getPort());
    }

    @Bean
    Plain plain() {
        return new Plain(PLAIN);
    }

    @Bean
    Ruled ruled() {
        return new Ruled();
    }

    @Bean
    Annotated annotated() {
        return new Annotated();
    }

    private static MethodDescriptor<StringValue, StringValue> ping(String name) {
        return MethodDescriptor.<StringValue, StringValue>newBuilder().setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(name).setRequestMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance())).build();
    }

    /** Answers pong; bound as grpc-java's generated code binds, through the bean Spring hands out. */
    static class Plain implements BindableService {

        private final MethodDescriptor<StringValue, StringValue> method;

        Plain(MethodDescriptor<StringValue, StringValue> method) {
            this.method = method;
        }

        public void ping(StringValue request, StreamObserver<StringValue> responses) {
            responses.onNext(StringValue.of("pong"));
            responses.onCompleted();
        }

        /** The method served; asked through the proxy, whose own fields are never set. */
        public MethodDescriptor<StringValue, StringValue> method() {
            return this.method;
        }

        @Override
        public final ServerServiceDefinition bindService() {
            MethodDescriptor<StringValue, StringValue> served = method();
            return ServerServiceDefinition.builder(served.getServiceName())
                    .addMethod(served, ServerCalls.asyncUnaryCall(this::ping)).build();
        }

    }

    /** Limited by limiter.grpc.rules. */
    static class Ruled extends Plain {

        Ruled() {
            super(RULED);
        }

    }

    /** Limited by its annotation. */
    static class Annotated extends Plain {

        Annotated() {
            super(ANNOTATED);
        }

        @Override
        @RateLimited(name = "ping", key = "#clientAddress")
        public void ping(StringValue request, StreamObserver<StringValue> responses) {
            super.ping(request, responses);
        }

    }

}
