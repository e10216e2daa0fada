package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Client addresses and forwarded headers, over real HTTP (SPEC §5): under
 * {@code server.forward-headers-strategy: framework} any client names its own address, and the
 * application says so once at start; under {@code native} with the proxies named, a client's own
 * {@code X-Forwarded-For} changes nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
class ClientAddressHttpTests {

    private static final String WARNING = "Rate limits read the client address";

    private final HttpClient http = HttpClient.newHttpClient();

    /** The spoof the warning is about: 40 requests, each naming another address, all admitted. */
    @Test
    void underTheFrameworkStrategyAnyClientNamesItsAddressAndTheStartSaysSoOnce(CapturedOutput output)
            throws Exception {
        try (ConfigurableApplicationContext app = application("server.forward-headers-strategy=framework")) {
            assertThat(admittedWithForwardedAddresses(app, 40)).as("a limit of 5 per address").isEqualTo(40);
            assertThat(output.getOut()).contains(WARNING).contains("#clientAddress")
                    .contains("server.tomcat.remoteip.internal-proxies").contains("#principal");
            assertThat(output.getOut().split(WARNING).length - 1).isEqualTo(1);
        }
    }

    /** The safe setup: forwarded headers only from the proxies named, and none is in front here. */
    @Test
    void underTheNativeStrategyWithTheProxiesNamedAClientCannotChooseItsAddress(CapturedOutput output)
            throws Exception {
        try (ConfigurableApplicationContext app = application("server.forward-headers-strategy=native",
                "server.tomcat.remoteip.internal-proxies=10\\.9\\.8\\.7")) {
            assertThat(admittedWithForwardedAddresses(app, 40)).isEqualTo(5);
            assertThat(output.getOut()).doesNotContain(WARNING);
        }
    }

    @Test
    void withoutForwardedHeadersNothingIsSaid(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext app = application()) {
            assertThat(admittedWithForwardedAddresses(app, 10)).isEqualTo(5);
            assertThat(output.getOut()).doesNotContain(WARNING);
        }
    }

    private int admittedWithForwardedAddresses(ConfigurableApplicationContext app, int requests) throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        int admitted = 0;
        for (int i = 0; i < requests; i++) {
            String address = "203.0." + random.nextInt(256) + "." + random.nextInt(1, 255);
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:"
                    + ((WebServerApplicationContext) app).getWebServer().getPort() + "/hello"))
                    .header("X-Forwarded-For", address).build();
            admitted += (this.http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode() == 200) ? 1 : 0;
        }
        return admitted;
    }

    private static ConfigurableApplicationContext application(String... properties) {
        String[] all = new String[properties.length + 1];
        all[0] = "server.port=0";
        System.arraycopy(properties, 0, all, 1, properties.length);
        return new SpringApplicationBuilder(AddressApplication.class).properties(all).run();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, AddressApplication.Hello.class })
    static class AddressApplication {

        @RestController
        static class Hello {

            @GetMapping("/hello")
            @RateLimited(name = "hello", limit = 5, window = "1m", key = "#clientAddress")
            String hello() {
                return "hello";
            }

        }

    }

}
