public import ChorusWire
public import Foundation

extension Timeline {
    /// Builds the timeline of `segments` placed in `samples` frames of output.
    package init(
        format: AudioFormat, samples: Int, gapMs: Int, segments: [Segment], intro: Bookend? = nil, outro: Bookend? = nil,
        music: Music? = nil, madeVoices: [String: MadeVoiceInfo]? = nil
    ) {
        var speakers: [Speaker] = []
        var positions: [String: Int] = [:]
        for segment in segments {
            let position =
                positions[segment.speaker]
                ?? {
                    speakers.append(Speaker(name: segment.speaker, seconds: 0, segments: []))
                    positions[segment.speaker] = speakers.count - 1
                    return speakers.count - 1
                }()
            speakers[position].segments.append(segment.index)
            speakers[position].seconds += Double(segment.endSample - segment.startSample)
        }
        for index in speakers.indices {
            speakers[index].seconds = format.roundedSeconds(frames: Int(speakers[index].seconds))
        }
        self.init(
            duration: format.roundedSeconds(frames: samples), samples: samples, sampleRate: format.sampleRate,
            channels: format.channels, gapMs: gapMs, segments: segments, speakers: speakers, intro: intro, outro: outro,
            music: music, madeVoices: madeVoices?.isEmpty == false ? madeVoices : nil)
    }

    /// Pretty-printed JSON, members in the documented order; optional fields are omitted when absent.
    public func jsonData() -> Data {
        func wordNodes(_ words: [Word]) -> OrderedJSON {
            .array(words.map { .object([("word", .string($0.word)), ("start", .number($0.start)), ("end", .number($0.end))]) })
        }
        func bookendNode(_ bookend: Bookend) -> OrderedJSON {
            var members: [(String, OrderedJSON)] = [
                ("start", .number(bookend.start)), ("end", .number(bookend.end)),
                ("start_sample", .integer(bookend.startSample)), ("end_sample", .integer(bookend.endSample)),
            ]
            if let speaker = bookend.speaker { members.append(("speaker", .string(speaker))) }
            if let text = bookend.text { members.append(("text", .string(text))) }
            members.append(("source", .string(bookend.source)))
            members.append(("gain_db", .number(bookend.gainDB)))
            if let voice = bookend.voice { members.append(("voice", .string(voice))) }
            if let words = bookend.words { members.append(("words", wordNodes(words))) }
            return .object(members)
        }
        let segmentNodes: [OrderedJSON] = segments.map { segment in
            var members: [(String, OrderedJSON)] = [
                ("index", .integer(segment.index)), ("speaker", .string(segment.speaker)),
                ("start", .number(segment.start)), ("end", .number(segment.end)),
                ("start_sample", .integer(segment.startSample)), ("end_sample", .integer(segment.endSample)),
            ]
            if let text = segment.text { members.append(("text", .string(text))) }
            members.append(("source", .string(segment.source)))
            members.append(("gain_db", .number(segment.gainDB)))
            if let voice = segment.voice { members.append(("voice", .string(voice))) }
            if let fallback = segment.fallback { members.append(("fallback", .bool(fallback))) }
            if let words = segment.words { members.append(("words", wordNodes(words))) }
            if let transcribed = segment.transcribed { members.append(("transcribed", .bool(transcribed))) }
            return .object(members)
        }
        var members: [(String, OrderedJSON)] = [
            ("duration", .number(duration)), ("samples", .integer(samples)), ("sample_rate", .integer(sampleRate)),
            ("channels", .integer(channels)), ("gap_ms", .integer(gapMs)), ("segments", .array(segmentNodes)),
            (
                "speakers",
                .array(
                    speakers.map {
                        .object([
                            ("name", .string($0.name)), ("seconds", .number($0.seconds)),
                            ("segments", .array($0.segments.map { .integer($0) })),
                        ])
                    })
            ),
        ]
        if let intro { members.append(("intro", bookendNode(intro))) }
        if let outro { members.append(("outro", bookendNode(outro))) }
        if let music {
            members.append(
                (
                    "music",
                    .object([
                        ("start", .number(music.start)), ("end", .number(music.end)),
                        ("start_sample", .integer(music.startSample)), ("end_sample", .integer(music.endSample)),
                        ("source", .string(music.source)), ("level_lu", .number(music.levelLU)), ("duck_db", .number(music.duckDB)),
                        ("gain_db", .number(music.gainDB)), ("passes", .integer(music.passes)),
                    ])
                ))
        }
        if let madeVoices {
            members.append(
                (
                    "made_voices",
                    .object(
                        madeVoices.sorted { $0.key < $1.key }.map { id, made in
                            var fields: [(String, OrderedJSON)] = [
                                ("made_by", .string(made.madeBy)), ("created", .string(made.created)), ("people", .integer(made.people)),
                                ("recordings", .integer(made.recordings)), ("speech_seconds", .number(made.speechSeconds)),
                                ("similarity", .number(made.similarity)), ("nearest_stock_similarity", .number(made.nearestStockSimilarity)),
                            ]
                            if let errors = made.wordErrorRate { fields.append(("word_error_rate", .number(errors))) }
                            return (id, .object(fields))
                        })
                ))
        }
        return OrderedJSON.object(members).data()
    }
}
