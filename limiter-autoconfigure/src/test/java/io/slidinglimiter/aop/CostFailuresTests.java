package io.slidinglimiter.aop;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A cost that a call's data made impossible to compute is refused without the expression's
 * internals, which go to the log, once per limit, for the developer.
 */
@ExtendWith(OutputCaptureExtension.class)
class CostFailuresTests {

    @Test
    void aCostTheCallsDataBreaksIsRefusedPlainlyAndLoggedOnce(CapturedOutput output) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                        LimiterAopAutoConfiguration.class))
                .withUserConfiguration(Services.class).run((context) -> {
                    Pages pages = context.getBean(Pages.class);
                    assertThat(pages.read("3")).isEqualTo("3");
                    for (int i = 0; i < 3; i++) {
                        assertThatExceptionOfType(InvalidCostException.class).isThrownBy(() -> pages.read("many"))
                                .withMessage("The cost of limit 'pages' could not be computed from this call's data");
                    }
                    assertThat(output.getOut().split("could not be computed for a call", -1)).hasSize(2);
                    assertThat(output.getOut()).contains("The cost 'T(java.lang.Long).parseLong(#count)' of limit"
                            + " 'pages' could not be computed for a call (");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {

        @Bean
        Pages pages() {
            return new Pages();
        }

    }

    static class Pages {

        @RateLimited(name = "pages", limit = 10, window = "1m", cost = "T(java.lang.Long).parseLong(#count)")
        public String read(String count) {
            return count;
        }

    }

}
