package io.slidinglimiter.gateway.mvc;

import java.util.List;

import org.springframework.web.servlet.function.ServerRequest;

import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.web.HttpRateLimitContext;

/**
 * A request on a Gateway Server MVC route as a key expression sees it.
 * <p>
 * {@code #request} is the
 * route's {@code ServerRequest} (the type a Java route's key function receives), with
 * {@code #clientAddress} and {@code #principal} those of its servlet request.
 */
final class RouteCall implements InboundCall {

    private final ServerRequest request;

    RouteCall(ServerRequest request) {
        this.request = request;
    }

    @Override
    public Object request() {
        return this.request;
    }

    @Override
    public Object principal() {
        return this.request.servletRequest().getUserPrincipal();
    }

    @Override
    public String clientAddress() {
        return this.request.servletRequest().getRemoteAddr();
    }

    /** Decisions are recorded on the servlet request's context, which writes the headers. */
    @Override
    public void record(List<LimitRequest> requests, Decisions decisions) {
        HttpRateLimitContext web = HttpRateLimitContext.current();
        if (web != null) {
            web.record(requests, decisions);
        }
    }

}
