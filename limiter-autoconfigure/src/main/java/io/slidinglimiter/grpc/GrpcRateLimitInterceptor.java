package io.slidinglimiter.grpc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Predicate;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.QuotaFailure;
import com.google.rpc.RetryInfo;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.RequestCallContext;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * Rate limits for gRPC services, as one global server interceptor.
 * <p>
 * Decides the
 * {@code limiter.grpc.rules} that match a call's method before the service sees it, makes the call
 * current for {@code @RateLimited} service methods (their keys see {@code #metadata} and
 * {@code #clientAddress}), and turns every refusal, its own or a method's, into the call's status:
 * <ul>
 * <li>a denial: {@code RESOURCE_EXHAUSTED} with the denial's description, the
 * {@code google.rpc.RetryInfo} (its delay is {@code Retry-After}'s) and {@code
 * google.rpc.QuotaFailure} details
 * ({@code grpc-status-details-bin}), and the trailers {@code ratelimit-policy}, {@code ratelimit},
 * {@code retry-after} (seconds) and {@code grpc-retry-pushback-ms} (to the millisecond), which a
 * client with a retry policy for {@code RESOURCE_EXHAUSTED} waits out before it retries;</li>
 * <li>a missing key or a cost that cannot be taken: {@code INVALID_ARGUMENT}, since waiting would
 * not help.</li>
 * </ul>
 * A call that is admitted carries {@code ratelimit-policy} and {@code ratelimit} in its response
 * headers, unless {@code limiter.grpc.headers} is false. Never {@code UNKNOWN}: the refusal's
 * exception does not reach gRPC. Calls of a service
 * without {@code @RateLimited} methods that no rule names pass untouched.
 */
public final class GrpcRateLimitInterceptor implements ServerInterceptor {

    /**
     * The interceptor's order among Spring gRPC's global interceptors: after the observation
     * (order 0), so that a refused call is observed with its status.
     */
    public static final int ORDER = 100;

    static final Metadata.Key<String> POLICY = Metadata.Key.of("ratelimit-policy", Metadata.ASCII_STRING_MARSHALLER);

    static final Metadata.Key<String> RATE_LIMIT = Metadata.Key.of("ratelimit", Metadata.ASCII_STRING_MARSHALLER);

    static final Metadata.Key<String> RETRY_AFTER = Metadata.Key.of("retry-after", Metadata.ASCII_STRING_MARSHALLER);

    /** gRPC's server pushback (gRFC A6): how long a retrying client waits before it tries again. */
    static final Metadata.Key<String> PUSHBACK = Metadata.Key.of("grpc-retry-pushback-ms",
            Metadata.ASCII_STRING_MARSHALLER);

    /** The rich error model's trailer, which {@code StatusProto.fromThrowable} reads on the client. */
    static final Metadata.Key<com.google.rpc.Status> DETAILS = Metadata.Key.of("grpc-status-details-bin",
            ProtoUtils.metadataMarshaller(com.google.rpc.Status.getDefaultInstance()));

    private static final Log logger = LogFactory.getLog(GrpcRateLimitInterceptor.class);

    private static final ServerCall.Listener<?> REFUSED = new ServerCall.Listener<>() {
    };

    private final List<GrpcRule> rules;

    private final RateLimiters rateLimiters;

    private final LimiterExpressionParser parser;

    private final Predicate<String> annotated;

    private final boolean headersOnAllowed;

    /** Whether a limit, by name, is in shadow mode: made once, not per call. */
    private final Predicate<String> shadow;

    /** Whether each method, by full name, may be limited: a rule or an annotation may apply. */
    private final ConcurrentMap<String, Boolean> limitedMethods = new ConcurrentHashMap<>();

    /**
     * Creates the interceptor.
     * @param rules the rules of {@code limiter.grpc.rules}, in order
     * @param rateLimiters decides
     * @param parser the parser the rules' keys came from
     * @param annotated whether a service, by name, may have {@code @RateLimited} methods; calls of a
     * service without any, and that no rule names, pass untouched
     * @param headersOnAllowed whether admitted calls carry the {@code ratelimit} headers (denials
     * always carry them, as trailers)
     */
    public GrpcRateLimitInterceptor(List<GrpcRule> rules, RateLimiters rateLimiters, LimiterExpressionParser parser,
            Predicate<String> annotated, boolean headersOnAllowed) {
        this.rules = List.copyOf(rules);
        this.rateLimiters = rateLimiters;
        this.parser = parser;
        this.annotated = annotated;
        this.headersOnAllowed = headersOnAllowed;
        this.shadow = rateLimiters::isShadow;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        if (!isLimited(call.getMethodDescriptor())) {
            return next.startCall(call, headers);
        }
        GrpcRateLimitContext limits = new GrpcRateLimitContext(call, headers, this.shadow);
        LimitedCall<Q, R> limited = new LimitedCall<>(call, limits, this.headersOnAllowed);
        try {
            applyRules(call.getMethodDescriptor().getFullMethodName(), limits);
        }
        catch (RuntimeException ex) {
            return refused(limited, ex);
        }
        Context context = Context.current().withValue(GrpcRateLimitContext.KEY, limits);
        Context previous = context.attach();
        try {
            return new LimitedListener<>(next.startCall(limited, headers), limited, context);
        }
        catch (RuntimeException ex) {
            // A client- or bidirectional-streaming method runs when the call starts.
            return refused(limited, ex);
        }
        finally {
            context.detach(previous);
        }
    }

    private boolean isLimited(MethodDescriptor<?, ?> method) {
        Boolean limited = this.limitedMethods.get(method.getFullMethodName());
        if (limited == null) {
            String name = method.getFullMethodName();
            limited = this.rules.stream().anyMatch((rule) -> rule.matches(name))
                    || method.getServiceName() == null || this.annotated.test(method.getServiceName());
            this.limitedMethods.putIfAbsent(name, limited);
        }
        return limited;
    }

    @SuppressWarnings("unchecked")
    private static <Q> ServerCall.Listener<Q> refused(LimitedCall<Q, ?> call, RuntimeException ex) {
        if (!call.closeRefused(ex)) {
            throw ex;
        }
        return (ServerCall.Listener<Q>) REFUSED;
    }

    /** Decides the rules that match, all-or-nothing; throws when they deny the call. */
    private void applyRules(String fullMethodName, GrpcRateLimitContext limits) {
        if (this.rules.isEmpty()) {
            return;
        }
        List<LimitRequest> requests = GrpcRule.requestsFor(this.rules, fullMethodName, this.rateLimiters,
                new RequestCallContext(this.parser, limits));
        if (requests == null) {
            return;
        }
        Decisions decisions = this.rateLimiters.tryAcquireAll(requests);
        limits.record(requests, decisions);
        if (!decisions.allowed()) {
            throw RateLimitExceededException.of(requests, decisions);
        }
    }

    /** The limiter exception in a failure's cause chain, or null. */
    static RuntimeException limiterFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RateLimitExceededException || cause instanceof InvalidCostException) {
                return (RuntimeException) cause;
            }
        }
        return null;
    }

    /**
     * The status of a refusal.
     * @param failure a denial, a missing key or a cost that cannot be taken
     * @param limits the call's decisions, for the trailers
     * @param trailers receives the trailers
     * @return the status
     */
    static Status refusal(RuntimeException failure, GrpcRateLimitContext limits, Metadata trailers) {
        if (!(failure instanceof RateLimitExceededException denied) || denied.isMissingKey()) {
            return Status.INVALID_ARGUMENT.withDescription(failure.getMessage());
        }
        String[] values = limits.headerValues();
        if (values != null) {
            trailers.put(POLICY, values[0]);
            trailers.put(RATE_LIMIT, values[1]);
        }
        Duration retryAfter = denied.getRetryAfter();
        trailers.put(RETRY_AFTER, Long.toString(denied.getRetryAfterSeconds()));
        trailers.put(PUSHBACK, Long.toString(Math.max(0, retryAfter.toMillis())));
        QuotaFailure.Builder quota = QuotaFailure.newBuilder();
        for (String limit : denied.getViolatedLimits()) {
            quota.addViolations(QuotaFailure.Violation.newBuilder().setSubject("limit:" + limit)
                .setDescription("Rate limit '" + limit + "' is used up for this caller."));
        }
        // The delay of Retry-After, whole seconds rounded up: waiting it always finds the call fits.
        RetryInfo retry = RetryInfo.newBuilder()
            .setRetryDelay(com.google.protobuf.Duration.newBuilder().setSeconds(denied.getRetryAfterSeconds()))
            .build();
        trailers.put(DETAILS, com.google.rpc.Status.newBuilder().setCode(Code.RESOURCE_EXHAUSTED_VALUE)
            .setMessage(denied.getMessage()).addDetails(Any.pack(retry)).addDetails(Any.pack(quota.build()))
            .build());
        return Status.RESOURCE_EXHAUSTED.withDescription(denied.getMessage());
    }

    /**
     * The call as the service sees it: admitted calls get the {@code ratelimit} headers, and a
     * refusal that reaches {@code close} as an {@code UNKNOWN} status's cause (a Kotlin coroutine
     * service's failure) becomes the refusal's own status.
     */
    private static final class LimitedCall<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {

        private final GrpcRateLimitContext limits;

        private final boolean headersOnAllowed;

        private volatile boolean closed;

        LimitedCall(ServerCall<Q, R> call, GrpcRateLimitContext limits, boolean headersOnAllowed) {
            super(call);
            this.limits = limits;
            this.headersOnAllowed = headersOnAllowed;
        }

        @Override
        public void sendHeaders(Metadata headers) {
            String[] values = this.headersOnAllowed ? this.limits.headerValues() : null;
            if (values != null) {
                headers.put(POLICY, values[0]);
                headers.put(RATE_LIMIT, values[1]);
            }
            super.sendHeaders(headers);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            RuntimeException failure = status.isOk() ? null : limiterFailure(status.getCause());
            if (failure != null) {
                closeRefused(failure);
                return;
            }
            this.closed = true;
            super.close(status, trailers);
        }

        /** Closes the call with the refusal in {@code ex}'s cause chain; false when there is none. */
        boolean closeRefused(Throwable ex) {
            RuntimeException failure = limiterFailure(ex);
            if (failure == null) {
                return false;
            }
            if (this.closed) {
                // The service had already answered: nothing more can be said to the client.
                return true;
            }
            this.closed = true;
            Metadata trailers = new Metadata();
            Status status = refusal(failure, this.limits, trailers);
            if (logger.isDebugEnabled()) {
                logger.debug("Refused gRPC call " + this.limits.fullMethodName() + ": " + status.getCode() + " "
                        + status.getDescription());
            }
            super.close(status, trailers);
            return true;
        }

    }

    /** Runs the service's callbacks in the call's context and answers the refusals they throw. */
    private static final class LimitedListener<Q> extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {

        private final LimitedCall<Q, ?> call;

        private final Context context;

        LimitedListener(ServerCall.Listener<Q> listener, LimitedCall<Q, ?> call, Context context) {
            super(listener);
            this.call = call;
            this.context = context;
        }

        @Override
        public void onMessage(Q message) {
            Context previous = this.context.attach();
            try {
                super.onMessage(message);
            }
            catch (RuntimeException ex) {
                answer(ex);
            }
            finally {
                this.context.detach(previous);
            }
        }

        @Override
        public void onHalfClose() {
            Context previous = this.context.attach();
            try {
                super.onHalfClose();
            }
            catch (RuntimeException ex) {
                answer(ex);
            }
            finally {
                this.context.detach(previous);
            }
        }

        @Override
        public void onCancel() {
            Context previous = this.context.attach();
            try {
                super.onCancel();
            }
            finally {
                this.context.detach(previous);
            }
        }

        @Override
        public void onComplete() {
            Context previous = this.context.attach();
            try {
                super.onComplete();
            }
            finally {
                this.context.detach(previous);
            }
        }

        @Override
        public void onReady() {
            Context previous = this.context.attach();
            try {
                super.onReady();
            }
            catch (RuntimeException ex) {
                answer(ex);
            }
            finally {
                this.context.detach(previous);
            }
        }

        private void answer(RuntimeException ex) {
            if (!this.call.closeRefused(ex)) {
                throw ex;
            }
        }

    }

}
