package io.slidinglimiter.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when the global backend or any limit's is the one a subclass names. */
abstract class UsesBackendCondition extends SpringBootCondition {

    private final String backend;

    UsesBackendCondition(String backend) {
        this.backend = backend;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Binder binder = Binder.get(context.getEnvironment());
        if (this.backend.equals(Backends.normalized(binder.bind("limiter.backend", String.class).orElse(null)))) {
            return ConditionOutcome.match("limiter.backend is " + this.backend);
        }
        Map<String, LimiterProperties.Limit> limits = binder
                .bind("limiter.limits", Bindable.mapOf(String.class, LimiterProperties.Limit.class))
                .orElse(Map.of());
        for (Map.Entry<String, LimiterProperties.Limit> limit : limits.entrySet()) {
            if (this.backend.equals(limit.getValue().getBackend())) {
                return ConditionOutcome.match("limit " + limit.getKey() + " uses " + this.backend);
            }
        }
        return ConditionOutcome.noMatch("no limit uses " + this.backend);
    }

}
