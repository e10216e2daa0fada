package io.slidinglimiter.web;

import java.util.List;
import java.util.function.Predicate;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.call.AppliedLimits;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.call.RateLimitHeaders;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * What the limiter knows of the current request.
 * <p>
 * Its request and principal for expressions, and
 * the decisions taken so far (URL rules, then annotations) for the RateLimit headers. Created by
 * {@link RateLimitFilter} for each request.
 */
public final class HttpRateLimitContext implements InboundCall {

    static final String ATTRIBUTE = HttpRateLimitContext.class.getName();

    /** The context carried to another thread by {@link HttpRateLimitContextAccessor}. */
    static final ThreadLocal<HttpRateLimitContext> CARRIED = new ThreadLocal<>();

    private final HttpServletRequest request;

    private final HttpServletResponse response;

    private final boolean headersOnAllowed;

    private final AppliedLimits applied;

    /** The container's thread in a dispatch of the filter's for this request now; null between dispatches. */
    private volatile Thread serving;

    /** Whether decisions taken on another thread wait for the container's thread to write their headers. */
    private volatile boolean headersPending;

    HttpRateLimitContext(HttpServletRequest request, HttpServletResponse response, boolean headersOnAllowed,
            Predicate<String> shadow) {
        this.request = request;
        this.response = response;
        this.headersOnAllowed = headersOnAllowed;
        this.applied = new AppliedLimits(shadow);
    }

    /**
     * The context of the request the current thread serves.
     * @return the context, or null outside a request
     */
    public static HttpRateLimitContext current() {
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (!(attributes instanceof ServletRequestAttributes servlet)) {
            return CARRIED.get();
        }
        HttpRateLimitContext filtered = filtered(servlet);
        // Without the filter, expressions still see the request; no headers are written.
        return (filtered != null) ? filtered : new HttpRateLimitContext(servlet.getRequest(), null, false,
                (limit) -> true);
    }

    /**
     * The context the filter made for the request the current thread serves.
     * @return the context, or null outside a request or without the filter
     */
    static HttpRateLimitContext filtered() {
        return (RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet)
                ? filtered(servlet) : null;
    }

    private static HttpRateLimitContext filtered(ServletRequestAttributes servlet) {
        return (servlet.getRequest().getAttribute(ATTRIBUTE) instanceof HttpRateLimitContext context) ? context : null;
    }

    @Override
    public HttpServletRequest request() {
        return this.request;
    }

    @Override
    public Object principal() {
        return this.request.getUserPrincipal();
    }

    @Override
    public String clientAddress() {
        return this.request.getRemoteAddr();
    }

    /**
     * Records decisions taken for this request and, when headers are on, updates the RateLimit
     * headers with every limit that applied so far.
     * @param requests the limits asked
     * @param decisions their decisions
     */
    @Override
    public void record(List<LimitRequest> requests, Decisions decisions) {
        this.applied.record(requests, decisions);
        if (this.headersOnAllowed && decisions.allowed()) {
            if (Thread.currentThread() == this.serving) {
                writeHeaders(this.response);
            }
            else {
                // Decided after a thread hop (an @Async method, a Mono, a coroutine) while the container's
                // thread may be writing the response itself: a servlet response is not safe to share
                // (Tomcat's headers were corrupted, and the client sent its request again). The filter
                // writes them on the container's thread, at the asynchronous dispatch.
                this.headersPending = true;
            }
        }
    }

    /**
     * Notes the container's thread serving a dispatch of the filter's for this request, or its end.
     * @param thread the thread, or null once the dispatch ended
     */
    void servedBy(Thread thread) {
        this.serving = thread;
    }

    /**
     * Writes the headers of decisions taken on other threads since the last write, on the
     * container's thread.
     * @param current the response of the current dispatch
     */
    void writePendingHeaders(HttpServletResponse current) {
        if (this.headersPending) {
            this.headersPending = false;
            writeHeaders(current);
        }
    }

    /** Notes a denial that may have been decided on another thread, for its 429's headers. */
    void recordDenial(RateLimitExceededException denied) {
        this.applied.recordDenial(denied);
    }

    /**
     * Writes the RateLimit headers of every limit that applied, whatever the setting (for 429s), on a
     * dispatch's response.
     * @param target the response of the current dispatch, on the container's thread
     */
    void writeHeaders(HttpServletResponse target) {
        if (target == null || target.isCommitted()) {
            return;
        }
        String[] values = this.applied.headerValues();
        if (values != null) {
            target.setHeader(RateLimitHeaders.POLICY, values[0]);
            target.setHeader(RateLimitHeaders.RATE_LIMIT, values[1]);
        }
    }

    boolean isFiltered() {
        return this.response != null;
    }

}
