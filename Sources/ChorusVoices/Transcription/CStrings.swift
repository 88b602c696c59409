import Foundation

/// C strings made for calls into C, freed together when this goes.
final class CStrings {
    private var made: [UnsafeMutablePointer<CChar>] = []

    subscript(_ text: String) -> UnsafePointer<CChar> {
        let copy = strdup(text)!
        made.append(copy)
        return UnsafePointer(copy)
    }

    deinit {
        for pointer in made { Foundation.free(pointer) }
    }
}
