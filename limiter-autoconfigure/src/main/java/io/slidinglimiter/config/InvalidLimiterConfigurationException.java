package io.slidinglimiter.config;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Configuration that cannot work: a bad property, or a {@code @RateLimited} that refers to
 * something that does not exist. Fails the start with a failure analysis listing each
 * {@link Problem}.
 */
public class InvalidLimiterConfigurationException extends RuntimeException {

    private final List<Problem> problems;

    /**
     * Creates an exception for one problem.
     * @param subject what is wrong: a property name or an annotated method
     * @param reason why
     * @param action how to fix it
     */
    public InvalidLimiterConfigurationException(String subject, String reason, String action) {
        this(List.of(new Problem(subject, reason, action)));
    }

    /**
     * Creates an exception for several problems.
     * @param problems the problems, at least one
     */
    public InvalidLimiterConfigurationException(List<Problem> problems) {
        super(problems.stream().map(Problem::toString).collect(Collectors.joining("\n")));
        this.problems = List.copyOf(problems);
    }

    /** @return each problem found */
    public List<Problem> getProblems() {
        return this.problems;
    }

    /**
     * One thing wrong.
     *
     * @param subject what is wrong: a property name or an annotated method
     * @param reason why
     * @param action how to fix it
     */
    public record Problem(String subject, String reason, String action) {

        @Override
        public String toString() {
            return this.subject + ": " + this.reason;
        }

    }

}
