import CFlite
import ChorusAudio
import ChorusSupport
import Foundation

/// The process's CMU Flite. Flite's synthesis is reentrant across voices (the voices and lexicon are
/// read-only once registered), but it reports internal errors by `longjmp` through one global
/// (`cst_errjmp`) — or exits the process when that is unset. To catch every error without racing on that
/// global, synthesis runs on one dedicated thread (never Swift's cooperative pool), with the voices
/// registered there first.
final class FliteEngine: Sendable {
    static let shared = FliteEngine()

    /// Flite's version, part of the cache key.
    static let version = String(cString: chorus_flite_version())

    private let thread = WorkerPool(threads: 1, name: "flite")
    private let voices = VoiceTable()

    /// What one synthesis produced: 16-bit samples at `rate`, and each text token with its start and end.
    struct Output: Sendable {
        var rate: Int
        var samples: [Int16]
        var tokens: [(name: String, start: Double, end: Double)]
    }

    /// Speaks `text` with `voice`, and `entries` (`word : phones`) in its lexicon for this utterance only.
    /// - Throws: `VoiceError` when Flite fails or produces nothing.
    func speak(_ text: String, voice: FliteVoice, entries: [String] = []) async throws -> Output {
        let voices = self.voices
        return try await thread.run {
            guard let handle = voices.handle(voice.name) else {
                throw VoiceError(
                    .voiceNotFound, provider: "flite", message: "no Flite voice \"\(voice.name)\" (see `chorus voices --provider flite`)")
            }
            let base = FliteVoice.catalog[voice.name]!
            let stretch = Float(1 / (voice.rate ?? 1))
            let mean = Float(voice.pitch.map { $0 * base.f0Mean } ?? 0)
            let made = entries.map { strdup($0) }
            defer { made.forEach { free($0) } }
            let pointers = made.map { UnsafePointer<CChar>($0) }
            guard
                let utterance = text.withCString({ text in
                    pointers.withUnsafeBufferPointer { list in
                        SeededRandom.seeded { chorus_flite_synth_with(text, handle, stretch, mean, 0, list.baseAddress, Int32(list.count)) }
                    }
                })
            else {
                throw VoiceError(.unavailable, provider: "flite", message: "Flite could not synthesize this text")
            }
            defer { delete_utterance(utterance) }
            guard let wave = utt_wave(utterance), wave.pointee.num_samples > 0, let samples = wave.pointee.samples else {
                throw VoiceError(.badRequest, provider: "flite", message: "Flite produced no audio for this text")
            }
            let count = Int(wave.pointee.num_samples) * Int(max(1, wave.pointee.num_channels))
            return Output(
                rate: Int(wave.pointee.sample_rate), samples: Array(UnsafeBufferPointer(start: samples, count: count)),
                tokens: Self.tokens(of: utterance))
        }
    }

    /// Each token of the utterance (a whitespace-separated piece of text, which may be read as several
    /// words: "$12.50") with the start of its first phone and the end of its last; tokens that were not
    /// spoken (no phones) are left out.
    private static func tokens(of utterance: UnsafeMutablePointer<cst_utterance>) -> [(name: String, start: Double, end: Double)] {
        var result: [(String, Double, Double)] = []
        var item = relation_head(utt_relation(utterance, "Token"))
        while let token = item {
            let name = String(cString: chorus_flite_item_name(token))
            let end = Double(ffeature_float(token, "daughtern.R:SylStructure.daughtern.daughtern.R:Segment.end"))
            let start = Double(ffeature_float(token, "daughter1.R:SylStructure.daughter1.daughter1.R:Segment.p.end"))
            if end > 0 { result.append((name, min(start, end), end)) }
            item = item_next(token)
        }
        return result
    }

    /// The registered voices, by short name; registered on the Flite thread at first use.
    private final class VoiceTable: @unchecked Sendable {
        private var table: [String: UnsafeMutablePointer<cst_voice>]?

        /// Only called on the Flite thread.
        func handle(_ name: String) -> UnsafeMutablePointer<cst_voice>? {
            if table == nil {
                _ = flite_init()
                var made: [String: UnsafeMutablePointer<cst_voice>] = [:]
                made["slt"] = register_cmu_us_slt(nil)
                made["rms"] = register_cmu_us_rms(nil)
                made["awb"] = register_cmu_us_awb(nil)
                made["kal16"] = register_cmu_us_kal16(nil)
                made["kal"] = register_cmu_us_kal(nil)
                table = made
            }
            return table?[name]
        }
    }
}
