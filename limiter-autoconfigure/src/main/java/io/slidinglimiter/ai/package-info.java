/**
 * Spring AI: {@link io.slidinglimiter.ai.TokenBudgetAdvisor}, token budgets for a
 * {@code ChatClient}.
 * <p>
 * <b>API.</b> {@code TokenBudgetAdvisor}.
 */
@NullMarked
package io.slidinglimiter.ai;

import org.jspecify.annotations.NullMarked;
