package io.slidinglimiter.testsupport;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;

/**
 * Lincheck's model checking as this build runs it.
 * <p>
 * 30 iterations of a given number of
 * interleavings each, both raised or lowered for one run by {@code -Dlimiter.lincheck.iterations}
 * and {@code -Dlimiter.lincheck.invocations}.
 */
public final class ModelChecking {

    private ModelChecking() {
    }

    /**
     * Options with the build's iterations and a test's own interleavings per iteration, to which the
     * test adds its threads and actors.
     * @param invocationsPerIteration the interleavings explored per iteration, unless overridden
     * @return the options
     */
    public static ModelCheckingOptions options(int invocationsPerIteration) {
        return new ModelCheckingOptions()
                .iterations(Integer.getInteger("limiter.lincheck.iterations", 30))
                .invocationsPerIteration(Integer.getInteger("limiter.lincheck.invocations", invocationsPerIteration));
    }

}
