package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Real HTTP requests to the test server on this machine.
 */
final class LocalHttp {

    private final HttpClient client = HttpClient.newHttpClient();

    private final int port;

    LocalHttp(int port) {
        this.port = port;
    }

    /**
     * Real HTTP to a running application started by the test.
     * @param context the application, started on a port of its own
     * @return the client
     */
    static LocalHttp of(ConfigurableApplicationContext context) {
        return new LocalHttp(((WebServerApplicationContext) context).getWebServer().getPort());
    }

    /**
     * Starts a test application on a port of its own.
     * @param application its configuration class
     * @param properties its properties
     * @param more properties added after them, which win
     * @return the running application
     */
    static ConfigurableApplicationContext start(Class<?> application, List<String> properties, String... more) {
        List<String> all = new ArrayList<>(properties);
        all.add("server.port=0");
        all.addAll(List.of(more));
        return new SpringApplicationBuilder(application).properties(all.toArray(String[]::new)).run();
    }

    /**
     * The statuses of requests sent one after the other.
     * @param calls how many
     * @param request a new request each time
     * @return their statuses, in order
     */
    List<Integer> statuses(int calls, Supplier<HttpRequest.Builder> request) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            statuses.add(send(request.get()).statusCode());
        }
        return statuses;
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path));
    }

    HttpResponse<String> get(String path) throws Exception {
        return send(request(path));
    }

    HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

}
