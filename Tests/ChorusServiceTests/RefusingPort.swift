import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback port bound but never listened on, held until released: connecting to it is refused at once, and no
/// other test's server can be given the same port meanwhile (a port freed by closing a server can be, at once).
final class RefusingPort: @unchecked Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        socket = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}
