package io.slidinglimiter.call;

/**
 * How one transport finds the call it serves, for the limits of annotated methods.
 * <p>
 * Each transport (a web stack, an RPC framework) contributes one; the interceptor asks them in turn
 * and names none.
 */
public interface CallFinder {

    /**
     * The call the current thread serves.
     * @return the call, or null when the thread serves none of this transport's
     */
    InboundCall onThread();

    /**
     * The call a Reactor context carries.
     * @param context a {@code reactor.util.context.ContextView} (typed {@code Object} so that this
     * type loads without Reactor)
     * @return the call, or null when the context carries none of this transport's
     */
    default InboundCall inContext(Object context) {
        return null;
    }

    /**
     * Whether {@link #onThread()} finds only what Reactor's context propagation put on the thread
     * (WebFlux): such a finder is asked after the others.
     * @return whether it does
     */
    default boolean throughReactor() {
        return false;
    }

}
