package io.slidinglimiter.ai;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisor;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisorChain;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.core.Ordered;
import org.springframework.util.Assert;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.call.ReactiveDecisions;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;

/**
 * A token budget for a {@code ChatClient}.
 * <p>
 * Each call reserves {@code reserve} tokens of a limit of
 * {@code limiter.limits} for its key (a user, a tenant) before the model is called, and is settled to
 * the total tokens the response reports once it answered, as a {@code charge} is (SPEC §3: an
 * admitted call always found its reservation free; a key's count exceeds its budget only by what
 * responses used beyond their reservations). A call the budget cannot admit never reaches the model:
 * it fails with {@link RateLimitExceededException} ({@code getRetryAfter()} says when to try again).
 * A call that fails, a stream that is cancelled, or a response without usage stays at its
 * reservation.
 * <p>
 * The key and the plan come from the advisor context (or the key from {@code limiter.ai.token-budget.key},
 * SpEL over {@code #context} and {@code #principal}: {@link Builder#key}):
 * <pre class="code">
 * chatClient.prompt(question)
 *         .advisors((advisors) -&gt; advisors.param(TokenBudgetAdvisor.KEY, user.getId())
 *                 .param(TokenBudgetAdvisor.PLAN, user.getTier()))
 *         .call().content();
 * </pre>
 * Configured by {@code limiter.ai.token-budget.*} (the starter then provides the bean), or built:
 * {@code TokenBudgetAdvisor.builder(rateLimiters).limit("llm-tokens").reserve(1000).build()}.
 */
public final class TokenBudgetAdvisor implements CallAdvisor, StreamAdvisor {

    /** The advisor parameter that holds a call's key: whose budget it spends. */
    public static final String KEY = "limiter.token-budget.key";

    /** The advisor parameter that holds a call's plan ({@code limiter.limits.<name>.plans}), if any. */
    public static final String PLAN = "limiter.token-budget.plan";

    /** Settles of streams where the backend waits for I/O: never on the thread that emits the stream. */
    private static final Executor BLOCKING = (task) -> Schedulers.boundedElastic().schedule(task);

    private final RateLimiters rateLimiters;

    /** The budget's limit, resolved once. */
    private final LimitRegistry.Handle limit;

    private final long reserve;

    private final int order;

    /** A call's key from its advisor context. */
    private final Function<Map<String, Object>, Object> key;

    /** Where the key comes from, for a call that has none. */
    private final String keySource;

    /** The request the current thread serves, told of a refusal; null outside one. */
    private final Supplier<InboundCall> currentCall;

    private TokenBudgetAdvisor(Builder builder) {
        this.rateLimiters = builder.rateLimiters;
        this.limit = builder.rateLimiters.handle(builder.limit);
        this.reserve = builder.reserve;
        this.order = builder.order;
        this.key = builder.key;
        this.keySource = builder.keySource;
        this.currentCall = builder.currentCall;
    }

    /**
     * A builder of the advisor.
     * @param rateLimiters decides and settles
     * @return the builder
     */
    public static Builder builder(RateLimiters rateLimiters) {
        return new Builder(rateLimiters);
    }

    @Override
    public String getName() {
        return "TokenBudgetAdvisor";
    }

    @Override
    public int getOrder() {
        return this.order;
    }

