import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 channel with `AudioFastPathHandler` placed after its connection-state handler.
struct FastPathHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let base: HTTP1Channel
    let fastPath: AudioFastPath

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let fastPath = fastPath
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let connectionState = try operations.handler(type: HTTPConnectionStateHandler.self)
            try operations.addHandler(AudioFastPathHandler(fastPath), position: .after(connectionState))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async { await base.handle(value: value, logger: logger) }

    /// What `Application` is given in place of `.http1(configuration:)`.
    static func server(fastPath: AudioFastPath, idleTimeout: TimeAmount) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            FastPathHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idleTimeout)), fastPath: fastPath)
        }
    }
}
