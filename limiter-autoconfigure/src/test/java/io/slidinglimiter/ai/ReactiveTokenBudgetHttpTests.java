package io.slidinglimiter.ai;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.web.reactive.ReactiveHttp;
import io.slidinglimiter.web.reactive.ReactiveTestApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A token budget's refusal on WebFlux, over real HTTP: each signed-in user spends their own budget
 * (the key {@code #principal?.name}, seen where Reactor propagates its context), and the refusal is
 * a 429 with the budget's own {@code RateLimit-Policy} and {@code RateLimit}, as on Spring MVC.
 */
@SpringBootTest(classes = { ReactiveTestApplication.class, ReactiveTokenBudgetHttpTests.Assistant.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=reactive", "spring.reactor.context-propagation=auto",
                "limiter.limits.llm-tokens.limit=100", "limiter.limits.llm-tokens.window=1m",
                "limiter.ai.token-budget.limit=llm-tokens", "limiter.ai.token-budget.reserve=40",
                "limiter.ai.token-budget.key=#principal?.name" })
class ReactiveTokenBudgetHttpTests {

    @LocalServerPort
    private int port;

    @Autowired
    private Assistant assistant;

    private WebTestClient client;

    @BeforeEach
    void bindToTheRunningServer() {
        this.client = ReactiveHttp.client(this.port);
    }

    /** 100 tokens a minute, 40 reserved, 30 used per call: three calls each, the fourth refused. */
    @Test
    void eachSignedInUserSpendsTheirOwnBudgetAndTheRefusalCarriesItsHeaders() {
        for (int i = 0; i < 3; i++) {
            ask("alice").expectStatus().isOk().expectBody(String.class).isEqualTo("answer");
        }
        ask("alice").expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("RateLimit-Policy", "\"llm-tokens\";q=100;w=60")
                .expectHeader().value("RateLimit", (value) -> assertThat(value).startsWith("\"llm-tokens\";r=0;t="))
                .expectHeader().exists("Retry-After");
        ask("bob").expectStatus().isOk();
        assertThat(this.assistant.model.calls.get()).as("the refused call never reached the model").isEqualTo(4);
    }

    private WebTestClient.ResponseSpec ask(String user) {
        return this.client.get().uri("/ask").headers((headers) -> headers.setBasicAuth(user, "pw")).exchange();
    }

    /** A controller that asks a fake model through the budget. */
    @RestController
    static class Assistant {

        final TokenBudgetAdvisorTests.FakeChatModel model = new TokenBudgetAdvisorTests.FakeChatModel();

        private final ChatClient client;

        Assistant(TokenBudgetAdvisor budget) {
            this.client = ChatClient.builder(this.model).defaultAdvisors(budget).build();
        }

        @GetMapping("/ask")
        String ask() {
            return this.client.prompt("question").call().content();
        }

    }

}
