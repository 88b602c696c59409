/// One `Range: bytes=…` request against a body of `size` bytes (RFC 9110 §14), resolved to the bytes to send.
enum ByteRange: Equatable {
    /// Send everything (no Range, or one this server ignores: several ranges, unknown units, bad syntax).
    case whole
    /// Send `range` with 206.
    case part(ClosedRange<Int>)
    /// Nothing of the body can satisfy it: 416.
    case unsatisfiable

    init(header: String?, size: Int) {
        guard let header = header?.trimmingCharacters(in: .whitespaces), header.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole   // several ranges: answered with the whole body, which RFC 9110 allows
            return
        }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        let digits: (String) -> Bool = { !$0.isEmpty && $0.count <= 18 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
        if first.isEmpty {
            guard digits(last), let suffix = Int(last) else { self = .whole; return }
            guard suffix > 0, size > 0 else { self = .unsatisfiable; return }
            self = .part(max(0, size - suffix)...(size - 1))
            return
        }
        guard digits(first), let start = Int(first) else { self = .whole; return }
        if last.isEmpty {
            self = start < size ? .part(start...(size - 1)) : .unsatisfiable
            return
        }
        guard digits(last), let end = Int(last), end >= start else { self = .whole; return }
        self = start < size ? .part(start...min(end, size - 1)) : .unsatisfiable
    }
}
