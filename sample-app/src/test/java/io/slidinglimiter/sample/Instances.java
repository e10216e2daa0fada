package io.slidinglimiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** Requests to a running instance of the sample, by path. */
final class Instances {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private Instances() {
    }

    static String body(ConfigurableApplicationContext instance, String path) throws Exception {
        return HTTP.send(request(instance, path), HttpResponse.BodyHandlers.ofString()).body();
    }

    static int status(ConfigurableApplicationContext instance, String path) throws Exception {
        return HTTP.send(request(instance, path), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static HttpRequest request(ConfigurableApplicationContext instance, String path) {
        int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
        return HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build();
    }

}
