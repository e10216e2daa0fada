package io.slidinglimiter.benchmarks

import io.slidinglimiter.annotation.RateLimited

/**
 * [BenchService]'s methods as Kotlin `suspend` functions that return without suspending: the same
 * limit, never reached, beside the same function un-annotated and behind Spring's do-nothing advice
 * (Spring AOP's own cost of advising a coroutine, which runs it as a `Mono`).
 */
open class SuspendingBenchService {

    @RateLimited(name = "allow", key = "#key")
    open suspend fun call(key: String): String = key

    open suspend fun plain(key: String): String = key

    @NoopAdvised
    open suspend fun advised(key: String): String = key

}
