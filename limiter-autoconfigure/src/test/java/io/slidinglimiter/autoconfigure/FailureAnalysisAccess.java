package io.slidinglimiter.autoconfigure;

import java.util.function.Consumer;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;

import io.slidinglimiter.config.InvalidLimiterConfigurationException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lets tests in other packages run the package-private failure analyzer.
 */
public class FailureAnalysisAccess {

    public FailureAnalysis analyze(Throwable failure) {
        return new LimiterConfigurationFailureAnalyzer().analyze(failure);
    }

    /**
     * Runs a context that must fail to start for invalid limiter configuration.
     * @param runner the context, configured
     * @param description assertions on the failure analysis's description
     */
    public static void assertStartFails(AbstractApplicationContextRunner<?, ?, ?> runner, Consumer<String> description) {
        runner.run((context) -> {
            assertThat(context.getStartupFailure()).as("the start's failure").isNotNull();
            description.accept(of(context.getStartupFailure()).getDescription());
        });
    }

    /**
     * The analysis of a start that failed for invalid limiter configuration.
     * @param failure the start's failure
     * @return its analysis
     * @throws AssertionError if the failure is of another kind
     */
    public static FailureAnalysis of(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof InvalidLimiterConfigurationException) {
                return new FailureAnalysisAccess().analyze(failure);
            }
        }
        throw new AssertionError("Not an invalid configuration: " + failure, failure);
    }

    /**
     * The binding failure in a start that failed, which Spring Boot's own failure analysis reports by
     * its property.
     * @param failure the start's failure
     * @return the {@link BindException} among its causes
     * @throws AssertionError if it has none
     */
    public static BindException bindFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof BindException bind) {
                return bind;
            }
        }
        throw new AssertionError("No BindException in " + failure, failure);
    }

}
