package io.slidinglimiter.sample;

import org.springframework.stereotype.Component;

/**
 * The plan each API key is on, as a real application would read it from its customers: here,
 * keys that start with {@code pro-} are on the pro plan. {@code limiter.limits.api-key.plan}
 * calls it as {@code @apiKeys.planOf(#apiKey)}.
 */
@Component("apiKeys")
public class ApiKeys {

    /**
     * The plan of an API key.
     * @param apiKey the key, or null
     * @return {@code "pro"}, or null for the limit's own quota
     */
    public String planOf(String apiKey) {
        return (apiKey != null && apiKey.startsWith("pro-")) ? "pro" : null;
    }

}
