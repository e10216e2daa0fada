package io.slidinglimiter.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * The container of repeated {@link RateLimited} annotations; written by the compiler when
 * {@code @RateLimited} is repeated.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective
public @interface RateLimits {

    /**
     * The limits, all of which must admit the call.
     * @return the limits
     */
    RateLimited[] value();

}
