import Testing

/// The end-to-end fault scenarios: real redis-server, gateway and upstream processes on
/// loopback, started and stopped by each test. Every scenario prints what it measured.
enum HardeningSuite {}
