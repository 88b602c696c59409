import CGD
import ChorusAudio
public import Foundation

extension WaveformPicture {
    /// The picture as PNG, drawn with libgd (text with FreeType and DejaVu Sans when installed, else
    /// libgd's built-in font).
    /// - Throws: `AudioError.encodingFailed` when libgd cannot make the image.
    public func png() throws -> Data {
        let image = try GDImage(width: options.width, height: options.height)
        let theme = options.theme
        image.fill(theme.background)
        for (x, column) in columns.enumerated() {
            let (top, bottom) = extent(of: column)
            image.line(x, top, x, bottom, colour(of: column))
        }
        if let music {
            image.rectangle(x: music.lowerBound, y: musicRows.lowerBound, width: music.count, height: musicRows.count, colour: theme.music)
        }
        let axisY = options.height - axisHeight
        image.line(0, axisY, options.width - 1, axisY, theme.axis)
        for tick in ticks() {
            image.line(tick.x, axisY, tick.x, axisY + 4, theme.axis)
            image.text(tick.label, x: tick.x + 2, baseline: options.height - 4, size: 8, colour: theme.text)
        }
        var x = 4
        for (name, colour) in legend {
            image.rectangle(x: x, y: 5, width: 10, height: 10, colour: colour)
            x = image.text(name, x: x + 14, baseline: 14, size: 9, colour: theme.text) + 10
        }
        return try image.pngData()
    }
}

/// One libgd true-colour image (`deinit` destroys it).
final class GDImage {
    private let image: gdImagePtr
    private static let fontFile = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    /// FreeType's font cache, set up once before any thread draws text.
    private static let fonts: Bool = gdFontCacheSetup() == 0 && FileManager.default.fileExists(atPath: fontFile)

    init(width: Int, height: Int) throws {
        guard let image = gdImageCreateTrueColor(Int32(width), Int32(height)) else {
            throw AudioError(.encodingFailed, subject: "png", reason: "libgd cannot make a \(width)×\(height) image")
        }
        self.image = image
    }

    deinit { gdImageDestroy(image) }

    func fill(_ colour: PictureTheme.Colour) {
        gdImageFilledRectangle(image, 0, 0, image.pointee.sx - 1, image.pointee.sy - 1, Int32(colour))
    }

    func line(_ x1: Int, _ y1: Int, _ x2: Int, _ y2: Int, _ colour: PictureTheme.Colour) {
        gdImageLine(image, Int32(x1), Int32(y1), Int32(x2), Int32(y2), Int32(colour))
    }

    func rectangle(x: Int, y: Int, width: Int, height: Int, colour: PictureTheme.Colour) {
        gdImageFilledRectangle(image, Int32(x), Int32(y), Int32(x + width - 1), Int32(y + height - 1), Int32(colour))
    }

    /// Draws `text`; returns the x where it ends.
    @discardableResult
    func text(_ text: String, x: Int, baseline: Int, size: Double, colour: PictureTheme.Colour) -> Int {
        if Self.fonts {
            var box = [Int32](repeating: 0, count: 8)
            let failed = text.withCString {
                gdImageStringFT(image, &box, Int32(colour), Self.fontFile, size, 0, Int32(x), Int32(baseline), UnsafeMutablePointer(mutating: $0))
            }
            if failed == nil { return Int(box[2]) }
        }
        let ascii = String(text.unicodeScalars.map { $0.isASCII && $0.value >= 32 ? Character($0) : "?" })
        let font = gdFontGetSmall()!
        ascii.withCString {
            gdImageString(
                image, font, Int32(x), Int32(baseline) - font.pointee.h + 2,
                UnsafeMutablePointer(mutating: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self)), Int32(colour))
        }
        return x + Int(font.pointee.w) * ascii.count
    }

    func pngData() throws -> Data {
        var size: Int32 = 0
        guard let bytes = gdImagePngPtr(image, &size), size > 0 else {
            throw AudioError(.encodingFailed, subject: "png", reason: "libgd could not write the PNG")
        }
        defer { gdFree(bytes) }
        return Data(bytes: bytes, count: Int(size))
    }
}
