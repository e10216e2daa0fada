package io.slidinglimiter.web;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Spring Security as the test applications use it: on the class path and in the filter chain,
 * with basic auth for the tests that log in, and every request permitted.
 */
@Configuration(proxyBeanMethods = false)
public class OpenSecurity {

    @Bean
    SecurityFilterChain openToAll(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
                .httpBasic(Customizer.withDefaults())
                .csrf((csrf) -> csrf.disable())
                .build();
    }

}
