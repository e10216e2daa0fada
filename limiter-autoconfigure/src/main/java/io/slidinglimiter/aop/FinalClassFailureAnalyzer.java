package io.slidinglimiter.aop;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.aop.framework.AopConfigException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.util.ClassUtils;

/**
 * Explains why a bean whose class carries {@code @RateLimited} could not be proxied because the
 * class is final (Spring's own failure is CGLIB's "Cannot subclass final class"), in Kotlin's words
 * for a Kotlin class. Other proxy failures are left to Spring's own analysis.
 */
class FinalClassFailureAnalyzer extends AbstractFailureAnalyzer<AopConfigException> {

    private static final Pattern SUBCLASS_OF = Pattern.compile("subclass of class ([\\w.$]+)");

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, AopConfigException cause) {
        Class<?> type = finalClassOf(cause);
        if (type == null || !FinalClasses.isRateLimited(type)) {
            return null;
        }
        String language = FinalClasses.isKotlin(type) ? "Kotlin class" : "class";
        return new FailureAnalysis("@RateLimited on " + type.getName() + ", a final " + language + ": the"
                + " rate-limiting proxy is a subclass, so Spring could not create it and the bean could not start.",
                FinalClasses.fix(type, null), cause);
    }

    /** The final class CGLIB could not subclass, from the failure's message; null for another failure. */
    private static Class<?> finalClassOf(AopConfigException cause) {
        Matcher matcher = SUBCLASS_OF.matcher(String.valueOf(cause.getMessage()));
        if (!matcher.find()) {
            return null;
        }
        try {
            Class<?> type = ClassUtils.forName(matcher.group(1), FinalClassFailureAnalyzer.class.getClassLoader());
            return java.lang.reflect.Modifier.isFinal(type.getModifiers()) ? type : null;
        }
        catch (ClassNotFoundException | LinkageError ex) {
            return null;
        }
    }

}
