package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

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
