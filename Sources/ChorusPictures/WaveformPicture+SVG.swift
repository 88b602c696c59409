import ChorusAudio

extension WaveformPicture {
    /// The picture as SVG text: one path per colour, an axis with labelled ticks, a legend.
    public func svg() -> String {
        let theme = options.theme
        var out =
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(options.width)" height="\#(options.height)" viewBox="0 0 \#(options.width) \#(options.height)" role="img" aria-label="Waveform">"#
        out += "\n" + #"<rect width="100%" height="100%" fill="\#(PictureTheme.hex(theme.background))"/>"#
        var paths: [PictureTheme.Colour: String] = [:]
        for (x, column) in columns.enumerated() {
            let (top, bottom) = extent(of: column)
            paths[colour(of: column), default: ""] += "M\(Double(x) + 0.5) \(top)V\(bottom + 1)"
        }
        for colour in paths.keys.sorted() {
            out += "\n" + #"<path stroke="\#(PictureTheme.hex(colour))" stroke-width="1" d="\#(paths[colour]!)"/>"#
        }
        if let music {
            out +=
                "\n"
                + #"<rect x="\#(music.lowerBound)" y="\#(musicRows.lowerBound)" width="\#(music.count)" height="\#(musicRows.count)" fill="\#(PictureTheme.hex(theme.music))"/>"#
        }
        let axisY = options.height - axisHeight
        out += "\n" + #"<line x1="0" y1="\#(axisY)" x2="\#(options.width)" y2="\#(axisY)" stroke="\#(PictureTheme.hex(theme.axis))"/>"#
        for tick in ticks() {
            out += "\n" + #"<line x1="\#(tick.x)" y1="\#(axisY)" x2="\#(tick.x)" y2="\#(axisY + 4)" stroke="\#(PictureTheme.hex(theme.axis))"/>"#
            out +=
                #"<text x="\#(tick.x + 2)" y="\#(options.height - 3)" font-family="sans-serif" font-size="11" fill="\#(PictureTheme.hex(theme.text))">\#(tick.label)</text>"#
        }
        var x = 4
        for (name, colour) in legend {
            out += "\n" + #"<rect x="\#(x)" y="5" width="10" height="10" fill="\#(PictureTheme.hex(colour))"/>"#
            out +=
                #"<text x="\#(x + 14)" y="14" font-family="sans-serif" font-size="12" fill="\#(PictureTheme.hex(theme.text))">\#(MarkupText.escape(name, quotes: true))</text>"#
            x += 24 + name.count * 7
        }
        return out + "\n</svg>\n"
    }
}
