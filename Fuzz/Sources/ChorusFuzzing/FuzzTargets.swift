import ChorusAudio
import ChorusConversation
import ChorusText
import ChorusTextFuzzing
import ChorusWire
public import Foundation

/// The fuzz targets: what the engine and the service do with bytes nobody vetted. Each one takes any
/// bytes and must return — with a result or with the error type its API documents — and whatever it
/// returns must be consistent; anything else stops the process (`preconditionFailure`), which
/// libFuzzer records as a crash. `chorus-fuzz` runs them under libFuzzer (`scripts/fuzz.sh`) and
/// replays files through them; the tests replay the committed corpus and every regression input.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Audio bytes through the decoder the product uses (custom AVIO over memory), natively and resampled.
    case decode
    /// Conversation JSON through the CLI's loader.
    case conversation
    /// Request bodies through the service's budget scan and decoding (renders, speech, OpenAI speech).
    case request
    /// audiowaveform `.dat` bytes through the reader, then written back and coarsened.
    case waveform
    /// MP3 bytes through the parallel encoder's frame walker, and as the LAME tag frame it rewrites.
    case mp3tag
    /// `multipart/form-data` bodies (the audio routes' uploads) through the form parser, with the boundary the
    /// seeds use and one taken from the input's first line, and every form read as a transcription and an alignment
    /// request.
    case multipart
    /// Text as SSML (`<speak>…`): parsed, or refused with a `TextError`; what it shows is what it writes, and every
    /// written word comes back from words timed on what is said.
    case ssml
    /// Model files as Chorus reads them itself before the runtime sees them: the bytes as an ONNX graph's header, as
    /// Whisper's `model.json`, as its token table, as a Piper voice's token table, as a Kokoro voice file (archive and
    /// array) and vocabulary — read, or refused with a `VoiceError` naming the file (`FuzzTarget+Model.swift`).
    case model

    /// Runs the target on `bytes`.
    public func run(_ bytes: Data) {
        switch self {
        case .decode: Self.decode(bytes)
        case .conversation: Self.conversation(bytes)
        case .request: Self.request(bytes)
        case .waveform: Self.waveform(bytes)
        case .mp3tag: Self.mp3tag(bytes)
        case .multipart: Self.multipart(bytes)
        case .ssml: TextFuzzTarget.ssml(bytes)
        case .model: Self.model(bytes)
        }
    }

    static func decode(_ bytes: Data) {
        for output in [nil, AudioFormat(sampleRate: 22_050, channels: 2)] {
            do {
                let reader = try AudioFileReader(data: bytes, name: "fuzz-input", outputFormat: output)
                let audio = try reader.readAll()
                check(audio.format.sampleRate > 0 && (1...64).contains(audio.format.channels), "decoded format \(audio.format)")
                check(audio.samples.count % audio.format.channels == 0, "samples not a whole number of frames")
                if let output { check(audio.format == output, "asked for \(output), got \(audio.format)") }
            } catch let error as AudioError {
                check(!error.description.isEmpty, "an error without a message")
            } catch {
                preconditionFailure("decode threw \(type(of: error)), not AudioError: \(error)")
            }
        }
    }

    static func conversation(_ bytes: Data) {
        do {
            let conversation = try Conversation.parse(bytes, baseDirectory: URL(fileURLWithPath: "/nonexistent-fuzz-dir"), name: "fuzz.json")
            check(!conversation.messages.isEmpty, "a conversation without messages was accepted")
            check(
                conversation.messages.allSatisfy { !$0.speaker.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty },
                "an empty speaker was accepted")
            // Pauses in accepted texts: they parse, and the text shown has the same words as the parts spoken, no control among them.
            for message in conversation.messages where message.audio == nil {
                guard let text = message.text else { continue }
                do {
                    let parts = try SpeechControls.parts(of: text, field: "text")
                    let spoken = parts.compactMap { part -> String? in if case .text(let words) = part { words } else { nil } }
                    let visible = SpeechControls.visible(text)
                    let trimmed = visible.trimmingCharacters(in: .whitespacesAndNewlines)
                    check(
                        trimmed.isEmpty || (try? SpeechControls.parts(of: visible, field: "text")) == [.text(trimmed)],
                        "a control left in the visible text: \(visible)")
                    check(
                        spoken.joined(separator: " ").split(whereSeparator: \.isWhitespace) == visible.split(whereSeparator: \.isWhitespace),
                        "the words spoken and the words shown differ: \(spoken) vs \(visible)")
                    check(
                        parts.allSatisfy { if case .pause(let seconds) = $0 { seconds > 0 && seconds <= 120 } else { true } }, "a pause out of range")
                    // Read as people read it, with the lexicon: words timed on what is spoken come back as the written words.
                    // So for each way pronunciations are given: aliases, espeak-ng's phoneme markup, a dictionary.
                    let espeak: @Sendable (String) -> String? = { ipa in
                        let mnemonics = IPA.espeakMnemonics(ipa)
                        return mnemonics.isEmpty ? nil : IPA.open + mnemonics + IPA.close
                    }
                    for case .text(let written) in parts {
                        let all: @Sendable (Pronunciation) -> Bool = { _ in true }
                        for (markup, dictionary) in [(nil, nil), (espeak, nil), (nil, all)]
                            as [((@Sendable (String) -> String?)?, (@Sendable (Pronunciation) -> Bool)?)]
                        {
                            let form = TextNormalizer.spokenForm(
                                of: written, lexicon: conversation.lexicon, normalize: true,
                                reading: conversation.textReading, phonemeMarkup: markup, dictionary: dictionary)
                            let said = WordAligner.words(in: form.spoken)
                            let timed = said.indices.map { WordTiming(word: said[$0].word, start: Double($0), end: Double($0) + 1) }
                            check(
                                form.writtenWords(timed).map(\.word) == WordAligner.words(in: written).map(\.word),
                                "written words lost in \(written) → \(form.spoken)")
                        }
                    }
                } catch {
                    check(false, "an accepted text's controls do not parse: \(error)")
                }
            }
        } catch let error as ConversationError {
            check(error.subject == "fuzz.json" && !error.reason.isEmpty, "conversation error \(error)")
        } catch {
            preconditionFailure("Conversation.parse threw \(type(of: error)), not ConversationError: \(error)")
        }
    }

    static func request(_ bytes: Data) {
        /// Decodes as the service does; a RequestBodyError is an answer (400 or 413), anything else is a defect.
        func decoded<T: Decodable>(_ kind: T.Type, budget: JSONBudget = JSONBudget()) -> T? {
            do {
                return try WireDecoding.decode(kind, from: bytes, budget: budget)
            } catch is RequestBodyError {
                return nil
            } catch {
                preconditionFailure("decoding \(kind) threw \(type(of: error)), not RequestBodyError: \(error)")
            }
        }
        if let render = decoded(RenderRequest.self, budget: JSONBudget(arrayKey: "messages", maxArrayElements: 1_000)) {
            // The budget counts what the decoder builds: exactly the decoded messages fit, one fewer does not.
            let count = render.messages.count
            check(
                decoded(RenderRequest.self, budget: JSONBudget(arrayKey: "messages", maxArrayElements: count)) != nil,
                "the budget refused \(count) messages with a limit of \(count)")
            if count > 0 {
                check(
                    decoded(RenderRequest.self, budget: JSONBudget(arrayKey: "messages", maxArrayElements: count - 1)) == nil,
                    "the budget let \(count) messages through a limit of \(count - 1)")
            }
        }
        _ = decoded(SpeechRequest.self)
        _ = decoded(OpenAISpeechRequest.self)
    }

    static func waveform(_ bytes: Data) {
        let peaks: WaveformPeaks
        do {
            peaks = try WaveformPeaks(datData: bytes)
        } catch let error as AudioError {
            check(error.code == .corrupt, "waveform error \(error.code)")
            return
        } catch {
            preconditionFailure("WaveformPeaks(datData:) threw \(type(of: error)): \(error)")
        }
        check(peaks.data.count == peaks.length * 2 * peaks.channels, "points and data disagree")
        // Written back at 16 bits and read again: the same peaks.
        do {
            let again = try WaveformPeaks(datData: peaks.datData(bits: 16))
            check(
                again.data == peaks.data && again.channels == peaks.channels && again.sampleRate == peaks.sampleRate
                    && again.samplesPerPixel == peaks.samplesPerPixel, "a .dat written back reads differently")
        } catch {
            preconditionFailure("a .dat written by datData(bits: 16) does not read back: \(error)")
        }
        if peaks.samplesPerPixel <= Int(Int32.max) / 3 {
            let coarse = peaks.coarsened(by: 3)
            check(coarse.length == (peaks.length + 2) / 3, "coarsened by 3: \(coarse.length) points from \(peaks.length)")
        }
    }

    static func multipart(_ bytes: Data) {
        var boundaries = ["chorus-fuzz-boundary"]
        if let line = bytes.split(separator: 0x0A, maxSplits: 1).first, let text = String(data: Data(line), encoding: .utf8) {
            boundaries.append("multipart/form-data; boundary=" + text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        for (index, given) in boundaries.enumerated() {
            do {
                let boundary = index == 0 ? given : try MultipartForm.boundary(of: given)
                let form = try MultipartForm(body: bytes, boundary: boundary, limits: .init(maxParts: 16, maxHeaderBytes: 1024))
                check(!form.parts.isEmpty && form.parts.count <= 16, "\(form.parts.count) parts")
                var end = 0
                for part in form.parts {
                    check(part.range.lowerBound >= end && part.range.upperBound <= bytes.count, "part \(part.name) at \(part.range) after \(end)")
                    check(!part.name.isEmpty, "a part without a name")
                    check(form.data(of: part).count == part.range.count, "content of \(part.name)")
                    end = part.range.upperBound
                }
                for alignment in [false, true] {
                    do {
                        let request = try TranscriptionRequest(form: form, alignment: alignment)
                        check(!request.model.isEmpty && request.model.count <= TranscriptionRequest.maxModelCharacters, "model \(request.model)")
                        check(
                            request.granularities.isEmpty == false && (alignment ? request.text?.isEmpty == false : request.text == nil),
                            "text or times")
                        if case .file(let data, _) = request.audio { check(!data.isEmpty, "an empty file accepted") }
                        // What a client writes from it reads back the same (unless a value holds the boundary written).
                        if bytes.range(of: Data("chorus-fuzz-written".utf8)) != nil { continue }
                        let written = request.form(boundary: "chorus-fuzz-written")
                        let again = try TranscriptionRequest(
                            form: try MultipartForm(body: written.body, boundary: "chorus-fuzz-written"), alignment: alignment)
                        check(again == request, "written and read again: \(again) is not \(request)")
                    } catch let error as RequestBodyError {
                        check(!error.message.isEmpty && error.field != nil, "a refusal without a message or field")
                    }
                }
            } catch let error as MultipartError {
                check(!error.reason.isEmpty, "an error without a reason")
            } catch {
                preconditionFailure("MultipartForm threw \(type(of: error)), not MultipartError: \(error)")
            }
        }
    }

    /// The first 8 bytes choose the stream the tag describes (frames, frame size, samples, bytes per frame);
    /// the rest is both an MP3 stream for the frame walker and the template tag frame.
    static func mp3tag(_ bytes: Data) {
        let input = [UInt8](bytes)
        let parameters = Array(input.prefix(8)) + [UInt8](repeating: 0, count: max(0, 8 - input.count))
        let stream = Array(input.dropFirst(8))
        do {
            let frames = try MP3Stream.frames(in: stream, subject: "fuzz")
            var offset = 0
            stream.withUnsafeBufferPointer { buffer in
                for frame in frames {
                    check(frame.lowerBound == offset && MP3Stream.frameLength(buffer, at: offset) == frame.count, "frame \(frame) at \(offset)")
                    offset = frame.upperBound
                }
            }
            check(offset == stream.count, "frames cover \(offset) of \(stream.count) bytes")
        } catch let error as AudioError {
            check(error.code == .encodingFailed, "frame walker error \(error.code)")
        } catch {
            preconditionFailure("MP3Stream.frames threw \(type(of: error)): \(error)")
        }
        let frameCount = (Int(parameters[0]) | Int(parameters[1]) << 8) % 5_000
        let samplesPerFrame = parameters[2] & 1 == 0 ? 1152 : 576
        let samples = (Int(parameters[3]) | Int(parameters[4]) << 8 | Int(parameters[5]) << 16) % (frameCount * samplesPerFrame + 5_000)
        let frameBytes = 24 + Int(parameters[6])
        let crc = stream.withUnsafeBufferPointer { MP3Stream.crc16(UInt16(parameters[7]), $0) }
        do {
            let tag = try MP3Stream.lameTag(
                template: stream, frameOffsets: (0..<frameCount).map { $0 * frameBytes },
                audioBytes: frameCount * frameBytes, samplesPerFrame: samplesPerFrame, samples: samples,
                musicCRC: crc, subject: "fuzz")
            check(tag.count == stream.count, "the tag changed size")
            guard
                let start = (0..<max(0, tag.count - 156)).first(where: {
                    tag[$0..<($0 + 4)].elementsEqual("Info".utf8) || tag[$0..<($0 + 4)].elementsEqual("Xing".utf8)
                })
            else { preconditionFailure("a rewritten tag lost its header") }
            func read32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(tag[at + $1]) } }
            check(read32(start + 8) == frameCount, "frame count \(read32(start + 8)), not \(frameCount)")
            check(read32(start + 12) == frameCount * frameBytes + tag.count, "stream size")
            let delay = Int(tag[start + 141]) << 4 | Int(tag[start + 142]) >> 4
            let padding = Int(tag[start + 142] & 0xF) << 8 | Int(tag[start + 143])
            check(frameCount * samplesPerFrame - delay - padding == samples, "delay \(delay) and padding \(padding) do not give \(samples) samples")
            check(UInt16(tag[start + 152]) << 8 | UInt16(tag[start + 153]) == crc, "music CRC")
            let tagCRC = tag.withUnsafeBufferPointer { MP3Stream.crc16(0, UnsafeBufferPointer(rebasing: $0[0..<(start + 154)])) }
            check(UInt16(tag[start + 154]) << 8 | UInt16(tag[start + 155]) == tagCRC, "tag CRC")
            check(
                zip(tag, stream).enumerated().allSatisfy { index, pair in
                    pair.0 == pair.1 || (start + 8..<start + 116).contains(index) || (start + 142...start + 143).contains(index)
                        || (start + 148..<start + 156).contains(index)
                }, "bytes outside the rewritten fields changed")
        } catch let error as AudioError {
            check(error.code == .encodingFailed, "tag rewrite error \(error.code)")
        } catch {
            preconditionFailure("MP3Stream.lameTag threw \(type(of: error)): \(error)")
        }
    }

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) { TextFuzzTarget.check(condition, message()) }
}

extension FuzzTarget {
    /// Whether `bytes` decode as audio with at least one frame (for checking the seed corpus).
    public static func decodes(_ bytes: Data) -> Bool {
        (try? AudioFileReader(data: bytes, name: "seed").readAll().frameCount).map { $0 > 0 } ?? false
    }
}
