import Foundation

/// Word times from the alignment heads' cross-attention, as OpenAI's Whisper finds them (`find_alignment`): the
/// heads' attention of each token over the audio's frames (softmax over the frames that hold audio), standardized
/// across tokens, median-filtered along time (7 frames), averaged over heads; then the cheapest monotonic path
/// through tokens × frames (dynamic time warping), and each word starts where the path enters its first token's
/// row. Encoder frames are 20 ms.
enum WhisperAlignment {
    static let frameSeconds = 0.02
    static let medianWidth = 7

    /// When each row's token is spoken: `weights[head][row]` holds the head's attention (over all of the encoder's
    /// frames, `frames` of which are audio) for the row's input token, which predicts the next token. Returns, per row,
    /// the time (seconds) at which the path enters it, and one more: where it leaves the last row.
    /// - Parameters:
    ///   - weights: heads × rows × `stride` values.
    ///   - rows: Rows to align (the tokens from the no-timestamps token on).
    ///   - firstRow: The first row of `weights` to align (rows before it, the start-of-transcript sequence, are
    ///     standardized with the others but not aligned).
    static func rowTimes(weights: [[Float]], totalRows: Int, firstRow: Int, stride: Int, frames: Int) -> [Double] {
        let frames = max(1, min(frames, stride))
        let rows = totalRows - firstRow
        guard !weights.isEmpty, rows > 0 else { return [] }
        let matrix = self.matrix(weights: weights, totalRows: totalRows, firstRow: firstRow, stride: stride, frames: frames)
        return times(matrix, frames: frames, rows: 0..<rows, columns: 0..<frames)
    }

    /// The rows' attention, made comparable (`rowTimes`): softmax over the `frames` that hold audio, standardized across
    /// all `totalRows`, median-filtered, averaged over heads; rows from `firstRow` on, `frames` values each.
    static func matrix(weights: [[Float]], totalRows: Int, firstRow: Int, stride: Int, frames: Int) -> [Float] {
        let heads = weights.count
        let frames = max(1, min(frames, stride))
        let rows = totalRows - firstRow
        guard heads > 0, rows > 0 else { return [] }
        var matrix = [Float](repeating: 0, count: rows * frames)
        var normalized = [Float](repeating: 0, count: totalRows * frames)
        for head in 0..<heads {
            // Softmax over the audio's frames: the weights renormalized over them.
            for row in 0..<totalRows {
                var sum: Float = 0
                for frame in 0..<frames { sum += weights[head][row * stride + frame] }
                let scale = sum > 0 ? 1 / sum : 0
                for frame in 0..<frames { normalized[row * frames + frame] = weights[head][row * stride + frame] * scale }
            }
            // Standardized across tokens, frame by frame.
            for frame in 0..<frames {
                var mean: Float = 0
                for row in 0..<totalRows { mean += normalized[row * frames + frame] }
                mean /= Float(totalRows)
                var variance: Float = 0
                for row in 0..<totalRows {
                    let difference = normalized[row * frames + frame] - mean
                    variance += difference * difference
                }
                let deviation = (variance / Float(totalRows)).squareRoot()
                let scale = deviation > 0 ? 1 / deviation : 0
                for row in 0..<totalRows { normalized[row * frames + frame] = (normalized[row * frames + frame] - mean) * scale }
            }
            // Median filter along time, then summed over heads (the mean's scale does not move the path).
            for row in 0..<rows {
                let filtered = medianFiltered(normalized[((firstRow + row) * frames)..<((firstRow + row + 1) * frames)], width: medianWidth)
                for frame in 0..<frames { matrix[row * frames + frame] += filtered[frame] / Float(heads) }
            }
        }
        return matrix
    }

    /// When each of `rows` of `matrix` (`frames` columns a row) is entered by the cheapest monotonic path through them
    /// within `columns` (encoder frames), in seconds from the window's start, and one more: where it leaves the last row. A text known to
    /// be spoken within certain frames (one message of several in a window) is timed within them.
    static func times(_ matrix: [Float], frames: Int, rows: Range<Int>, columns: Range<Int>) -> [Double] {
        guard !rows.isEmpty, !columns.isEmpty, rows.upperBound * frames <= matrix.count, columns.upperBound <= frames else { return [] }
        var cost = [Float](repeating: 0, count: rows.count * columns.count)
        for (row, source) in rows.enumerated() {
            for (column, frame) in columns.enumerated() { cost[row * columns.count + column] = -matrix[source * frames + frame] }
        }
        let path = warp(cost: cost, rows: rows.count, columns: columns.count)
        // The time at which the path first reaches each row, and the end of the last row.
        var times = [Double](repeating: 0, count: rows.count + 1)
        var seen = -1
        for (row, column) in path where row > seen {
            times[row] = Double(columns.lowerBound + column) * frameSeconds
            seen = row
        }
        times[rows.count] = Double(columns.lowerBound + (path.last?.1 ?? 0)) * frameSeconds + frameSeconds
        return times
    }

    /// `values` median-filtered with `width` (odd), reflected at both ends (as OpenAI's `median_filter`).
    static func medianFiltered(_ values: ArraySlice<Float>, width: Int) -> [Float] {
        let count = values.count
        let half = width / 2
        let base = values.startIndex
        guard count > half else { return Array(values) }
        var result = [Float](repeating: 0, count: count)
        // Each window sorted by insertion (7 values: `sort()`'s general algorithm was 2.6 % of a long file's time).
        var window = [Float](repeating: 0, count: width)
        window.withUnsafeMutableBufferPointer { window in
            for index in 0..<count {
                for slot in 0..<width {
                    var position = index + slot - half
                    if position < 0 { position = -position }
                    if position >= count { position = 2 * (count - 1) - position }
                    let value = values[base + position]
                    var place = slot
                    while place > 0 && window[place - 1] > value {
                        window[place] = window[place - 1]
                        place -= 1
                    }
                    window[place] = value
                }
                result[index] = window[half]
            }
        }
        return result
    }

    /// The cheapest path from (0, 0) to (rows − 1, columns − 1) through `cost` (rows × columns), moving down, right or
    /// diagonally (OpenAI's `dtw`): each step's (row, column), in order.
    static func warp(cost: [Float], rows: Int, columns: Int) -> [(Int, Int)] {
        let width = columns + 1
        var total = [Float](repeating: .infinity, count: (rows + 1) * width)
        var trace = [UInt8](repeating: 0, count: (rows + 1) * width)
        total[0] = 0
        for column in 1...columns {
            for row in 1...rows {
                let diagonal = total[(row - 1) * width + column - 1]
                let up = total[(row - 1) * width + column]
                let left = total[row * width + column - 1]
                // Ties go as OpenAI's `dtw_cpu` sends them: diagonal only if strictly cheapest, then up, else left.
                let (best, step): (Float, UInt8) =
                    diagonal < up && diagonal < left
                    ? (diagonal, 0)
                    : (up < diagonal && up < left ? (up, 1) : (left, 2))
                total[row * width + column] = cost[(row - 1) * columns + column - 1] + best
                trace[row * width + column] = step
            }
        }
        var row = rows
        var column = columns
        var path: [(Int, Int)] = []
        while row > 0 && column > 0 {
            path.append((row - 1, column - 1))
            switch trace[row * width + column] {
            case 0:
                row -= 1
                column -= 1
            case 1: row -= 1
            default: column -= 1
            }
        }
        return path.reversed()
    }
}
