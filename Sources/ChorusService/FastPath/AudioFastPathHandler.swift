import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The channel handler of `AudioFastPath`, placed after Hummingbird's connection-state handler (which so sees
/// every request and response, and keeps its idle timeout and keep-alive right) and before its async channel. Its
/// decisions are `FastPathConnectionState`'s; it carries them out: order and pace as the router keeps them, and an
/// answer's end written only once its bytes are out — so the idle timeout and a graceful shutdown, which count from
/// an answer's end, never cut a slow download short.
final class AudioFastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    typealias Answer = (HTTPResponse, AudioFastPath.Body?)

    private let fastPath: AudioFastPath
    private var state = FastPathConnectionState<NIOAny, Answer>()
    /// The HTTP/1 codec's context: a file region is written from there, in NIO's HTTP/1 types, which carry files.
    private var codec: ChannelHandlerContext?

    init(_ fastPath: AudioFastPath) { self.fastPath = fastPath }

    func handlerAdded(context: ChannelHandlerContext) {
        codec = try? context.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if case .file(let handle, _)? = state.removed()?.1 { try? handle.close() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { state.routerAnswered() }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        carryOut(state.received(data, Self.kind(unwrapInboundIn(data)), answer: answer), context: context)
    }

    private static func kind(_ part: HTTPRequestPart) -> FastPathConnectionState<NIOAny, Answer>.Kind {
        switch part {
        case .head: return .head
        case .body: return .body
        case .end: return .end
        }
    }

    /// The fast path's answer to a request head (never without the codec's context, which file regions need).
    private func answer(_ data: NIOAny) -> Answer? {
        guard case .head(let request) = unwrapInboundIn(data), codec != nil else { return nil }
        return fastPath.answer(request, started: Date().timeIntervalSince1970)
    }

    private func carryOut(_ action: FastPathConnectionState<NIOAny, Answer>.Action, context: ChannelHandlerContext) {
        switch action {
        case .forward(let data): context.fireChannelRead(data)
        case .drop, .wait: break
        case .send(let (response, body)): send(response, body, context: context)
        }
    }

    private func send(_ response: HTTPResponse, _ body: AudioFastPath.Body?, context: ChannelHandlerContext) {
        let closing = response.headerFields[.connection] == "close"
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        guard case .file(let handle, let bytes)? = body, let codec else {
            finish(closing: closing, context: context)
            return
        }
        state.bodyStarted()
        let region = FileRegion(fileHandle: handle, readerIndex: bytes.lowerBound, endIndex: bytes.upperBound + 1)
        let written = context.eventLoop.makePromise(of: Void.self)
        codec.write(NIOAny(HTTPServerResponsePart.body(.fileRegion(region))), promise: written)
        context.flush()
        written.futureResult.assumeIsolated().whenComplete { result in
            try? handle.close()
            switch result {
            case .success:
                self.state.bodyFinished(success: true)
                self.finish(closing: closing, context: context)
                self.resume(context: context)
            case .failure:
                self.state.bodyFinished(success: false)
                context.close(promise: nil)
            }
        }
    }

    /// Writes the answer's end (and closes the connection after it when the request asked to).
    private func finish(closing: Bool, context: ChannelHandlerContext) {
        guard closing else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// Handles the request parts that waited, then reads again.
    private func resume(context: ChannelHandlerContext) {
        while let action = state.nextWaiting(answer: answer) {
            carryOut(action, context: context)
        }
        if state.heldReadDue() { context.read() }
    }
}
