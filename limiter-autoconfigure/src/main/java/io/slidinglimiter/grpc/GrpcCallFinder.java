package io.slidinglimiter.grpc;

import io.slidinglimiter.call.CallFinder;
import io.slidinglimiter.call.InboundCall;

/** Finds the gRPC call the current thread serves, for the limits of annotated methods. */
public final class GrpcCallFinder implements CallFinder {

    @Override
    public InboundCall onThread() {
        return GrpcRateLimitContext.current();
    }

}
