package io.slidinglimiter.grpc;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;

import io.slidinglimiter.call.AppliedLimits;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * The gRPC call a limited method serves.
 * <p>
 * What expressions see of it ({@code #metadata},
 * {@code #clientAddress}), and where its decisions are kept for the {@code ratelimit} headers and
 * trailers. Current in the service's code while {@link GrpcRateLimitInterceptor} intercepts the call.
 */
public final class GrpcRateLimitContext implements InboundCall {

    /** The variables of a key over a gRPC call. */
    public static final Set<String> KEY_VARIABLES = Set.of("metadata", "clientAddress");

    static final Context.Key<GrpcRateLimitContext> KEY = Context.key("limiter.grpc.call");

    private final ServerCall<?, ?> call;

    private final Metadata headers;

    private final Predicate<String> shadow;

    /** Made at the first decision: a call of a method that no limit applies to records none. */
    private volatile AppliedLimits applied;

    GrpcRateLimitContext(ServerCall<?, ?> call, Metadata headers, Predicate<String> shadow) {
        this.call = call;
        this.headers = headers;
        this.shadow = shadow;
    }

    /**
     * The context of the gRPC call the current thread serves.
     * @return the context, or null outside a call the interceptor saw
     */
    public static GrpcRateLimitContext current() {
        return KEY.get();
    }

    /** @return null: a gRPC call's request is its message, a parameter of the service method */
    @Override
    public Object request() {
        return null;
    }

    /** @return null: a gRPC call has no servlet principal */
    @Override
    public Object principal() {
        return null;
    }

    /** @return the client's IP address, or the transport's name for its peer when it has none */
    @Override
    public String clientAddress() {
        SocketAddress remote = this.call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        if (remote instanceof InetSocketAddress inet) {
            return (inet.getAddress() != null) ? inet.getAddress().getHostAddress() : inet.getHostString();
        }
        return (remote != null) ? remote.toString() : null;
    }

    /**
     * The call's metadata, {@code #metadata} in expressions, where {@code #metadata['x-api-key']}
     * reads an entry's text.
     * @return the metadata the client sent
     */
    public Metadata metadata() {
        return this.headers;
    }

    /** @return the full method name of the call ({@code package.Service/Method}) */
    public String fullMethodName() {
        return this.call.getMethodDescriptor().getFullMethodName();
    }

    @Override
    public Object otherVariable(String name) {
        return "metadata".equals(name) ? metadata() : null;
    }

    @Override
    public void record(List<LimitRequest> requests, Decisions decisions) {
        AppliedLimits applied = this.applied;
        if (applied == null) {
            synchronized (this) {
                applied = this.applied;
                if (applied == null) {
                    applied = new AppliedLimits(this.shadow);
                    this.applied = applied;
                }
            }
        }
        applied.record(requests, decisions);
    }

    /** @return {@code ratelimit-policy} then {@code ratelimit}, or null when no limit applied */
    String[] headerValues() {
        AppliedLimits applied = this.applied;
        return (applied != null) ? applied.headerValues() : null;
    }

}
