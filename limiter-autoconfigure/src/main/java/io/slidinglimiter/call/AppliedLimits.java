package io.slidinglimiter.call;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;

/**
 * The limits that applied to one request so far, each with its latest decision, for the RateLimit
 * headers; limits in shadow mode are left out. A reactive request may record from several threads,
 * one after the other; a gRPC call may too.
 */
public final class AppliedLimits {

    private final Predicate<String> shadow;

    /**
     * @param shadow whether a limit, by name, is in shadow mode
     */
    public AppliedLimits(Predicate<String> shadow) {
        this.shadow = shadow;
    }

    private final List<LimitDefinition> limits = new ArrayList<>(2);

    private final List<Decision> decisions = new ArrayList<>(2);

    /**
     * Records decisions, each replacing an earlier one of its limit.
     * @param requests the limits asked
     * @param decided their decisions
     */
    public synchronized void record(List<LimitRequest> requests, Decisions decided) {
        for (int i = 0; i < requests.size(); i++) {
            LimitDefinition limit = requests.get(i).limit();
            if (this.shadow.test(limit.name())) {
                continue;
            }
            int existing = indexOf(limit.name());
            if (existing >= 0) {
                this.limits.set(existing, limit);
                this.decisions.set(existing, decided.get(i));
            }
            else {
                this.limits.add(limit);
                this.decisions.add(decided.get(i));
            }
        }
    }

    /**
     * Records a denial by what its exception tells (the limit, its window, when it frees), unless its
     * limit's decision was recorded already: a call decided on another thread (an {@code @Async}
     * method, a coroutine after a thread hop, a token budget) still answers with its limit's headers.
     * A missing key, which no limit decided, records nothing.
     * @param denied the denial
     */
    public synchronized void recordDenial(RateLimitExceededException denied) {
        String name = denied.getLimitName();
        if (denied.isMissingKey() || name == null || this.shadow.test(name) || indexOf(name) >= 0
                || denied.getWindow() == null || denied.getWindow().toMillis() <= 0 || denied.getLimit() <= 0) {
            return;
        }
        long retryAfterMillis = denied.getRetryAfter().toMillis();
        this.limits.add(new LimitDefinition(name, denied.getLimit(), denied.getWindow(), 1,
                Algorithm.SLIDING_WINDOW_COUNTER));
        this.decisions.add(new Decision(false, denied.getLimit(), 0, retryAfterMillis, retryAfterMillis));
    }

    /** @return {@code RateLimit-Policy} then {@code RateLimit}, or null when no limit applied */
    public synchronized String[] headerValues() {
        return this.limits.isEmpty() ? null : RateLimitHeaders.values(this.limits, this.decisions);
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
