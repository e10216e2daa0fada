package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * Real HTTP requests to the test server on this machine.
 */
final class LocalHttp {

    private final HttpClient client = HttpClient.newHttpClient();

    private final int port;

    LocalHttp(int port) {
        this.port = port;
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