    @Override
    public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
        List<LimitRequest> asked = asked(request);
        Decisions taken = this.rateLimiters.tryAcquireAllToSettle(asked);
        if (!taken.allowed()) {
            RateLimitExceededException refused = RateLimitExceededException.of(asked, taken);
            // The request's stack answers 429 with the budget's headers, whatever the application's handlers write.
            InboundCall web = this.currentCall.get();
            if (web != null) {
                web.reject(refused);
            }
            throw refused;
        }
        ChatClientResponse response = chain.nextCall(request);
        long used = totalTokens(response.chatResponse());
        if (used >= 0) {
            this.rateLimiters.settle(asked, taken, new long[] { used });
        }
        return response;
    }

    @Override
    public Flux<ChatClientResponse> adviseStream(ChatClientRequest request, StreamAdvisorChain chain) {
        return Flux.defer(() -> {
            List<LimitRequest> asked = asked(request);
            return ReactiveDecisions.decide(this.rateLimiters, asked).flatMapMany((taken) -> {
                if (!taken.allowed()) {
                    return Flux.error(RateLimitExceededException.of(asked, taken));
                }
                // Providers report the usage in the last chunk, some cumulatively in each: the largest counts.
                long[] used = { -1 };
                return chain.nextStream(request)
                        .doOnNext((chunk) -> used[0] = Math.max(used[0], totalTokens(chunk.chatResponse())))
                        .concatWith(Mono.defer(() -> (used[0] < 0) ? Mono.<ChatClientResponse>empty()
                                : Mono.fromCompletionStage(this.rateLimiters.settleAsync(asked, taken,
                                        new long[] { used[0] }, BLOCKING)).then(Mono.<ChatClientResponse>empty())));
            });
        });
    }

    /** The reservation a call asks: of its key's budget, under its plan. */
    private List<LimitRequest> asked(ChatClientRequest request) {
        Object plan = request.context().get(PLAN);
        LimitDefinition definition = this.limit.definition((plan != null) ? plan.toString() : null);
        Object key = this.key.apply(request.context());
        if (key == null || key.toString().isBlank()) {
            throw RateLimitExceededException.forMissingKey(definition, this.keySource);
        }
        return List.of(new LimitRequest(definition, key.toString(), Math.min(this.reserve, definition.limit())));
    }

    /** The total tokens a response reports, or -1 when it reports none. */
    private static long totalTokens(ChatResponse response) {
        if (response == null || response.getMetadata() == null) {
            return -1;
        }
        Usage usage = response.getMetadata().getUsage();
        Integer total = (usage != null) ? usage.getTotalTokens() : null;
        return (total != null && total > 0) ? total : -1;
    }

    /** Builds a {@link TokenBudgetAdvisor}. */
    public static final class Builder {

        private final RateLimiters rateLimiters;

        private String limit;

        private long reserve = 1;

        private int order = Ordered.HIGHEST_PRECEDENCE + 1000;

        private Function<Map<String, Object>, Object> key = (context) -> context.get(KEY);

        private String keySource = "the advisor parameter " + KEY;

        private Supplier<InboundCall> currentCall = () -> null;

        private Builder(RateLimiters rateLimiters) {
            Assert.notNull(rateLimiters, "rateLimiters must not be null");
            this.rateLimiters = rateLimiters;
        }

        /**
         * The limit under {@code limiter.limits} that is the budget: tokens per window.
         * @param limit the limit's name
         * @return this builder
         */
        public Builder limit(String limit) {
            this.limit = limit;
            return this;
        }

        /**
         * The tokens reserved before each call: at least that many must be left in the key's budget.
         * A plan whose budget is smaller reserves at most its budget. By default 1.
         * @param reserve tokens, at least 1
         * @return this builder
         */
        public Builder reserve(long reserve) {
            this.reserve = reserve;
            return this;
        }

        /**
         * Where a call's key comes from: by default the advisor parameter {@link #KEY}. A call
         * whose key is null or blank is refused, never counted under a shared key.
         * <pre class="code">
         * builder.key((context) -&gt; context.get("tenant"), "the advisor parameter tenant")
         * </pre>
         * @param key the key from the call's advisor context
         * @param source where it comes from, for the refusal of a call without one
         * @return this builder
         */
        public Builder key(Function<Map<String, Object>, Object> key, String source) {
            Assert.notNull(key, "key must not be null");
            this.key = key;
            this.keySource = source;
            return this;
        }

        /**
         * Where the advisor runs among the client's advisors: by default early, so that a call over
         * its budget runs no other advisor.
         * @param order the order
         * @return this builder
         */
        public Builder order(int order) {
            this.order = order;
            return this;
        }

        /**
         * Where the advisor finds the web request a call serves, to tell it of a refusal: on WebFlux
         * the request then answers 429 with the budget's headers whatever the application's
         * exception handlers write, as for an annotated method. The starter passes the request
         * annotated methods see.
         * @param currentCall the request the current thread serves, or null outside one
         * @return this builder
         */
        public Builder currentCall(Supplier<InboundCall> currentCall) {
            this.currentCall = currentCall;
            return this;
        }

        /**
         * The advisor.
         * @return the advisor
         * @throws IllegalArgumentException when the limit is not defined or the reservation is not
         * between 1 and the limit
         */
        public TokenBudgetAdvisor build() {
            Assert.hasText(this.limit, "limit must name a limit under limiter.limits");
            LimitDefinition definition = this.rateLimiters.definition(this.limit);
            Assert.isTrue(this.reserve >= 1 && this.reserve <= definition.limit(), () -> "reserve must be between 1"
                    + " and the limit of '" + this.limit + "' (" + definition.limit() + "), but was " + this.reserve);
            return new TokenBudgetAdvisor(this);
        }

    }

}
