import ChorusAudio

/// Colours of a waveform picture. Speakers take the Okabe–Ito palette in order of first appearance
/// (distinguishable with the common colour-vision deficiencies; after seven speakers the colours repeat);
/// the silence between messages is drawn in a neutral grey, an intro and outro in their own colour, and the span of a
/// music bed as a band under the waveform.
public struct PictureTheme: Sendable, Equatable {
    /// A colour as 0xRRGGBB.
    public typealias Colour = UInt32

    public var background: Colour
    public var text: Colour
    public var axis: Colour
    public var gap: Colour
    /// The intro and outro.
    public var bookend: Colour
    /// The band under the span of a music bed.
    public var music: Colour
    /// Speaker colours in order; a picture without a timeline uses the first.
    public var palette: [Colour]

    public static let light = PictureTheme(
        background: 0xFFFFFF, text: 0x333333, axis: 0x999999, gap: 0xB8B8B8, bookend: 0x5A4E8C, music: 0x8CBF88,
        palette: [0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7, 0xD55E00, 0x56B4E9, 0xF0E442])
    public static let dark = PictureTheme(
        background: 0x1E1E1E, text: 0xDDDDDD, axis: 0x777777, gap: 0x5F5F5F, bookend: 0xB3A6E0, music: 0x6E9A6A,
        palette: [0x56B4E9, 0xE69F00, 0x009E73, 0xCC79A7, 0xD55E00, 0xF0E442, 0x0072B2])

    /// `light` or `dark`.
    public static func named(_ name: String) -> PictureTheme? {
        switch name.lowercased() {
        case "light": return .light
        case "dark": return .dark
        default: return nil
        }
    }

    /// The colour of speaker number `index` (in order of first appearance).
    public func speaker(_ index: Int) -> Colour { palette[index % palette.count] }

    /// `#rrggbb`.
    public static func hex(_ colour: Colour) -> String {
        let digits = Array("0123456789abcdef")
        return "#" + String((0..<6).reversed().map { digits[Int((colour >> (UInt32($0) * 4)) & 0xF)] })
    }
}
