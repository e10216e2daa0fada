package io.slidinglimiter.call;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;

/**
 * The IETF RateLimit fields of an answer.
 * <p>
 * The {@code RateLimit-Policy} and {@code RateLimit} fields of
 * {@code draft-ietf-httpapi-ratelimit-headers-10}: one list item per limit that applied, named by
 * the limit (never by the key).
 * <pre>
 * RateLimit-Policy: "login";q=5;w=60
 * RateLimit: "login";r=0;t=12
 * </pre>
 * {@code t} is the time until the quota frees: for a denied call, the wait before the same call
 * fits (so {@code Retry-After} never points earlier); otherwise the time until the whole quota is
 * back.
 */
public final class RateLimitHeaders {

    /** The policy field's name. */
    public static final String POLICY = "RateLimit-Policy";

    /** The remaining-quota field's name. */
    public static final String RATE_LIMIT = "RateLimit";

    /** Each limit's name as a Structured Field string, made once: names are few and fixed. */
    private static final Map<String, String> ITEMS = new ConcurrentHashMap<>();

    private RateLimitHeaders() {
    }

    /**
     * The two headers' values, one list item per limit.
     * @param limits the limits that applied
     * @param decisions their decisions
     * @return {@code RateLimit-Policy}, then {@code RateLimit}
     */
    public static String[] values(List<LimitDefinition> limits, List<Decision> decisions) {
        StringBuilder policy = new StringBuilder(32 * limits.size());
        StringBuilder rateLimit = new StringBuilder(32 * limits.size());
        for (int i = 0; i < limits.size(); i++) {
            LimitDefinition limit = limits.get(i);
            Decision decision = decisions.get(i);
            String item = ITEMS.computeIfAbsent(limit.name(), RateLimitHeaders::sfString);
            String separator = (i > 0) ? ", " : "";
            policy.append(separator).append(item).append(";q=").append(decision.limit()).append(";w=")
                    .append(seconds(limit.window()));
            long untilFree = decision.allowed() ? decision.resetAfterMillis() : decision.retryAfterMillis();
            rateLimit.append(separator).append(item).append(";r=").append(decision.remaining()).append(";t=")
                    .append(ceilSeconds(untilFree));
        }
        return new String[] { policy.toString(), rateLimit.toString() };
    }

    /** Whole seconds, rounded up, never 0: for windows. */
    static long seconds(Duration duration) {
        return Math.max(1, ceilSeconds(duration.toMillis()));
    }

    private static long ceilSeconds(long millis) {
        return Math.max(0, (millis + 999) / 1000);
    }

    /** A Structured Field string: printable ASCII only, with {@code "} and {@code \} escaped. */
    private static String sfString(String value) {
        StringBuilder item = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                item.append('\\').append(c);
            }
            else {
                item.append((c >= 0x20 && c <= 0x7e) ? c : '_');
            }
        }
        return item.append('"').toString();
    }

}
