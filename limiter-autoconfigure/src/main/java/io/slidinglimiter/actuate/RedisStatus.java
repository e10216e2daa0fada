package io.slidinglimiter.actuate;

/**
 * Whether Redis is deciding the limiter's Redis limits now: for the endpoint, which then says that
 * a key's usage is a local count, and for health. No Redis type, so that it loads without Redis.
 */
public interface RedisStatus {

    /** @return whether Redis fails decisions now (unreachable, timing out, refusing writes) */
    boolean isFailing();

    /** @return the message of the last failure, or empty */
    String lastFailure();

}
