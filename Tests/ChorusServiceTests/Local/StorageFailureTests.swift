import ChorusAudio
import ChorusConversation
import Foundation
import Testing

@testable import ChorusService

/// A full or failing disk is the server's condition: `507 insufficient_storage` with `Retry-After`, never a
/// `422` blaming the request or a `500`, and never a server path. (The whole path on a real full tmpfs:
/// Benchmarks/reliability/disk_full.py, docs/reliability.md.)
@Suite("Service: storage failures")
struct StorageFailureTests {
    @Test("write failures of every kind become 507, in a request and in a render; other errors are left to their own mapping")
    func mapping() {
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
            let mapped = ServiceError(error, during: .request)
            #expect(mapped.status.code == 507 && mapped.body.error.code == "insufficient_storage")
            #expect(mapped.body.error.message.contains(full ? "storage is full" : "cannot write"))
            #expect(mapped.headers[.retryAfter] != nil)
            #expect(!mapped.body.error.message.contains("/var/lib"))
            // A failed render goes through the same rule.
            #expect(ServiceError(error, during: .render).status.code == 507)
        }
        // A damaged clip is the request's fault in a render (422), the service's anywhere else (500); a dropped
        // connection is no storage failure.
        #expect(ServiceError(AudioError(.corrupt, subject: "messages[0]", reason: "damaged"), during: .render).status.code == 422)
        #expect(ServiceError(AudioError(.corrupt, subject: "a clip", reason: "damaged"), during: .request).status.code == 500)
        #expect(ServiceError(POSIXError(.ECONNRESET), during: .request).body.error.code == "internal")
    }
}
