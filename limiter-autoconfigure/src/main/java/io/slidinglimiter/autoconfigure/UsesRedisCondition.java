package io.slidinglimiter.autoconfigure;

/** Matches when the global backend or any limit's is redis. */
class UsesRedisCondition extends UsesBackendCondition {

    UsesRedisCondition() {
        super(Backends.REDIS);
    }

}
