package io.slidinglimiter.kotlin

import io.slidinglimiter.RateLimitExceededException
import io.slidinglimiter.RateLimiters
import io.slidinglimiter.annotation.RateLimited
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.test.context.FilteredClassLoader
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * `@RateLimited` on Kotlin `suspend` functions of a bean: decided when the coroutine runs (Spring
 * AOP runs the advice around it as a `Mono`, through kotlinx-coroutines-reactor), a denial thrown
 * to the caller outside a request, the body of a denied call never run, a `charge` settled with the
 * value the function returned. On functions returning a `Flow`: decided at each collection, none
 * for a `Flow` never collected, a `charge` settled with the count of values it emitted.
 */
class SuspendFunctionsTests {

    private val runner = ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration::class.java,
            LimiterAutoConfiguration::class.java, LimiterAopAutoConfiguration::class.java))
        .withUserConfiguration(Services::class.java)

    @Test
    fun aSuspendFunctionIsLimitedWhenItRunsAndADeniedCallNeverRuns() {
        runner.run { context ->
            val greeter = context.getBean(Greeter::class.java)
            runBlocking {
                assertThat(greeter.greet("ada")).isEqualTo("hi ada")
                assertThat(greeter.greet("ada")).isEqualTo("hi ada")
                assertThatExceptionOfType(RateLimitExceededException::class.java)
                    .isThrownBy { runBlocking { greeter.greet("ada") } }
                assertThat(greeter.greet("grace")).`as`("another key").isEqualTo("hi grace")
            }
            assertThat(greeter.calls.get()).`as`("the denied call's body").isEqualTo(3)
        }
    }

    @Test
    fun aChargeIsSettledWithWhatTheFunctionReturned() {
        runner.run { context ->
            val greeter = context.getBean(Greeter::class.java)
            val rateLimiters = context.getBean(RateLimiters::class.java)
            runBlocking { assertThat(greeter.rows(3)).isEqualTo(3) }
            assertThat(rateLimiters.usage("rows", "*").used()).isEqualTo(3)
        }
    }

    @Test
    fun aFlowIsDecidedWhenCollectedOncePerCollection() {
        runner.run { context ->
            val greeter = context.getBean(Greeter::class.java)
            val rateLimiters = context.getBean(RateLimiters::class.java)
            val letters = greeter.letters("ada")
            repeat(3) { greeter.letters("ada") }
            assertThat(rateLimiters.usage("letters", "ada").used()).`as`("flows never collected").isZero()
            assertThat(greeter.flowCalls.get()).`as`("the function ran for none of them").isZero()
            runBlocking {
                assertThat(letters.toList()).containsExactly('a', 'd', 'a')
                assertThat(letters.toList()).`as`("a second collection").containsExactly('a', 'd', 'a')
                assertThatExceptionOfType(RateLimitExceededException::class.java)
                    .isThrownBy { runBlocking { letters.toList() } }
                assertThat(greeter.letters("grace").toList()).`as`("another key").containsExactly('g', 'r', 'a', 'c', 'e')
            }
            assertThat(greeter.flowCalls.get()).`as`("the denied collection's function").isEqualTo(3)
        }
    }

    @Test
    fun aFlowIsChargedTheValuesItEmitted() {
        runner.run { context ->
            val greeter = context.getBean(Greeter::class.java)
            val rateLimiters = context.getBean(RateLimiters::class.java)
            runBlocking {
                assertThat(greeter.flowedRows(3).toList()).containsExactly(1, 2, 3)
                assertThat(greeter.suspendedRows(4).toList()).containsExactly(1, 2, 3, 4)
            }
            assertThat(rateLimiters.usage("flowed-rows", "*").used()).isEqualTo(3)
            assertThat(rateLimiters.usage("suspended-rows", "*").used())
                .`as`("a suspend function returning a Flow: every value, not its first").isEqualTo(4)
        }
    }

    @Test
    fun aFlowCollectionThatStopsEarlyStaysAtItsCost() {
        runner.run { context ->
            val greeter = context.getBean(Greeter::class.java)
            val rateLimiters = context.getBean(RateLimiters::class.java)
            // More values than the collector buffers (64), so that the flow is cancelled before it ends.
            runBlocking { assertThat(greeter.flowedRows(200).first()).isEqualTo(1) }
            assertThat(rateLimiters.usage("flowed-rows", "*").used()).`as`("cancelled: at its cost").isEqualTo(5)
        }
    }

    @Test
    fun withoutKotlinxCoroutinesReactorAFlowFailsTheStartNamingIt() {
        runner.withClassLoader(FilteredClassLoader("kotlinx.coroutines.reactor")).run { context ->
            assertThat(context).hasFailed()
            assertThat(context.startupFailure).hasMessageContaining("Greeter.letters(")
                .hasMessageContaining("a Kotlin Flow without org.jetbrains.kotlinx:kotlinx-coroutines-reactor")
        }
    }

    @Test
    fun withoutKotlinxCoroutinesReactorTheStartFailsNamingIt() {
        runner.withClassLoader(FilteredClassLoader("kotlinx.coroutines.reactor")).run { context ->
            assertThat(context).hasFailed()
            assertThat(context.startupFailure).hasMessageContaining("Greeter.greet(")
                .hasMessageContaining("org.jetbrains.kotlinx:kotlinx-coroutines-reactor")
        }
    }

    @Configuration(proxyBeanMethods = false)
    open class Services {

        @Bean
        open fun greeter() = Greeter()

    }

    open class Greeter {

        open val calls = AtomicInteger()

        @RateLimited(name = "greet", limit = 2, window = "1m", key = "#name")
        open suspend fun greet(name: String): String {
            delay(1)
            calls.incrementAndGet()
            return "hi $name"
        }

        @RateLimited(name = "rows", limit = 10, window = "1m", cost = "5", charge = "#result")
        open suspend fun rows(count: Int): Int {
            delay(1)
            return count
        }

        open val flowCalls = AtomicInteger()

        @RateLimited(name = "letters", limit = 2, window = "1m", key = "#name")
        open fun letters(name: String): Flow<Char> {
            flowCalls.incrementAndGet()
            return name.toList().asFlow()
        }

        @RateLimited(name = "flowed-rows", limit = 10, window = "1m", cost = "5", charge = "#result")
        open fun flowedRows(count: Int): Flow<Int> = (1..count).asFlow()

        @RateLimited(name = "suspended-rows", limit = 10, window = "1m", cost = "5", charge = "#result")
        open suspend fun suspendedRows(count: Int): Flow<Int> {
            delay(1)
            return (1..count).asFlow()
        }

    }

}
