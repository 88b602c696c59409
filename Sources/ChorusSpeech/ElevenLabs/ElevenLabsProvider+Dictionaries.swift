import ChorusAudio
import ChorusOutbound
import ChorusSupport
public import ChorusText
public import ChorusWire
import Crypto
import Foundation

/// IPA pronunciations through ElevenLabs pronunciation dictionaries: the words of a request that have one are sent
/// as written, with a dictionary of phoneme rules for them (`POST /v1/pronunciation-dictionaries/add-from-rules`, then
/// `pronunciation_dictionary_locators` in the request). ElevenLabs applies phoneme rules only with `eleven_flash_v2`,
/// `eleven_turbo_v2` and `eleven_monolingual_v1` (other models skip the word): with those models only; the others get
/// the entry's alias, as every provider without phoneme input does.
///
/// A dictionary is made once per set of rules (named by their digest) and its id kept for the process; at most three
/// locators go with a request, so one dictionary holds all of a request's rules.
extension ElevenLabsProvider {
    /// The models whose pronunciation dictionaries apply phoneme rules.
    static let phonemeModels: Set<String> = ["eleven_flash_v2", "eleven_turbo_v2", "eleven_monolingual_v1"]

    public func pronunciationDictionary(settings: [String: JSONValue]) -> (@Sendable (Pronunciation) -> Bool)? {
        guard Self.phonemeModels.contains(Self.model(settings)) else { return nil }
        return { _ in true }
    }

    /// The rules of `pronunciations` as ElevenLabs takes them, in a stable order.
    static func rules(_ pronunciations: [Pronunciation]) -> [JSONValue] {
        pronunciations.sorted { ($0.word, $0.ipa) < ($1.word, $1.ipa) }.map { pronunciation in
            .object([
                "type": .string("phoneme"), "string_to_replace": .string(pronunciation.word), "phoneme": .string(pronunciation.ipa),
                "alphabet": .string("ipa"), "case_sensitive": .bool(pronunciation.caseSensitive), "word_boundaries": .bool(true),
            ])
        }
    }

    /// The locator of a dictionary holding `pronunciations`' rules: one made before by this process (or being made for
    /// another request now: made once), else a new one.
    /// - Throws: `VoiceError` as for a synthesis (the dictionary's request failed or answered without an id); a failure
    ///   is not remembered, so a later request tries again.
    func dictionaryLocator(for pronunciations: [Pronunciation], key: String) async throws -> JSONValue {
        let rules = JSONValue.array(Self.rules(pronunciations))
        let digest = Hex.string(SHA256.hash(data: Data(rules.canonicalText.utf8)).prefix(8))
        return try await dictionaries.locator(digest) { try await makeDictionary(rules: rules, name: "chorus-\(digest)", key: key) }
    }

    private func makeDictionary(rules: JSONValue, name: String, key: String) async throws -> JSONValue {
        let body = JSONValue.object(["name": .string(name), "rules": rules, "description": .string("Pronunciations from a Chorus lexicon")])
        let response = try await http.send(
            .POST, ProviderHTTP.join(baseURL, "/v1/pronunciation-dictionaries/add-from-rules"),
            headers: [("xi-api-key", key)], json: Data(body.canonicalText.utf8))
        guard response.status == 200 || response.status == 201 else { throw error(for: response) }
        guard let object = ProviderHTTP.jsonObject(response.body), let id = object["id"] as? String, !id.isEmpty else {
            throw VoiceError(.invalidResponse, provider: self.id, message: "no dictionary id in the pronunciation dictionary's response")
        }
        var locator: [String: JSONValue] = ["pronunciation_dictionary_id": .string(id)]
        if let version = object["version_id"] as? String { locator["version_id"] = .string(version) }
        return .object(locator)
    }
}

/// The dictionaries this process made or is making, by their rules' digest (bounded: the oldest forgotten past `limit`).
final class PronunciationDictionaries: Sendable {
    private let known = Locked<(made: [String: Task<JSONValue, any Error>], order: [String])>(([:], []))
    let limit = 1_000

    /// The locator for `digest`: the one made, or being made, else what `make` makes.
    func locator(_ digest: String, make: @escaping @Sendable () async throws -> JSONValue) async throws -> JSONValue {
        let task = known.withLock { state -> Task<JSONValue, any Error> in
            if let existing = state.made[digest] { return existing }
            let made = Task { try await make() }
            state.made[digest] = made
            state.order.append(digest)
            while state.order.count > limit { state.made[state.order.removeFirst()] = nil }
            return made
        }
        do {
            return try await task.value
        } catch {
            known.withLock { state in
                if state.made[digest] == task {
                    state.made[digest] = nil
                    state.order.removeAll { $0 == digest }
                }
            }
            throw error
        }
    }
}
