package io.slidinglimiter.call;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;


import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersTests {

    @Test
    void secondsAreRoundedUpAndNeverZero() {
        assertThat(RateLimitHeaders.seconds(Duration.ZERO)).isEqualTo(1);
        assertThat(RateLimitHeaders.seconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(RateLimitHeaders.seconds(Duration.ofMillis(1000))).isEqualTo(1);
        assertThat(RateLimitHeaders.seconds(Duration.ofMillis(1001))).isEqualTo(2);
        assertThat(RateLimitHeaders.seconds(Duration.ofMinutes(1))).isEqualTo(60);
    }

    @Test
    void aSubSecondWindowIsOneSecondAndNamesAreValidStructuredFieldStrings() {
        LimitDefinition odd = LimitDefinition.of("we\"ird\\näme", 3, Duration.ofMillis(500), 10);
        String[] values = RateLimitHeaders.values(List.of(odd), List.of(new Decision(false, 3, 0, 250, 400)));
        assertThat(values[0]).isEqualTo("\"we\\\"ird\\\\n_me\";q=3;w=1");
        assertThat(values[1]).isEqualTo("\"we\\\"ird\\\\n_me\";r=0;t=1");
    }

}
