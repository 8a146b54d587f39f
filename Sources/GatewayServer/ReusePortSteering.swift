#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Which of the listeners sharing a port (`SO_REUSEPORT`, `server.reuse_port`) the kernel
/// gives new connections to, so that a gateway taking over from another loses none of them
/// (docs/DECISIONS.md, "Upgrades: two processes on one port").
///
/// The kernel spreads connections over a port's listeners by a hash, and a listener that
/// closes resets the connections still in its accept queue (unless `net.ipv4.tcp_migrate_req`
/// is 1). So the listeners of a port share one classic BPF program that picks a listener by
/// its place in the port's group, which is the order they started listening in (a listener
/// that leaves is replaced by the last one):
/// - a gateway that starts listening asks for the first (``preferEarliest(_:)``): the running
///   one keeps every new connection, and the new one gets none before it is ready;
/// - a gateway that drains asks for the second (``preferLatest(_:)``): the one that took over
///   gets every new connection, while the draining one accepts what its queue still holds and
///   then closes with nothing in it. Once it has gone, the program names a place nobody holds
///   and the kernel goes back to its hash, over the one listener left.
///
/// On systems without the option the listeners share connections by the hash alone.
enum ReusePortSteering {
    static func preferEarliest(_ server: any Channel) async {
        await attach(returning: 0, to: server)
    }

    static func preferLatest(_ server: any Channel) async {
        await attach(returning: 1, to: server)
    }

    /// One instruction, `ret #index`: the listener at `index` in the group, or, past its
    /// end, the kernel's hash.
    private static func attach(returning index: UInt32, to server: any Channel) async {
        #if os(Linux)
        guard let provider = server as? any SocketOptionProvider else { return }
        let instruction = UnsafeMutablePointer<Instruction>.allocate(capacity: 1)
        defer { instruction.deallocate() }
        instruction.initialize(to: Instruction(code: bpfReturnConstant, jumpTrue: 0, jumpFalse: 0, constant: index))
        let program = Program(length: 1, instructions: instruction)
        // Fails only on kernels older than 4.5, which share connections by the hash alone.
        try? await provider.unsafeSetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: soAttachReusePortCBPF, value: program
        ).get()
        #endif
    }

    /// `struct sock_filter` (linux/filter.h).
    private struct Instruction {
        var code: UInt16
        var jumpTrue: UInt8
        var jumpFalse: UInt8
        var constant: UInt32
    }

    /// `struct sock_fprog`: its pointer is read by the kernel during the call only.
    private struct Program: @unchecked Sendable {
        var length: UInt16
        var instructions: UnsafeMutablePointer<Instruction>
    }

    /// `BPF_RET | BPF_K`.
    private static let bpfReturnConstant: UInt16 = 0x06
    /// `SO_ATTACH_REUSEPORT_CBPF` (asm-generic/socket.h).
    private static let soAttachReusePortCBPF = SocketOptionName(51)
}
