package io.slidinglimiter.ai;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.web.OpenSecurity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code limiter.ai.token-budget.key} keyed by {@code #principal} (SPEC §5), over real HTTP with
 * Spring Security: each signed-in user spends a budget of their own, without any call site naming
 * a key, and an anonymous call, which has none, is refused before the model.
 */
class TokenBudgetKeyHttpTests {

    private final HttpClient http = HttpClient.newHttpClient();

    /** 100 tokens a minute, 40 reserved, 30 used per call: three calls each, the fourth refused. */
    @Test
    void eachSignedInUserSpendsTheirOwnBudget() throws Exception {
        try (ConfigurableApplicationContext app = start("limiter.ai.token-budget.key=#principal?.name")) {
            List<Integer> alice = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                alice.add(ask(app, "alice").statusCode());
            }
            assertThat(alice).containsExactly(200, 200, 200, 429);
            HttpResponse<String> refused = ask(app, "alice");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("RateLimit-Policy")).as("the budget's own headers")
                    .hasValue("\"llm-tokens\";q=100;w=60");
            assertThat(refused.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"llm-tokens\";r=0;t=");
            HttpResponse<String> bob = ask(app, "bob");
            assertThat(bob.statusCode()).as("another user's budget").isEqualTo(200);
            assertThat(bob.body()).isEqualTo("answer");
            assertThat(ask(app, null).statusCode()).as("anonymous: no key").isEqualTo(400);
            assertThat(app.getBean(TokenBudgetAdvisorTests.FakeChatModel.class).calls.get()).isEqualTo(4);
        }
    }

    @Test
    void aKeyThatIsNotValidSpelFailsTheStartNamingTheProperty() {
        Throwable failure = catchThrowable(() -> start("limiter.ai.token-budget.key=#principal.(").close());
        assertThat(FailureAnalysisAccess.of(failure).getDescription()).contains("limiter.ai.token-budget.key");
        Throwable unknown = catchThrowable(() -> start("limiter.ai.token-budget.key=#user").close());
        assertThat(FailureAnalysisAccess.of(unknown).getDescription()).contains("limiter.ai.token-budget.key")
                .contains("#user");
    }

    private HttpResponse<String> ask(ConfigurableApplicationContext app, String user) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:"
                + ((WebServerApplicationContext) app).getWebServer().getPort() + "/ask"));
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8)));
        }
        return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static ConfigurableApplicationContext start(String key) {
        return new SpringApplicationBuilder(SignedInApplication.class)
                .properties("server.port=0", "limiter.limits.llm-tokens.limit=100", "limiter.limits.llm-tokens.window=1m",
                        "limiter.ai.token-budget.limit=llm-tokens", "limiter.ai.token-budget.reserve=40", key)
                .run();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, SignedInApplication.Assistant.class })
    static class SignedInApplication {

        @Bean
        TokenBudgetAdvisorTests.FakeChatModel fakeChatModel() {
            return new TokenBudgetAdvisorTests.FakeChatModel();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}secret").build(),
                    User.withUsername("bob").password("{noop}secret").build());
        }

        @RestController
        static class Assistant {

            private final ChatClient client;

            Assistant(TokenBudgetAdvisorTests.FakeChatModel model, TokenBudgetAdvisor budget) {
                this.client = ChatClient.builder(model).defaultAdvisors(budget).build();
            }

            @GetMapping("/ask")
            String ask() {
                return this.client.prompt("question").call().content();
            }

        }

    }

}
