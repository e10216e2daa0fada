package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.call.CallFinder;
import io.slidinglimiter.call.CallFinders;
import io.slidinglimiter.grpc.GrpcCallFinder;
import io.slidinglimiter.web.ReactiveCallFinder;
import io.slidinglimiter.web.ServletCallFinder;

/**
 * The {@link CallFinders} of the transports an application serves calls with.
 * <p>
 * A servlet application has no WebFlux request and a reactive one no servlet request; one that is not
 * a web application has neither (look-ups saved on every call). gRPC calls are found wherever gRPC is.
 */
final class TransportCalls {

    private TransportCalls() {
    }

    /**
     * The finders of an application's transports.
     * @param context the application's context
     * @return its finders
     */
    static CallFinders of(ApplicationContext context) {
        ClassLoader classLoader = context.getClassLoader();
        WebStack webStack = WebStack.of(context);
        List<CallFinder> finders = new ArrayList<>();
        if (webStack == WebStack.SERVLET && ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", classLoader)
                && ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder", classLoader)) {
            finders.add(new ServletCallFinder());
        }
        if (ClassUtils.isPresent("io.grpc.Context", classLoader)) {
            finders.add(new GrpcCallFinder());
        }
        if (webStack == WebStack.REACTIVE
                && ClassUtils.isPresent("org.springframework.web.server.ServerWebExchange", classLoader)
                && ClassUtils.isPresent("reactor.core.publisher.Mono", classLoader)) {
            finders.add(new ReactiveCallFinder());
        }
        return new CallFinders(finders);
    }

}
