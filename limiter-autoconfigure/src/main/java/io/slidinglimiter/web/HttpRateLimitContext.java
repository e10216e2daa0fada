package io.slidinglimiter.web;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;

/**
 * What the limiter knows of the current request: its request and principal for expressions, and
 * the decisions taken so far (URL rules, then annotations) for the RateLimit headers. Created by
 * {@link RateLimitFilter} for each request.
 */
public final class HttpRateLimitContext {

    static final String ATTRIBUTE = HttpRateLimitContext.class.getName();

    private final HttpServletRequest request;

    private final HttpServletResponse response;

    private final boolean headersOnAllowed;

    private final List<LimitDefinition> limits = new ArrayList<>(2);

    private final List<Decision> decisions = new ArrayList<>(2);

    HttpRateLimitContext(HttpServletRequest request, HttpServletResponse response, boolean headersOnAllowed) {
        this.request = request;
        this.response = response;
        this.headersOnAllowed = headersOnAllowed;
    }

    /**
     * The context of the request the current thread serves.
     * @return the context, or null outside a request
     */
    public static HttpRateLimitContext current() {
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (!(attributes instanceof ServletRequestAttributes servlet)) {
            return null;
        }
        Object context = servlet.getRequest().getAttribute(ATTRIBUTE);
        if (context instanceof HttpRateLimitContext filtered) {
            return filtered;
        }
        // The filter is not installed: expressions still see the request; no headers are written.
        return new HttpRateLimitContext(servlet.getRequest(), null, false);
    }

    /** @return the current request */
    public HttpServletRequest request() {
        return this.request;
    }

    /** @return the authenticated principal, or null */
    public Object principal() {
        return this.request.getUserPrincipal();
    }

    /**
     * Records decisions taken for this request and, when headers are on, updates the RateLimit
     * headers with every limit that applied so far.
     * @param requests the limits asked
     * @param decisions their decisions
     */
    public void record(List<LimitRequest> requests, Decisions decisions) {
        for (int i = 0; i < requests.size(); i++) {
            LimitDefinition limit = requests.get(i).limit();
            int existing = indexOf(limit.name());
            if (existing >= 0) {
                this.limits.set(existing, limit);
                this.decisions.set(existing, decisions.get(i));
            }
            else {
                this.limits.add(limit);
                this.decisions.add(decisions.get(i));
            }
        }
        if (this.headersOnAllowed && decisions.allowed()) {
            writeHeaders();
        }
    }

    /** Writes the RateLimit headers of every limit that applied, whatever the setting: for 429s. */
    void writeHeaders() {
        if (this.response != null && !this.limits.isEmpty() && !this.response.isCommitted()) {
            RateLimitHeaders.write(this.response, this.limits, this.decisions);
        }
    }

    boolean isFiltered() {
        return this.response != null;
    }

    private int indexOf(String name) {
        for (int i = 0; i < this.limits.size(); i++) {
            if (this.limits.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

}
