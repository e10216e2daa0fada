package io.slidinglimiter.autoconfigure;

import java.util.function.Supplier;

import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.ai.TokenBudgetAdvisor;
import io.slidinglimiter.ai.TokenBudgetKey;
import io.slidinglimiter.aop.RateLimitedAdvisor;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.expression.InvalidExpressionException;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * Spring AI: the {@link TokenBudgetAdvisor} bean, when {@code limiter.ai.token-budget.limit} names
 * the limit that is the budget. Add it to a {@code ChatClient} with
 * {@code builder.defaultAdvisors(tokenBudgetAdvisor)}.
 */
@AutoConfiguration(after = { LimiterAutoConfiguration.class, LimiterAopAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass(CallAdvisor.class)
@ConditionalOnBean(RateLimiters.class)
@ConditionalOnProperty("limiter.ai.token-budget.limit")
public class LimiterAiAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    TokenBudgetAdvisor tokenBudgetAdvisor(RateLimiters rateLimiters, LimiterProperties properties,
            ObjectProvider<LimiterExpressionParser> limiterExpressionParser,
            ObjectProvider<RateLimitedAdvisor> rateLimitedAdvisor) {
        LimiterProperties.TokenBudget budget = properties.getAi().getTokenBudget();
        if (!ConfiguredLimits.isDefined(rateLimiters, budget.getLimit())) {
            throw new InvalidLimiterConfigurationException("limiter.ai.token-budget.limit", "names '"
                    + budget.getLimit() + "', which is not under limiter.limits", "Define limiter.limits."
                            + budget.getLimit() + " (limit: tokens per window, and window), or name a defined limit.");
        }
        long limit = rateLimiters.definition(budget.getLimit()).limit();
        if (budget.getReserve() < 1 || budget.getReserve() > limit) {
            throw new InvalidLimiterConfigurationException("limiter.ai.token-budget.reserve", "is "
                    + budget.getReserve() + ", but a call must reserve between 1 and the budget (" + limit + ")",
                    "Set limiter.ai.token-budget.reserve between 1 and " + limit + ": about the tokens a call uses.");
        }
        Supplier<InboundCall> currentCall = new CurrentCall(rateLimitedAdvisor);
        TokenBudgetAdvisor.Builder advisor = TokenBudgetAdvisor.builder(rateLimiters).limit(budget.getLimit())
                .reserve(budget.getReserve()).currentCall(currentCall);
        if (budget.getKey() != null) {
            TokenBudgetKey key = key(budget.getKey(), limiterExpressionParser.getObject(), currentCall);
            advisor.key(key, "limiter.ai.token-budget.key (" + key.source() + ")");
        }
        return advisor.build();
    }

    private static TokenBudgetKey key(String source, LimiterExpressionParser parser,
            Supplier<InboundCall> currentCall) {
        try {
            return new TokenBudgetKey(parser, parser.parse(source, TokenBudgetKey.VARIABLES), currentCall);
        }
        catch (InvalidExpressionException ex) {
            throw new InvalidLimiterConfigurationException("limiter.ai.token-budget.key", ex.getMessage(),
                    "Write the key over #context (the advisor context) and #principal, for example"
                            + " \"#principal?.name\" or \"#context['tenant']\".");
        }
    }

}
