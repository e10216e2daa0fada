package io.slidinglimiter.benchmarks;

import java.util.concurrent.TimeUnit;

import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlinx.coroutines.Dispatchers;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What {@code @RateLimited} costs a Kotlin {@code suspend} function.
 * <p>
 * A Kotlin {@code suspend} function with {@code @RateLimited} (a limit never reached), beside the
 * same function un-annotated and behind Spring's do-nothing advice, called as Kotlin calls it: with
 * a continuation, on the benchmark's thread. Apart from {@link LocalBenchmarks} because Kotlin's
 * coroutines on the class path change what Spring AOP does on every proxied call.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class SuspendBenchmarks {

    private ConfigurableApplicationContext context;

    private SuspendingBenchService service;

    /** What Kotlin passes a suspend function: the functions here return without suspending, so it is never resumed. */
    private final Continuation<Object> caller = new NeverResumed();

    @Setup(Level.Trial)
    public void start() {
        this.context = new SpringApplicationBuilder(BenchApplication.class, Coroutines.class)
                .web(WebApplicationType.NONE).logStartupInfo(false)
                .properties("logging.level.root=warn", BenchApplication.WITHOUT_METRICS,
                        "limiter.limits.allow.limit=" + LocalBenchmarks.NEVER_REACHED, "limiter.limits.allow.window=1s",
                        "limiter.limits.charged-less.limit=10", "limiter.limits.charged-less.window=1s",
                        "limiter.limits.charged-same.limit=10", "limiter.limits.charged-same.window=1s")
                .run();
        this.service = this.context.getBean(SuspendingBenchService.class);
        for (Object returned : new Object[] { annotatedSuspendCall(), noopAdvisedSuspendCall(),
                unannotatedSuspendCall() }) {
            if (!"k".equals(returned)) {
                throw new IllegalStateException("A suspend function suspended, returning " + returned);
            }
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        this.context.close();
    }

    /** {@link LocalBenchmarks#annotatedAllow} as a Kotlin {@code suspend} function. */
    @Benchmark
    public Object annotatedSuspendCall() {
        return this.service.call("k", this.caller);
    }

    /** Spring AOP's own cost of advising a {@code suspend} function: it runs it as a {@code Mono}. */
    @Benchmark
    public Object noopAdvisedSuspendCall() {
        return this.service.advised("k", this.caller);
    }

    @Benchmark
    public Object unannotatedSuspendCall() {
        return this.service.plain("k", this.caller);
    }

    /** The Kotlin service, beside the application's Java one. */
    @Configuration(proxyBeanMethods = false)
    static class Coroutines {

        @Bean
        SuspendingBenchService suspendingBenchService() {
            return new SuspendingBenchService();
        }

    }

    /**
     * The caller of a suspend function that never suspends. Spring runs an advised suspend function in
     * its caller's context: an unconfined one, so that the call stays on the benchmark's thread (an
     * empty one would send it to {@code Dispatchers.Default}).
     */
    static final class NeverResumed implements Continuation<Object> {

        @Override
        public CoroutineContext getContext() {
            return Dispatchers.getUnconfined();
        }

        @Override
        public void resumeWith(Object result) {
            throw new IllegalStateException("The suspend function suspended");
        }

    }

}
