package io.slidinglimiter.sample.webflux;

import java.net.InetSocketAddress;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The gateway profile's key: the client's address.
 */
@Configuration(proxyBeanMethods = false)
@Profile("gateway")
class GatewayKeys {

    @Bean
    KeyResolver clientAddressKeyResolver() {
        return (exchange) -> {
            InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
            return Mono.justOrEmpty((remote != null) ? remote.getAddress().getHostAddress() : null);
        };
    }

}
