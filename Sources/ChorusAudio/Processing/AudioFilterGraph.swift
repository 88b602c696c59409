import CFFmpeg
import Foundation

/// One libavfilter graph run over interleaved Float32 samples: `abuffer` → the filters described → `aformat` back to
/// the same format → `abuffersink`. The one owner of its C graph (freed in `deinit`); errors become `AudioError`s
/// through `FFmpeg.check`.
final class AudioFilterGraph {
    let format: AudioFormat
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private let subject: String

    /// - Parameters:
    ///   - description: a filter chain in FFmpeg's syntax (`highpass=f=80,afftdn=nr=12`), built by Chorus, never by
    ///     a client.
    ///   - subject: how errors name what is filtered.
    init(_ description: String, format: AudioFormat, subject: String) throws {
        FFmpeg.setUp
        self.format = format
        self.subject = subject
        guard format.channels == 1 || format.channels == 2, format.sampleRate > 0 else {
            throw AudioError(.invalidArgument, subject: subject, reason: "cannot filter \(format)")
        }
        guard let graph = avfilter_graph_alloc() else {
            throw AudioError(.invalidArgument, subject: subject, reason: "cannot allocate a filter graph")
        }
        self.graph = graph
        graph.pointee.nb_threads = 1  // one message's audio: no thread pool per graph (messages run in parallel already)
        let layout = format.channels == 1 ? "mono" : "stereo"
        let arguments = "sample_rate=\(format.sampleRate):sample_fmt=flt:channel_layout=\(layout):time_base=1/\(format.sampleRate)"
        try FFmpeg.check(
            avfilter_graph_create_filter(&source, avfilter_get_by_name("abuffer"), "in", arguments, nil, graph),
            "avfilter_graph_create_filter", subject: subject, reason: "cannot set up the filter input", as: .invalidArgument)
        try FFmpeg.check(
            avfilter_graph_create_filter(&sink, avfilter_get_by_name("abuffersink"), "out", nil, nil, graph),
            "avfilter_graph_create_filter", subject: subject, reason: "cannot set up the filter output", as: .invalidArgument)
        // The graph's open ends: parsing links them and leaves in these lists what it did not, freed here either way.
        var outputs = avfilter_inout_alloc()
        var inputs = avfilter_inout_alloc()
        defer {
            avfilter_inout_free(&outputs)
            avfilter_inout_free(&inputs)
        }
        guard let output = outputs, let input = inputs else {
            throw AudioError(.invalidArgument, subject: subject, reason: "cannot allocate the filter links")
        }
        output.pointee.name = av_strdup("in")
        output.pointee.filter_ctx = source
        output.pointee.pad_idx = 0
        output.pointee.next = nil
        input.pointee.name = av_strdup("out")
        input.pointee.filter_ctx = sink
        input.pointee.pad_idx = 0
        input.pointee.next = nil
        let chain = "\(description),aformat=sample_fmts=flt:sample_rates=\(format.sampleRate):channel_layouts=\(layout)"
        try FFmpeg.check(
            avfilter_graph_parse_ptr(graph, chain, &inputs, &outputs, nil), "avfilter_graph_parse_ptr",
            subject: subject, reason: "cannot build the filters \(description)", as: .invalidArgument)
        try FFmpeg.check(
            avfilter_graph_config(graph, nil), "avfilter_graph_config", subject: subject,
            reason: "cannot configure the filters \(description)", as: .invalidArgument)
    }

    deinit {
        avfilter_graph_free(&graph)
    }

    /// Runs all of `samples` through the graph and returns everything it gives back (its length may differ: a filter
    /// that removes silence shortens it).
    func process(_ samples: [Float]) throws -> [Float] {
        let channels = format.channels
        let frames = samples.count / channels
        var output: [Float] = []
        output.reserveCapacity(samples.count)
        guard let received = av_frame_alloc() else { throw AudioError(.invalidArgument, subject: subject, reason: "cannot allocate a frame") }
        var receivedFrame: UnsafeMutablePointer<AVFrame>? = received
        defer { av_frame_free(&receivedFrame) }
        var layout = FFmpeg.channelLayout(channels: channels)
        defer { av_channel_layout_uninit(&layout) }
        let block = 4_096
        var offset = 0
        while offset < frames {
            let count = min(block, frames - offset)
            guard let frame = av_frame_alloc() else { throw AudioError(.invalidArgument, subject: subject, reason: "cannot allocate a frame") }
            var owned: UnsafeMutablePointer<AVFrame>? = frame
            defer { av_frame_free(&owned) }  // empty once the source took its buffers
            frame.pointee.nb_samples = Int32(count)
            frame.pointee.format = AV_SAMPLE_FMT_FLT.rawValue
            frame.pointee.sample_rate = Int32(format.sampleRate)
            frame.pointee.pts = Int64(offset)
            try FFmpeg.check(
                av_channel_layout_copy(&frame.pointee.ch_layout, &layout), "av_channel_layout_copy", subject: subject,
                as: .invalidArgument)
            try FFmpeg.check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer", subject: subject, as: .invalidArgument)
            samples.withUnsafeBufferPointer { source in
                frame.pointee.data.0!.withMemoryRebound(to: Float.self, capacity: count * channels) { destination in
                    destination.update(from: source.baseAddress! + offset * channels, count: count * channels)
                }
            }
            try FFmpeg.check(
                av_buffersrc_add_frame_flags(source, frame, 0), "av_buffersrc_add_frame", subject: subject,
                reason: "the filters refused the audio", as: .invalidArgument)
            try drain(into: &output, using: received)
            offset += count
        }
        try FFmpeg.check(
            av_buffersrc_add_frame_flags(source, nil, 0), "av_buffersrc_add_frame", subject: subject,
            reason: "the filters could not be flushed", as: .invalidArgument)
        try drain(into: &output, using: received)
        return output
    }

    /// Appends every frame the sink has ready.
    private func drain(into output: inout [Float], using frame: UnsafeMutablePointer<AVFrame>) throws {
        while true {
            let code = av_buffersink_get_frame(sink, frame)
            if code == FFmpeg.tryAgain || code == FFmpeg.endOfFile { return }
            try FFmpeg.check(code, "av_buffersink_get_frame", subject: subject, reason: "the filters failed", as: .invalidArgument)
            let count = Int(frame.pointee.nb_samples) * format.channels
            if count > 0, let data = frame.pointee.data.0 {
                data.withMemoryRebound(to: Float.self, capacity: count) { output.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
            }
            av_frame_unref(frame)
        }
    }
}
