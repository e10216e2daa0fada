package io.slidinglimiter.kotlin

import io.slidinglimiter.RateLimitExceededException
import io.slidinglimiter.RateLimiters
import io.slidinglimiter.annotation.RateLimited
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
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
 * value the function returned.
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

    }

}
