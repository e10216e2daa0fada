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
import io.slidinglimiter.RateLimiters
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.flowOf
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
import org.springframework.http.HttpStatus
import org.springframework.http.ResponseEntity
import org.springframework.web.bind.annotation.ExceptionHandler
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController

/**
 * A `suspend` controller function and one returning a `Flow` with `@RateLimited`, over real HTTP
 * on both stacks: the key sees the request, the 200 carries `RateLimit-Policy` and `RateLimit`, the
 * 429 all three headers and the problem body whatever the controller's own exception handler does,
 * the body of a denied call never runs, and a `Flow`'s charge is the count of values it emitted.
 */
class SuspendControllersHttpTests {

    /** One stack's application, started by the nested class that extends this. */
    abstract inner class OnAStack {

        @LocalServerPort
        var port = 0

        @Autowired
        lateinit var controller: SuspendController

        @Autowired
        lateinit var rateLimiters: RateLimiters

        @Autowired
        lateinit var greeter: SuspendGreeter

        @Test
        fun aSuspendFunctionIsLimitedWithTheRequestInTheKey() =
            assertLimited(port, "suspend", "hi ", controller.calls)

        /** A suspend bean called after the controller awaited something: decided on another thread. */
        @Test
        fun aSuspendBeanCalledAfterAThreadHopAnswersWithTheHeaders() =
            assertLimited(port, "suspend-bean", "hi ", greeter.calls)

        @Test
        fun aFlowIsLimitedWithTheRequestInTheKey() = assertLimited(port, "flow", "hello, ", controller.flowCalls)

        @Test
        fun aSuspendFunctionIsChargedWhatItReturned() {
            val rows = get(port, "/suspend-rows?count=2")
            assertThat(rows.statusCode()).isEqualTo(200)
            assertThat(rows.body()).isEqualTo("[1,2]")
            assertThat(rateLimiters.usage("suspend-rows", "*").used()).isEqualTo(2)
        }

        @Test
        fun aFlowIsChargedTheValuesItEmitted() {
            val rows = get(port, "/flow-rows?count=3")
            assertThat(rows.statusCode()).isEqualTo(200)
            assertThat(rows.body()).isEqualTo("[1,2,3]")
            assertThat(rateLimiters.usage("flow-rows", "*").used()).isEqualTo(3)
        }

    }

    @Nested
    @SpringBootTest(classes = [ReactiveTestApplication::class, SuspendController::class, SuspendGreeter::class],
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = ["spring.main.web-application-type=reactive"])
    inner class OnWebFlux : OnAStack()

    @Nested
    @SpringBootTest(classes = [ServletApplication::class], webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = ["spring.main.web-application-type=servlet"])
    inner class OnSpringMvc : OnAStack()

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(OpenSecurity::class, SuspendController::class, SuspendGreeter::class)
    open class ServletApplication {

        /** The reactive application's clock, so that both stacks answer the same reset times. */
        @Bean
        open fun manualTimeSource() = ManualTimeSource(ReactiveTestApplication.START_MILLIS)

    }

    open class SuspendGreeter {

        open val calls = AtomicInteger()

        @RateLimited(name = "suspend-bean", limit = 2, window = "1m", key = "#name")
        open suspend fun greet(name: String): String {
            calls.incrementAndGet()
            return "hi $name"
        }

    }

    @RestController
    open class SuspendController(private val greeter: SuspendGreeter) {

        @GetMapping("/suspend-bean/{name}")
        open suspend fun viaBean(@PathVariable name: String): String {
            delay(5)
            return greeter.greet(name)
        }

        open val calls = AtomicInteger()

        @GetMapping("/suspend/{name}")
        @RateLimited(name = "suspend", limit = 2, window = "1m", key = "#clientAddress + ':' + #name")
        open suspend fun greet(@PathVariable name: String): String {
            delay(1)
            calls.incrementAndGet()
            return "hi $name"
        }

        @GetMapping("/suspend-rows")
        @RateLimited(name = "suspend-rows", limit = 10, window = "1m", cost = "5", charge = "#result.size()")
        open suspend fun suspendRows(@RequestParam count: Int): List<Int> {
            delay(1)
            return (1..count).toList()
        }

        open val flowCalls = AtomicInteger()

        @GetMapping("/flow/{name}")
        @RateLimited(name = "flow", limit = 2, window = "1m", key = "#clientAddress + ':' + #name")
        open fun hello(@PathVariable name: String): Flow<String> {
            flowCalls.incrementAndGet()
            return flowOf("hello, ", name)
        }

        @GetMapping("/flow-rows", produces = ["application/json"])
        @RateLimited(name = "flow-rows", limit = 10, window = "1m", cost = "5", charge = "#result")
        open fun rows(@RequestParam count: Int): Flow<Int> = (1..count).asFlow()

        /** The application's own catch-all, which would turn every exception into a 500. */
        @ExceptionHandler(Exception::class)
        open fun everything(ex: Exception): ResponseEntity<String> =
            ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("swallowed: $ex")

    }

    /**
     * Two calls with one key admitted with the headers, the third a 429 with all three and the
     * problem body (though the controller has a catch-all handler), another key admitted; the denied
     * call's function never ran.
     */
    private fun assertLimited(port: Int, limit: String, greeting: String, calls: AtomicInteger) {
        val before = calls.get()
        val first = get(port, "/$limit/ada")
        assertThat(first.statusCode()).isEqualTo(200)
        assertThat(first.body()).isEqualTo("${greeting}ada")
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"$limit\";q=2;w=60")
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"$limit\";r=1;t=60")
        assertThat(get(port, "/$limit/ada").statusCode()).isEqualTo(200)
        val denied = get(port, "/$limit/ada")
        assertThat(denied.statusCode()).isEqualTo(429)
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60")
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"$limit\";q=2;w=60")
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"$limit\";r=0;t=60")
        assertThat(denied.body()).contains("\"status\":429").contains("\"violated-policies\":[\"$limit\"]")
        assertThat(get(port, "/$limit/grace").statusCode()).`as`("another key").isEqualTo(200)
        assertThat(calls.get() - before).`as`("the denied call did not run").isEqualTo(3)
    }

    private fun get(port: Int, path: String): HttpResponse<String> =
        HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:$port$path")).build(),
            HttpResponse.BodyHandlers.ofString())

}
