import ChorusAudio
@testable import ChorusService
import ChorusVoices
import Foundation
import Testing

/// A full or failing disk is the server's condition: `507 insufficient_storage` with `Retry-After`, never a
/// `422` blaming the request or a `500`, and never a server path. (The whole path on a real full tmpfs:
/// Benchmarks/reliability/disk_full.py, docs/reliability.md.)
@Suite("Service: storage failures")
struct StorageFailureTests {
    @Test("write failures of every kind become 507; other errors are left to their own mapping")
    func mapping() throws {
        let path = "/var/lib/chorus/renders/abc/audio.mp3"
        let cases: [(any Error, Bool)] = [
            (AudioError(.writeFailed, subject: path, reason: "cannot write", underlying: "No space left on device"), true),
            (AudioError(.writeFailed, subject: path, reason: "cannot finish the file"), false),
            (CocoaError(.fileWriteOutOfSpace, userInfo: [NSFilePathErrorKey: path]), true),
            (CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]), false),
            (POSIXError(.ENOSPC), true),
            (POSIXError(.EDQUOT), true),
            (POSIXError(.EROFS), false),
        ]
        for (error, full) in cases {
            let mapped = try #require(ServiceError.storageFailure(error), "\(error)")
            #expect(mapped.status.code == 507 && mapped.body.error.code == "insufficient_storage")
            #expect(mapped.body.error.message.contains(full ? "storage is full" : "cannot write"))
            #expect(mapped.headers[.retryAfter] != nil)
            #expect(!mapped.body.error.message.contains("/var/lib"))
            // The executor's mapping of a failed render goes through the same rule.
            #expect(RenderExecutor.serviceError(for: error).status.code == 507)
        }
        #expect(ServiceError.storageFailure(AudioError(.corrupt, subject: "a clip", reason: "damaged")) == nil)
        #expect(ServiceError.storageFailure(POSIXError(.ECONNRESET)) == nil)
        #expect(RenderExecutor.serviceError(for: AudioError(.corrupt, subject: "messages[0]", reason: "damaged")).status.code == 422)
    }
}
