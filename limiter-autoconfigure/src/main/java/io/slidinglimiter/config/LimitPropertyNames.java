package io.slidinglimiter.config;

import java.util.regex.Pattern;

/**
 * The property under which a limit is configured, written so that it binds when copied: the dotted
 * form for plain names ({@code limiter.limits.login}), the bracket form for names that hold dots,
 * capitals or other characters Spring Boot would drop ({@code limiter.limits[Orders.place]}).
 */
public final class LimitPropertyNames {

    private static final Pattern PLAIN = Pattern.compile("[a-z0-9][a-z0-9-]*");

    private LimitPropertyNames() {
    }

    /**
     * The property prefix of a limit.
     * @param limitName the limit's name
     * @return {@code limiter.limits.<name>} or {@code limiter.limits[<name>]}
     */
    public static String of(String limitName) {
        return PLAIN.matcher(limitName).matches() ? "limiter.limits." + limitName
                : "limiter.limits[" + limitName + "]";
    }

}
