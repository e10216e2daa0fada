package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;

import io.slidinglimiter.actuate.LimitChanges;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;

/**
 * Applies {@code limiter.limits} anew when Spring Cloud says the {@code Environment} changed
 * ({@link EnvironmentChangeEvent}, what {@code /actuator/refresh} publishes), by the rules of
 * run-time changes.
 * <p>
 * New permits per window apply at once and keep the counts; another window,
 * number of sub-windows or algorithm starts fresh counters; a new limit can be used by name (by
 * {@code RateLimiters}, the gateway, annotations that name it); shadow mode follows. A limit whose
 * new values are invalid keeps its old ones, and the error names the property. What is fixed when
 * the application starts (a limit's backend and failure policy, its charge, plan expression and
 * lease, URL rules, removing a limit) is left as it is, with a warning; its plans' quotas change live.
 */
final class LiveLimitChanges implements ApplicationListener<EnvironmentChangeEvent> {

    private static final Log logger = LogFactory.getLog(LiveLimitChanges.class);

    private static final String PREFIX = "limiter.limits";

    private final Environment environment;

    private final LimitRegistry registry;

    private final LimitChanges changes;

    private final boolean redisPresent;

    LiveLimitChanges(Environment environment, LimitRegistry registry, LimitChanges changes, boolean redisPresent) {
        this.environment = environment;
        this.registry = registry;
        this.changes = changes;
        this.redisPresent = redisPresent;
    }

    @Override
    public void onApplicationEvent(EnvironmentChangeEvent event) {
        if (event.getKeys().stream().noneMatch((key) -> key.startsWith(PREFIX))) {
            return;
        }
        // The whole of limiter.*, so that what a limit leaves unset takes the same defaults as at start.
        LimiterProperties properties = Binder.get(this.environment).bind("limiter", LimiterProperties.class)
                .orElseGet(LimiterProperties::new);
        Map<String, LimiterProperties.Limit> limits = properties.getLimits();
        int defaultSubWindows = properties.getDefaultSubWindows();
        String defaultBackend = properties.getBackend();
        limits.forEach((name, limit) -> apply(name, limit, defaultSubWindows, defaultBackend));
        if (event.getKeys().stream().anyMatch((key) -> key.endsWith(".backend") || key.endsWith(".on-failure")
                || key.endsWith(".charge") || key.endsWith(".plan") || key.endsWith(".lease"))) {
            logger.warn("A limit's backend, failure policy, charge, plan expression or lease changed in the"
                    + " Environment:"
                    + " those apply from"
                    + " the next start. Changed: " + event.getKeys().stream().filter((key) -> key.startsWith(PREFIX))
                            .sorted().toList());
        }
    }

    private void apply(String name, LimiterProperties.Limit limit, int defaultSubWindows,
            String defaultBackend) {
        List<Problem> problems = new ArrayList<>();
        LimitDefinition definition = ConfiguredLimits.definition(name, limit, defaultSubWindows, this.redisPresent,
                defaultBackend, problems);
        Map<String, Long> plans = ConfiguredLimits.plans(name, limit, defaultBackend, problems);
        if (definition == null || plans == null) {
            problems.forEach((problem) -> logger.error("The new value of " + problem.subject() + " " + problem.reason()
                    + ": limit '" + name + "' keeps its values. " + problem.action()));
            return;
        }
        Optional<LimitDefinition> current = this.registry.find(name);
        if (current.isEmpty()) {
            this.registry.register(definition);
            logger.info("Limit '" + name + "' added: " + definition.limit() + " per " + definition.window());
        }
        else if (!sameShape(current.get(), definition)) {
            this.registry.redefine(definition);
            this.changes.reconfigure(name, definition.limit());
            logger.info("Limit '" + name + "' now counts " + definition.limit() + " per " + definition.window()
                    + " in " + definition.subWindows() + " sub-windows: its keys start afresh");
        }
        else if (this.changes.configuredLimit(name) != definition.limit()) {
            this.changes.reconfigure(name, definition.limit());
            logger.info("Limit '" + name + "' now admits " + definition.limit() + " per window; counts kept");
        }
        this.registry.setShadow(name, limit.isShadow());
        if (!plans.equals(this.registry.handle(name).plans())) {
            this.registry.setPlans(name, plans);
            logger.info("Limit '" + name + "' now has plans " + plans + "; counts kept");
        }
    }

    private static boolean sameShape(LimitDefinition current, LimitDefinition changed) {
        return current.window().equals(changed.window()) && current.subWindows() == changed.subWindows()
                && current.algorithm() == changed.algorithm();
    }

}
