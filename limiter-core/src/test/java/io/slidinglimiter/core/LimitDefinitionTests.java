package io.slidinglimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LimitDefinitionTests {

    @Test
    void aValidDefinitionKeepsItsValues() {
        LimitDefinition login = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);
        assertThat(login.windowMillis()).isEqualTo(60_000);
        assertThat(login.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
        assertThat(login.withLimit(9).limit()).isEqualTo(9);
        assertThat(login.withLimit(9)).isEqualTo(new LimitDefinition("login", 9, Duration.ofMinutes(1), 12,
                Algorithm.SLIDING_WINDOW_COUNTER));
    }

    @Test
    void limitMustBePositive() {
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("login", 0, Duration.ofSeconds(1), 10))
                .withMessage("Limit 'login': limit must be greater than 0 but was 0");
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("login", -5, Duration.ofSeconds(1), 10))
                .withMessage("Limit 'login': limit must be greater than 0 but was -5");
    }

    @Test
    void windowMustBePositiveAndWholeMilliseconds() {
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ZERO, 10))
                .withMessage("Limit 'api': window must be positive but was PT0S");
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ofSeconds(-1), 1))
                .withMessage("Limit 'api': window must be positive but was PT-1S");
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ofNanos(1_500_000), 1))
                .withMessage("Limit 'api': window PT0.0015S is not a whole number of milliseconds");
    }

    @Test
    void aWindowTooLongForMillisecondArithmeticIsRefusedByName() {
        assertThatExceptionOfType(InvalidLimitException.class)
                .isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ofDays(100_000_000_000L), 10))
                .withMessage("Limit 'api': window PT2400000000000H is longer than the longest supported, 366 days")
                .extracting(InvalidLimitException::getField).isEqualTo(InvalidLimitException.Field.WINDOW);
        assertThat(LimitDefinition.of("yearly", 5, Duration.ofDays(365), 73).windowMillis())
                .isEqualTo(365L * 24 * 3600 * 1000);
    }

    @Test
    void subWindowsMustBeBetweenOneAnd3600() {
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ofHours(1), 0))
                .withMessage("Limit 'api': sub-windows must be between 1 and 3600 but was 0");
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ofHours(1), 3601))
                .withMessage("Limit 'api': sub-windows must be between 1 and 3600 but was 3601");
        assertThat(LimitDefinition.of("api", 5, Duration.ofHours(1), 3600).subWindows()).isEqualTo(3600);
    }

    @Test
    void windowMustDivideIntoWholeMillisecondSubWindows() {
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of("api", 5, Duration.ofMillis(1500), 7))
                .withMessage("Limit 'api': window 1500ms cannot be cut into 7 sub-windows of whole milliseconds:"
                        + " use a window that is a multiple of 7ms or another number of sub-windows");
    }

    @Test
    void nameMustNotBeBlank() {
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of(" ", 5, Duration.ofSeconds(1), 10))
                .withMessage("A limit needs a name, but it was blank");
        assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.of(null, 5, Duration.ofSeconds(1), 10))
                .withMessage("A limit needs a name, but it was null");
    }

}
