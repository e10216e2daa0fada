package io.slidinglimiter.call;

import java.util.List;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * The request a limited call serves, whatever its transport: a servlet or WebFlux request, a gRPC call.
 * <p>
 * What expressions see of it ({@code #request}, {@code #principal}, {@code #clientAddress}), and
 * where its decisions are recorded for the RateLimit headers or their transport's equivalent.
 */
public interface InboundCall {

    /**
     * The Reactor context key under which a servlet request's call travels with a {@code Mono} or
     * {@code suspend} handler's result ({@code io.slidinglimiter.web.HttpRateLimitContextAccessor}).
     */
    String CARRIED_SERVLET_CALL = "sliding-limiter.servlet-call";

    /** @return the request: an {@code HttpServletRequest}, or in WebFlux a {@code ServerHttpRequest} */
    Object request();

    /** @return the authenticated principal, or null */
    Object principal();

    /** @return the client's IP address ({@code getRemoteAddr()} and its WebFlux equivalent), or null */
    String clientAddress();

    /**
     * Records decisions taken for this request, for the RateLimit headers.
     * @param requests the limits asked
     * @param decisions their decisions
     */
    void record(List<LimitRequest> requests, Decisions decisions);

    /**
     * Marks the request rejected by the limiter, where the stack needs telling (WebFlux: so that
     * the filter answers, whatever the application's exception handlers write); nothing for other
     * exceptions, nor in a servlet request, whose filter sees the exception itself.
     * @param failure what deciding the call threw
     */
    default void reject(RuntimeException failure) {
    }

    /**
     * A variable this kind of call adds to {@code #request}, {@code #principal} and
     * {@code #clientAddress}: a gRPC call's {@code #metadata}.
     * @param name the variable's name
     * @return its value, or null when the call has no such variable
     */
    default Object otherVariable(String name) {
        return null;
    }

    /**
     * The value of a web variable of an expression.
     * @param call the request, or null outside one
     * @param name the variable's name
     * @return its value; null outside a request, or for another name
     */
    static Object variable(InboundCall call, String name) {
        if (call == null) {
            return null;
        }
        return switch (name) {
            case "request" -> call.request();
            case "principal" -> call.principal();
            case "clientAddress" -> call.clientAddress();
            default -> call.otherVariable(name);
        };
    }

}
