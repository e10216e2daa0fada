package io.slidinglimiter.failover;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.ModelChecking;

/**
 * Model-checked linearizability of {@link CircuitBreaker}: Lincheck explores the interleavings of
 * three threads granting calls and probes, recording failures and successes and giving probes back,
 * at clock readings from 0 to 12 ms (a threshold of 2 failures, a pause of 5 ms: every state of its
 * machine is reached), and checks every outcome against the breaker run one operation at a time. A
 * breaker of separate atomics, whose success can land between a failure's count and its opening,
 * fails it (an open breaker after a success that came last). A few seconds.
 */
@Param(name = "now", gen = IntGen.class, conf = "0:12")
public class CircuitBreakerLincheckTests {

    private final CircuitBreaker breaker = new CircuitBreaker(2, 5);

    @Operation
    public boolean allowsCall(@Param(name = "now") int nowMillis) {
        return this.breaker.allowsCall(nowMillis);
    }

    @Operation
    public void recordFailure(@Param(name = "now") int nowMillis) {
        this.breaker.recordFailure(nowMillis);
    }

    @Operation
    public void recordSuccess() {
        this.breaker.recordSuccess();
    }

    @Operation
    public void returnProbe() {
        this.breaker.returnProbe();
    }

    @Operation
    public boolean isOpen() {
        return this.breaker.isOpen();
    }

    @Operation
    public long pauseMillis(@Param(name = "now") int nowMillis) {
        return this.breaker.pauseMillis(nowMillis);
    }

    @Test
    void everyOperationIsOneAtomicStepOfTheStateMachine() {
        ModelChecking.options(500)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .check(getClass());
    }

}
