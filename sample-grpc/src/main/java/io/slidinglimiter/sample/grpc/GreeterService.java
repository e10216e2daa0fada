package io.slidinglimiter.sample.grpc;

import io.grpc.stub.StreamObserver;

import org.springframework.stereotype.Service;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.sample.grpc.proto.GreeterGrpc;
import io.slidinglimiter.sample.grpc.proto.HelloReply;
import io.slidinglimiter.sample.grpc.proto.HelloRequest;

/** The greeter of hello.proto. */
@Service
public class GreeterService extends GreeterGrpc.GreeterImplBase {

    /** Five greetings a minute per API key (limiter.limits.greetings). */
    @Override
    @RateLimited(name = "greetings", key = "#metadata['x-api-key']")
    public void sayHello(HelloRequest request, StreamObserver<HelloReply> responses) {
        responses.onNext(HelloReply.newBuilder().setMessage("Hello " + request.getName()).build());
        responses.onCompleted();
    }

    /** Limited by limiter.grpc.rules, with no annotation. */
    @Override
    public void streamHellos(HelloRequest request, StreamObserver<HelloReply> responses) {
        for (int i = 1; i <= 3; i++) {
            responses.onNext(HelloReply.newBuilder().setMessage("Hello " + request.getName() + " #" + i).build());
        }
        responses.onCompleted();
    }

}
