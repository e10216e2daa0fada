package io.slidinglimiter.web;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProblemJsonTests {

    @Test
    void problemJsonEscapesWhatItQuotes() {
        assertThat(ProblemJson.quote("a\"b\\c\nd\u2028")).isEqualTo("\"a\\\"b\\\\c\\u000ad\\u2028\"");
    }

}
