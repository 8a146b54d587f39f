import RedisClient
let redis = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL("redis://127.0.0.1:6399/0"), poolSize: 2))
print("sending")
print(try await redis.send("PING"))
print(try await redis.send("SET", "a", "b"))
print(try await redis.send("GET", "a"))
