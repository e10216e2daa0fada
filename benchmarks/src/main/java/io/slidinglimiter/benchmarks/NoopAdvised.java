package io.slidinglimiter.benchmarks;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method that a do-nothing Spring advice intercepts: the cost of Spring AOP alone, the
 * floor under any annotation that works through a Spring proxy.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface NoopAdvised {
}
