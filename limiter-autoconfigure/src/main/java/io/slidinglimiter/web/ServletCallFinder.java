package io.slidinglimiter.web;

import io.slidinglimiter.call.CallFinder;
import io.slidinglimiter.call.InboundCall;

/** Finds the servlet request the current thread serves, for the limits of annotated methods. */
public final class ServletCallFinder implements CallFinder {

    @Override
    public InboundCall onThread() {
        return HttpRateLimitContext.current();
    }

}
