package io.slidinglimiter.autoconfigure;

import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Lets tests in other packages run the package-private failure analyzer.
 */
public class FailureAnalysisAccess {

    public FailureAnalysis analyze(Throwable failure) {
        return new LimiterConfigurationFailureAnalyzer().analyze(failure);
    }

}
