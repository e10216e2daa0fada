package io.slidinglimiter.test;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;

import io.slidinglimiter.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What the two test classes that share a cached context each run: every test method uses the
 * whole limit, and finds it whole, whatever ran before it in this class or the other.
 */
@SpringBootTest(classes = LimitedApplication.class)
@ResetRateLimits
abstract class SharingTests {

    @Autowired
    private LimitedApplication.Greeter greeter;

    @Autowired
    private ApplicationContext context;

    @BeforeEach
    void theContextIsShared() {
        LimitedApplication.FIRST_CONTEXT.compareAndSet(null, this.context);
        assertThat(this.context).isSameAs(LimitedApplication.FIRST_CONTEXT.get());
    }

    @RepeatedTest(3)
    void eachTestFindsTheWholeLimit() {
        assertThat(this.greeter.greet()).isEqualTo("hello");
        assertThat(this.greeter.greet()).isEqualTo("hello");
        assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.greeter::greet);
    }

}
