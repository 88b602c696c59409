import ChorusSupport
public import ChorusWire
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a render reports while it runs (from `GET /v1/renders/{id}/events`).
public enum RenderUpdate: Sendable, Equatable {
    case progress(RenderProgressBody)
    /// A message's place in the output is fixed.
    case segment(Timeline.Segment)
    /// The render is done; its manifest.
    case done(RenderManifest)
}

extension ChorusClient {
    /// The render's events: progress and segments as they happen (a render already done replays them),
    /// ending with `.done`; a failed render ends the stream with its `ChorusClientError`.
    public func events(_ id: String) -> AsyncThrowingStream<RenderUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: RenderUpdate.self)
        let delegate = EventStreamDelegate(continuation: continuation)
        let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
        var request = request("GET", ServicePaths.render(id, .events), headers: ["Accept": "text/event-stream"])
        request.timeoutInterval = 3_600
        let task = session.dataTask(with: request)
        continuation.onTermination = { _ in
            task.cancel()
            session.finishTasksAndInvalidate()
        }
        task.resume()
        return stream
    }
}

/// Turns a text/event-stream body into `RenderUpdate`s as bytes arrive.
final class EventStreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let continuation: AsyncThrowingStream<RenderUpdate, any Error>.Continuation
    /// The bytes not yet handled, and the response's status.
    private let state = Locked((buffer: Data(), status: 200))

    init(continuation: AsyncThrowingStream<RenderUpdate, any Error>.Continuation) {
        self.continuation = continuation
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        state.withLock { $0.status = status }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { state in
            state.buffer.append(data)
            guard state.status < 400 else { return }
            let separator = Data("\n\n".utf8)
            while let end = state.buffer.range(of: separator) {
                let event = String(decoding: state.buffer[state.buffer.startIndex..<end.lowerBound], as: UTF8.self)
                state.buffer.removeSubrange(state.buffer.startIndex..<end.upperBound)
                handle(event)
            }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock { state in
            if state.status >= 400, let response = task.response as? HTTPURLResponse {
                continuation.finish(throwing: ChorusClientError(response: response, body: state.buffer))
            } else if let error {
                continuation.finish(throwing: error)
            } else {
                continuation.finish()
            }
        }
    }

    private func handle(_ event: String) {
        var name = "message"
        var data = ""
        for line in event.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("event:") { name = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("data:") { data += line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
        }
        let json = Data(data.utf8)
        let decoder = JSONDecoder()
        switch name {
        case "progress": if let value = try? decoder.decode(RenderProgressBody.self, from: json) { continuation.yield(.progress(value)) }
        case "segment": if let value = try? decoder.decode(Timeline.Segment.self, from: json) { continuation.yield(.segment(value)) }
        case "done": if let value = try? decoder.decode(RenderManifest.self, from: json) { continuation.yield(.done(value)) }
        case "error":
            let detail = (try? decoder.decode(ErrorBody.self, from: json))?.error
            continuation.finish(throwing: ChorusClientError(status: 0, code: detail?.code ?? "failed", message: detail?.message ?? data))
        default: break
        }
    }
}
