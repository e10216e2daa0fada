package io.slidinglimiter.kotlin

import io.slidinglimiter.annotation.RateLimited
import io.slidinglimiter.core.ManualTimeSource
import io.slidinglimiter.web.OpenSecurity
import io.slidinglimiter.web.reactive.ReactiveTestApplication
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Nested
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.test.web.server.LocalServerPort
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Import
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.RestController

/**
 * A `suspend` controller function with `@RateLimited`, over real HTTP on both stacks: the key sees
 * the request, the 200 carries `RateLimit-Policy` and `RateLimit`, the 429 all three headers and
 * the problem body, and the body of a denied call never runs.
 */
class SuspendControllersHttpTests {

    /** One stack's application, started by the nested class that extends this. */
    abstract inner class OnAStack {

        @LocalServerPort
        var port = 0

        @Autowired
        lateinit var controller: SuspendController

        @Test
        fun limitedWithTheRequestInTheKey() = assertLimited(port, controller)

    }

    @Nested
    @SpringBootTest(classes = [ReactiveTestApplication::class, SuspendController::class],
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = ["spring.main.web-application-type=reactive"])
    inner class OnWebFlux : OnAStack()

    @Nested
    @SpringBootTest(classes = [ServletApplication::class], webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = ["spring.main.web-application-type=servlet"])
    inner class OnSpringMvc : OnAStack()

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(OpenSecurity::class, SuspendController::class)
    open class ServletApplication {

        /** The reactive application's clock, so that both stacks answer the same reset times. */
        @Bean
        open fun manualTimeSource() = ManualTimeSource(ReactiveTestApplication.START_MILLIS)

    }

    @RestController
    open class SuspendController {

        open val calls = AtomicInteger()

        @GetMapping("/suspend/{name}")
        @RateLimited(name = "suspend", limit = 2, window = "1m", key = "#clientAddress + ':' + #name")
        open suspend fun greet(@PathVariable name: String): String {
            delay(1)
            calls.incrementAndGet()
            return "hi $name"
        }

    }

    private fun assertLimited(port: Int, controller: SuspendController) {
        val before = controller.calls.get()
        val first = get(port, "/suspend/ada")
        assertThat(first.statusCode()).isEqualTo(200)
        assertThat(first.body()).isEqualTo("hi ada")
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"suspend\";q=2;w=60")
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"suspend\";r=1;t=60")
        assertThat(get(port, "/suspend/ada").statusCode()).isEqualTo(200)
        val denied = get(port, "/suspend/ada")
        assertThat(denied.statusCode()).isEqualTo(429)
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60")
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"suspend\";q=2;w=60")
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"suspend\";r=0;t=60")
        assertThat(denied.body()).contains("\"status\":429").contains("\"violated-policies\":[\"suspend\"]")
        assertThat(get(port, "/suspend/grace").statusCode()).`as`("another key").isEqualTo(200)
        assertThat(controller.calls.get() - before).`as`("the denied call did not run").isEqualTo(3)
    }

    private fun get(port: Int, path: String): HttpResponse<String> =
        HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:$port$path")).build(),
            HttpResponse.BodyHandlers.ofString())

}
