import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A process a test starts and stops: redis-server, the gateway, an upstream.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, because the threads a test
/// runs on block most signals and a child inherits that mask: a redis-server or gateway
/// started through `Process` never sees SIGTERM, so it could not be stopped gracefully (and
/// graceful shutdown could not be tested). Here the child starts with an empty signal mask and
/// default handlers.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `exitStatus` is only touched under `lock`.
    public let pid: pid_t
    public let executable: String
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `executable`; its standard output and error go to `outputPath` (appended) or
    /// nowhere.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        outputPath: String? = nil
    ) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let output = outputPath ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The child must not inherit the test process's other descriptors: a long-lived server
        // holding the write end of some pipe would keep its reader from ever seeing EOF.
        Self.closeFrom3(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw SpawnFailed(executable: executable, errno: result)
        }
        self.pid = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), looked up at run time
    /// because Swift's Glibc module does not import GNU extensions.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        guard let addCloseFrom else { preconditionFailure("glibc 2.34 or later is required") }
        _ = addCloseFrom(&actions, 3)
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = waitBlocking()
        }
    }

    /// Sends a signal (SIGTERM for a graceful stop, SIGKILL for a crash).
    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    public var isRunning: Bool {
        lock.withLock {
            if exitStatus != nil { return false }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                exitStatus = status
                return false
            }
            return reaped == 0
        }
    }

    /// The exit code once the process has ended (128 + signal when a signal ended it).
    public var exitCode: Int32? {
        _ = isRunning
        return lock.withLock { exitStatus.map(Self.code(of:)) }
    }

    /// Waits for the process to end, polling without blocking a thread, up to `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await eventually(timeout: timeout, interval: .milliseconds(5)) { !isRunning }
        return exitCode ?? -1
    }

    /// SIGTERM, then SIGKILL if it has not ended within `grace`. Waits without blocking a
    /// thread of the test's cooperative pool (on 2 cores it has 2 threads).
    public func stop(grace: Duration = .seconds(10)) async {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if (try? await waitForExit(timeout: grace)) == nil {
            kill(pid, SIGKILL)
            _ = waitBlocking()
        }
    }

    /// SIGKILL and reap: immediate, safe from synchronous code such as `deinit`.
    public func kill9() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        _ = waitBlocking()
    }

    private func waitBlocking() -> Int32 {
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        lock.withLock { exitStatus = status }
        return status
    }

    private static func code(of status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}

public struct SpawnFailed: Error, CustomStringConvertible {
    public let executable: String
    public let errno: Int32
    public var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
}
