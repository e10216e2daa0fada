package io.slidinglimiter.autoconfigure;

import org.springframework.boot.diagnostics.FailureAnalysis;

import io.slidinglimiter.config.InvalidLimiterConfigurationException;

/**
 * Lets tests in other packages run the package-private failure analyzer.
 */
public class FailureAnalysisAccess {

    public FailureAnalysis analyze(Throwable failure) {
        return new LimiterConfigurationFailureAnalyzer().analyze(failure);
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

}
