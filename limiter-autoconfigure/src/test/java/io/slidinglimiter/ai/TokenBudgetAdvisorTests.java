package io.slidinglimiter.ai;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.actuate.RateLimitersEndpoint;
import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A {@code ChatClient} over a fake {@code ChatModel} that reports known usage, with the
 * {@link TokenBudgetAdvisor} the starter makes from {@code limiter.ai.token-budget.*}: each call
 * reserves before the model is called and is settled to the response's total tokens, per user;
 * a call over its budget never reaches the model; call and stream; locally and on Redis.
 */
class TokenBudgetAdvisorTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    /** 100 tokens a minute per user, 40 reserved per call; every response uses 30 (10 in, 20 out). */
    @ParameterizedTest
    @ValueSource(strings = { "local", "redis" })
    void callsAreSettledToTheirTokensAndACallOverTheBudgetNeverReachesTheModel(String backend) {
        try (ConfigurableApplicationContext context = start(backend)) {
            ChatClient client = client(context);
            FakeChatModel model = context.getBean(FakeChatModel.class);
            for (int i = 0; i < 3; i++) {
                assertThat(ask(client, "alice")).isEqualTo("answer");
            }
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            assertThat(rateLimiters.usage("llm-tokens", "alice").used()).as("3 × 30 settled").isEqualTo(90);
            assertThatExceptionOfType(RateLimitExceededException.class).as("10 left, 40 to reserve")
                    .isThrownBy(() -> ask(client, "alice"))
                    .satisfies((denied) -> assertThat(denied.getLimitName()).isEqualTo("llm-tokens"));
            assertThat(model.calls.get()).as("the denied call never reached the model").isEqualTo(3);
            assertThat(ask(client, "bob")).as("another user's budget").isEqualTo("answer");
            assertThat(rateLimiters.usage("llm-tokens", "bob").used()).isEqualTo(30);
            RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
            Object shown = endpoint.limit("llm-tokens", "alice", null).getBody();
            assertThat(shown).asString().contains("used=90").contains("remaining=10").contains("retryAfter=0.0");
            // For the reservation's cost the endpoint tells the wait every such call is refused for.
            Object reserved = endpoint.limit("llm-tokens", "alice", "40").getBody();
            assertThat(reserved).asString().contains("cost=40").doesNotContain("retryAfter=0.0");
            assertThat(endpoint.limit("llm-tokens", "alice", "101").getStatus()).as("past the budget").isEqualTo(400);
            assertThat(endpoint.limit("llm-tokens", "alice", "many").getStatus()).isEqualTo(400);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "local", "redis" })
    void aStreamIsSettledToTheUsageOfItsLastChunk(String backend) {
        try (ConfigurableApplicationContext context = start(backend)) {
            ChatClient client = client(context);
            List<String> chunks = client.prompt("question").advisors((advisors) -> advisors.param(TokenBudgetAdvisor.KEY,
                    "carol")).stream().content().collectList().block();
            assertThat(chunks).containsExactly("an", "swer");
            assertThat(context.getBean(RateLimiters.class).usage("llm-tokens", "carol").used()).isEqualTo(30);
            assertThat(context.getBean(FakeChatModel.class).calls.get()).isEqualTo(1);
        }
    }

    @Test
    void aStreamOverTheBudgetFailsBeforeTheModelIsCalled() {
        try (ConfigurableApplicationContext context = start("local", "limiter.ai.token-budget.reserve=100")) {
            ChatClient client = client(context);
            assertThat(ask(client, "dave")).isEqualTo("answer");
            Flux<String> over = client.prompt("question")
                    .advisors((advisors) -> advisors.param(TokenBudgetAdvisor.KEY, "dave")).stream().content();
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(over::blockLast);
            assertThat(context.getBean(FakeChatModel.class).calls.get()).isEqualTo(1);
        }
    }

    @Test
    void aCallWithoutAKeyIsRefusedAndNeverReachesTheModel() {
        try (ConfigurableApplicationContext context = start("local")) {
            RateLimitExceededException refused = catchThrowable(() -> client(context).prompt("q").call().content())
                    instanceof RateLimitExceededException ex ? ex : null;
            assertThat(refused).isNotNull();
            assertThat(refused.isMissingKey()).isTrue();
            assertThat(refused.getMessage()).contains(TokenBudgetAdvisor.KEY);
            assertThat(context.getBean(FakeChatModel.class).calls.get()).isZero();
        }
    }

    @Test
    void aPlanGivesItsOwnBudget() {
        try (ConfigurableApplicationContext context = start("local", "limiter.limits.llm-tokens.plans.pro.limit=1000")) {
            ChatClient client = client(context);
            for (int i = 0; i < 5; i++) {
                client.prompt("q").advisors((advisors) -> advisors.param(TokenBudgetAdvisor.KEY, "erin")
                        .param(TokenBudgetAdvisor.PLAN, "pro")).call().content();
            }
            assertThat(context.getBean(FakeChatModel.class).calls.get()).as("150 of the pro plan's 1 000").isEqualTo(5);
        }
    }

    /**
     * SPEC §5: a call reserves one token unless told otherwise, so a budget admits calls while any of
     * it is left (with a reservation of 1 000, a user who spent 300 of 1 000 was refused).
     */
    @Test
    void byDefaultACallReservesOneTokenSoTheBudgetAdmitsWhileAnyIsLeft() {
        try (ConfigurableApplicationContext context = startWith(List.of("limiter.limits.llm-tokens.limit=1000",
                "limiter.limits.llm-tokens.window=1m", "limiter.ai.token-budget.limit=llm-tokens"))) {
            ChatClient configured = client(context);
            for (int i = 0; i < 10; i++) {
                assertThat(ask(configured, "frank")).isEqualTo("answer");
            }
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            assertThat(rateLimiters.usage("llm-tokens", "frank").used()).isEqualTo(300);
            assertThat(ask(configured, "frank")).as("700 left").isEqualTo("answer");
            ChatClient built = ChatClient.builder(context.getBean(FakeChatModel.class))
                    .defaultAdvisors(TokenBudgetAdvisor.builder(rateLimiters).limit("llm-tokens").build()).build();
            assertThat(ask(built, "frank")).as("the builder's default too, 670 left").isEqualTo("answer");
            assertThat(rateLimiters.usage("llm-tokens", "frank").used()).isEqualTo(360);
        }
    }

    @Test
    void anUndefinedBudgetOrAReservationAboveItFailsTheStartNamingTheProperty() {
        Throwable undefined = catchThrowable(() -> start("local", "limiter.ai.token-budget.limit=nope").close());
        assertThat(FailureAnalysisAccess.of(undefined).getDescription()).contains("limiter.ai.token-budget.limit")
                .contains("names 'nope', which is not under limiter.limits");
        Throwable above = catchThrowable(() -> start("local", "limiter.ai.token-budget.reserve=101").close());
        assertThat(FailureAnalysisAccess.of(above).getDescription()).contains("limiter.ai.token-budget.reserve")
                .contains("between 1 and the budget (100)");
    }

    private static String ask(ChatClient client, String user) {
        return client.prompt("question").advisors((advisors) -> advisors.param(TokenBudgetAdvisor.KEY, user)).call()
                .content();
    }

    private static ChatClient client(ConfigurableApplicationContext context) {
        return ChatClient.builder(context.getBean(FakeChatModel.class))
                .defaultAdvisors(context.getBean(TokenBudgetAdvisor.class)).build();
    }

    private static ConfigurableApplicationContext start(String backend, String... more) {
        List<String> properties = new ArrayList<>(List.of("limiter.limits.llm-tokens.limit=100",
                "limiter.limits.llm-tokens.window=1m", "limiter.ai.token-budget.limit=llm-tokens",
                "limiter.ai.token-budget.reserve=40", "spring.jmx.enabled=true",
                "management.endpoints.jmx.exposure.include=ratelimiters"));
        if (backend.equals("redis")) {
            properties.addAll(List.of(redis.limiterProperties()));
        }
        properties.addAll(List.of(more));
        return startWith(properties);
    }

    private static ConfigurableApplicationContext startWith(List<String> properties) {
        return new SpringApplicationBuilder(AiApplication.class).web(WebApplicationType.NONE)
                .properties(properties.toArray(String[]::new)).run();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class AiApplication {

        @Bean
        FakeChatModel fakeChatModel() {
            return new FakeChatModel();
        }

    }

    /** A model that answers "answer" using 10 prompt and 20 completion tokens; streamed in two chunks. */
    static class FakeChatModel implements ChatModel {

        final AtomicInteger calls = new AtomicInteger();

        @Override
        public ChatResponse call(Prompt prompt) {
            this.calls.incrementAndGet();
            return response("answer", new DefaultUsage(10, 20));
        }

        @Override
        public Flux<ChatResponse> stream(Prompt prompt) {
            return Flux.defer(() -> {
                this.calls.incrementAndGet();
                // The usage comes with the last chunk, as the providers send it.
                return Flux.just(response("an", null), response("swer", new DefaultUsage(10, 20)));
            });
        }

        private static ChatResponse response(String text, DefaultUsage usage) {
            ChatResponseMetadata.Builder metadata = ChatResponseMetadata.builder();
            if (usage != null) {
                metadata.usage(usage);
            }
            return new ChatResponse(List.of(new Generation(new AssistantMessage(text))), metadata.build());
        }

    }

}
