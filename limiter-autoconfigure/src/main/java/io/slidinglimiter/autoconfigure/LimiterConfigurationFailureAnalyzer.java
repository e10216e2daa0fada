package io.slidinglimiter.autoconfigure;

import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;

/**
 * Explains an {@link InvalidLimiterConfigurationException} at start-up.
 * <p>
 * Each property or method
 * that is wrong, why, and the fix.
 */
class LimiterConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLimiterConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidLimiterConfigurationException cause) {
        StringBuilder description = new StringBuilder("Sliding Limiter's configuration is invalid:\n");
        Set<String> actions = new LinkedHashSet<>();
        for (Problem problem : cause.getProblems()) {
            description.append("\n    ").append(problem.subject()).append("\n        ").append(problem.reason())
                    .append('\n');
            actions.add(problem.action());
        }
        return new FailureAnalysis(description.toString(), String.join("\n", actions), cause);
    }

}
