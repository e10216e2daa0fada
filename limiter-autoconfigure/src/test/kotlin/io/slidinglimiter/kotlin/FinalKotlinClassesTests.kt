package io.slidinglimiter.kotlin

import io.slidinglimiter.annotation.RateLimited
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.catchThrowable
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.boot.test.system.CapturedOutput
import org.springframework.boot.test.system.OutputCaptureExtension
import org.springframework.context.annotation.Bean

/**
 * Kotlin classes and functions are final unless declared `open`: a `@RateLimited` one fails the
 * start through the library's failure analysis, in Kotlin's words (`open`, or the kotlin-spring
 * all-open plugin), never with CGLIB's raw stack trace or Java's "remove final".
 */
@ExtendWith(OutputCaptureExtension::class)
class FinalKotlinClassesTests {

    @Test
    fun aFinalKotlinClassFailsTheStartInKotlinsWords(output: CapturedOutput) {
        val failure = catchThrowable { start(ClosedApplication::class.java) }
        assertThat(failure).isNotNull()
        assertThat(output.out).contains("APPLICATION FAILED TO START")
            .contains("@RateLimited on io.slidinglimiter.kotlin.ClosedGreeter, a final Kotlin class")
            .contains("declare the class ClosedGreeter and its @RateLimited functions open")
            .contains("kotlin-spring").doesNotContain("Remove final")
    }

    @Test
    fun aFinalFunctionOfAnOpenClassFailsTheStartInKotlinsWords(output: CapturedOutput) {
        val failure = catchThrowable { start(FinalFunctionApplication::class.java) }
        assertThat(failure).isNotNull()
        assertThat(output.out).contains("APPLICATION FAILED TO START")
            .contains("the function is final")
            .contains("declare the class HalfOpenGreeter and the function hello open")
            .contains("kotlin-spring").doesNotContain("Remove final")
    }

    private fun start(application: Class<*>) {
        SpringApplicationBuilder(application).web(WebApplicationType.NONE).run().close()
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    class ClosedApplication {

        @Bean
        fun closedGreeter() = ClosedGreeter()

    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    class FinalFunctionApplication {

        @Bean
        fun halfOpenGreeter() = HalfOpenGreeter()

    }

}

class ClosedGreeter {

    @RateLimited(name = "closed", limit = 5, window = "1m")
    fun hello() = "hello"

}

open class HalfOpenGreeter {

    @RateLimited(name = "half-open", limit = 5, window = "1m")
    fun hello() = "hello"

    open fun other() = "other"

}
