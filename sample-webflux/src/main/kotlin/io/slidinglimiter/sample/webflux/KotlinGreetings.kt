package io.slidinglimiter.sample.webflux

import io.slidinglimiter.annotation.RateLimited
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.springframework.http.MediaType
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController

/**
 * The same limits from Kotlin: a `suspend` function and a `Flow`; see the README for curl commands.
 * Classes and functions are `open` so that Spring's proxy can override them (the `kotlin-spring`
 * compiler plugin does this for you).
 */
@RestController
open class KotlinGreetings {

    /** 2 requests per minute for each name, decided when the coroutine runs. */
    @GetMapping("/kotlin/hello/{name}")
    @RateLimited(name = "kotlin-hello", limit = 2, window = "1m", key = "#name")
    open suspend fun hello(@PathVariable name: String): String {
        delay(10)
        return "hello $name, from a coroutine\n"
    }

    /**
     * 10 lines per minute for each client address: admitted if 5 are left, decided when the Flow is
     * collected, then charged the lines it emitted.
     */
    @GetMapping("/kotlin/lines", produces = [MediaType.TEXT_PLAIN_VALUE])
    @RateLimited(name = "kotlin-lines", limit = 10, window = "1m", key = "#clientAddress", cost = "5",
        charge = "#result")
    open fun lines(@RequestParam(defaultValue = "3") count: Int): Flow<String> = flow {
        repeat(count) { emit("line ${it + 1}\n") }
    }

}
