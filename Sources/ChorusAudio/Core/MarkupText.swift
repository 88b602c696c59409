/// Text placed inside markup Chorus writes (WebVTT cues, SVG, the player's HTML): `&`, `<`, `>`
/// escaped, and `"` too where the text may land in an attribute.
package enum MarkupText {
    package static func escape(_ text: String, quotes: Bool) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
