package io.slidinglimiter.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * Rate-limits a method, or each public method of a type. Repeat it to apply several limits: all
 * of them must admit the call, and a call rejected by one consumes from none.
 * <pre>{@code
 * @RateLimited(name = "login", key = "#username")                  // limiter.limits.login in application.yml
 * @RateLimited(limit = 100, window = "1m", key = "#request.remoteAddr")   // inline
 * public Token login(String username, String password) { ... }
 * }</pre>
 * A denied call throws {@link io.slidinglimiter.RateLimitExceededException}; in a web request the
 * library's filter turns it into 429 Too Many Requests. An annotation on a method replaces those on
 * its type.
 * <p>
 * Expressions ({@code key}, {@code cost}, {@code condition}) are SpEL, parsed once and checked when
 * the application starts. They see the method's parameters by name ({@code #userId}, also
 * {@code #p0}/{@code #a0}), {@code #request} (the current {@code HttpServletRequest}, null outside a
 * request), {@code #principal} (the authenticated principal, or null), {@code #method},
 * {@code #args} and beans ({@code @beanName}).
 * <p>
 * {@link Reflective @Reflective}: Spring's ahead-of-time processing registers every annotated method
 * for the reflective call its proxy makes, as it does for Spring Framework's own resilience
 * annotations.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimits.class)
@Reflective
public @interface RateLimited {

    /**
     * Alias for {@link #name()}; set one or the other.
     * @return the limit's name
     */
    String value() default "";

    /**
     * The limit's name. When {@code limiter.limits.<name>} is configured, it overrides the inline
     * attributes. Empty: {@code SimpleClassName.method}. Limits of the same name share counters.
     * @return the limit's name
     */
    String name() default "";

    /**
     * SpEL for the counter key, for example {@code #userId} or {@code #request.remoteAddr}. Empty:
     * one counter shared by all calls.
     * @return the key expression
     */
    String key() default "";

    /**
     * Permits per window, for an inline definition; {@code -1} when the limit is configured.
     * @return the permits per window
     */
    long limit() default -1;

    /**
     * The window length, in Spring Boot's duration syntax ({@code 1s}, {@code 500ms}, {@code 1m},
     * {@code PT1H}), for an inline definition.
     * @return the window length
     */
    String window() default "";

    /**
     * The number of sub-windows; {@code -1} for {@code limiter.default-sub-windows} (10).
     * @return the number of sub-windows
     */
    int subWindows() default -1;

    /**
     * The permits this call takes: a number or SpEL, for example {@code #items.size()}.
     * @return the cost
     */
    String cost() default "1";

    /**
     * SpEL; the limit applies only when it is true. Empty: always.
     * @return the condition
     */
    String condition() default "";

    /**
     * SpEL naming the caller's plan, which chooses the quota the call is compared with:
     * {@code limiter.limits.<name>.plans.<plan>.limit}, for example
     * {@code "@customers.planOf(#principal)"}. The counter stays the limit's own, so a caller who
     * changes plan keeps its count. Null, blank or a plan the limit does not have: the limit's own
     * quota. {@code limiter.limits.<name>.plan} wins. Empty: every call has the limit's own quota.
     * @return the plan expression
     */
    String plan() default "";

    /**
     * SpEL evaluated when the call ends: the permits it finally consumes. The call is admitted
     * against {@link #cost()}, then settled to this: permits beyond it are given back, and a charge
     * above the cost is counted whether or not it fits (the key may pass its limit; later calls
     * wait). It sees {@code #result} (the return value; for a {@code Mono} the value it emitted) and
     * {@code #exception} (what the method threw, else null) besides the call's variables, for example
     * {@code "#exception != null ? 1 : 0"} to count failed attempts only, or
     * {@code "#result.usage().totalTokens()"}. {@code limiter.limits.<name>.charge} wins. Empty: the
     * call costs {@link #cost()}.
     * @return the charge expression
     */
    String charge() default "";

}
