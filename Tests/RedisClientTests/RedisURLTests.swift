import RedisClient
import Testing

@Suite struct RedisURLTests {
    @Test func parsesEveryPart() throws {
        let url = try RedisURL("redis://user:p%40ss@redis.internal:6380/2")
        #expect(url.host == "redis.internal")
        #expect(url.port == 6380)
        #expect(url.username == "user")
        #expect(url.password == "p@ss")
        #expect(url.database == 2)
    }

    @Test func defaults() throws {
        let url = try RedisURL("redis://127.0.0.1")
        #expect(url.port == 6379)
        #expect(url.database == 0)
        #expect(url.password == nil)
    }

    @Test func passwordNeverPrinted() throws {
        let url = try RedisURL("redis://:hunter2@127.0.0.1:6379/0")
        #expect(url.password == "hunter2")
        #expect(!url.description.contains("hunter2"))
    }

    @Test func tlsSchemeAndUserWithoutPassword() throws {
        let url = try RedisURL("rediss://gateway@redis.example:6380/0")
        #expect(url.usesTLS)
        #expect(url.username == "gateway")
        #expect(url.password == nil)
        #expect(url.description == "rediss://gateway@redis.example:6380/0")
        #expect(try !RedisURL("redis://127.0.0.1").usesTLS)
    }

    @Test(arguments: ["http://127.0.0.1:6379", "redis://", "redis://host:99999", "redis://host/abc", "not a url"])
    func rejects(_ text: String) {
        #expect(throws: RedisError.self) { try RedisURL(text) }
    }
}
