package io.slidinglimiter.call;

import java.util.List;

/**
 * The transports' {@link CallFinder}s, asked in turn: what an annotated method's limits see of the
 * call it serves.
 */
public final class CallFinders {

    /** No transport: calls serve no request. */
    public static final CallFinders NONE = new CallFinders(List.of());

    /** The finders of calls bound to the thread by their transport (a servlet request, a gRPC call). */
    private final CallFinder[] outsideReactor;

    /** The finders of calls that Reactor put on the thread (a WebFlux request). */
    private final CallFinder[] throughReactor;

    /** Every finder, for a Reactor context. */
    private final CallFinder[] all;

    /**
     * Creates the finders.
     * @param finders one per transport present
     */
    public CallFinders(List<CallFinder> finders) {
        this.outsideReactor = finders.stream().filter((finder) -> !finder.throughReactor()).toArray(CallFinder[]::new);
        this.throughReactor = finders.stream().filter(CallFinder::throughReactor).toArray(CallFinder[]::new);
        this.all = finders.toArray(CallFinder[]::new);
    }

    /**
     * The call the current thread serves: one its transport bound to the thread, else one Reactor put
     * there.
     * @return the call, or null
     */
    public InboundCall current() {
        InboundCall call = outsideReactor();
        return (call != null) ? call : first(this.throughReactor);
    }

    /**
     * The call the current thread's transport bound to it (a servlet request, a gRPC call), not one
     * Reactor put there.
     * @return the call, or null
     */
    public InboundCall outsideReactor() {
        return first(this.outsideReactor);
    }

    /**
     * The call a Reactor context carries.
     * @param context a {@code reactor.util.context.ContextView}
     * @return the call, or null
     */
    public InboundCall inContext(Object context) {
        for (CallFinder finder : this.all) {
            InboundCall call = finder.inContext(context);
            if (call != null) {
                return call;
            }
        }
        return null;
    }

    private static InboundCall first(CallFinder[] finders) {
        for (CallFinder finder : finders) {
            InboundCall call = finder.onThread();
            if (call != null) {
                return call;
            }
        }
        return null;
    }

}
