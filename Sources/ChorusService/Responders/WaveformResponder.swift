import ChorusAudio
import ChorusSupport
import Foundation
import Hummingbird

/// `GET /v1/renders/{id}/waveform?samples_per_pixel=N | pixels_per_second=N &bits=8|16 &format=json|dat`:
/// audiowaveform-format peaks of the stored audio. A zoom that is a multiple of the stored base
/// (`RenderExecutor.waveformBase`) is derived from it exactly; any other zoom decodes the audio.
struct WaveformResponder: Sendable {
    let catalog: RenderCatalog
    let data: DataDirectory
    let pool: WorkerPool

    func respond(to request: Request, stored: StoredRender) async throws -> Response {
        let samplesPerPixel = try HTTPSupport.integer(request, "samples_per_pixel")
        let pixelsPerSecond = try HTTPSupport.integer(request, "pixels_per_second")
        if samplesPerPixel != nil && pixelsPerSecond != nil {
            throw ServiceError.badRequest("give samples_per_pixel or pixels_per_second, not both", field: "samples_per_pixel")
        }
        let bits = try HTTPSupport.integer(request, "bits") ?? WaveformOptions.defaultBits
        let format = HTTPSupport.query(request, "format")?.lowercased() ?? "json"
        guard format == "json" || format == "dat" else { throw ServiceError.badRequest("format: use json or dat", field: "format") }
        let zoom: WaveformZoom =
            pixelsPerSecond.map { .pixelsPerSecond($0) }
            ?? .samplesPerPixel(samplesPerPixel ?? WaveformOptions.defaultSamplesPerPixel)
        let rate = stored.manifest.sampleRate ?? 44_100
        let spp: Int
        do {
            try WaveformOptions(zoom: zoom, bits: bits).validate(sampleRate: rate)
            spp = try zoom.samplesPerPixel(sampleRate: rate)
        } catch let error as AudioError {
            throw ServiceError.badRequest("\(error.subject)\(error.value.map { " \($0)" } ?? ""): \(error.reason)", field: error.subject)
        }
        let waveformURL = data.render(stored.manifest.id).url(.waveform)
        let base = stored.waveformBase
        let derived = try await pool.run { () -> WaveformPeaks? in
            guard let base, spp % base == 0, let data = try? Data(contentsOf: waveformURL),
                let basePeaks = try? WaveformPeaks(datData: data), basePeaks.samplesPerPixel == base
            else { return nil }
            return basePeaks.coarsened(by: spp / base)
        }
        let peaks: WaveformPeaks
        if let derived {
            peaks = derived
        } else {
            let audio = try await catalog.localAudio(stored)
            peaks = try await pool.run { try WaveformPeaks.compute(fileAt: audio, zoom: .samplesPerPixel(spp)) }
        }
        return format == "dat"
            ? HTTPSupport.bytes(peaks.datData(bits: bits), contentType: "application/octet-stream")
            : HTTPSupport.bytes(peaks.jsonData(bits: bits), contentType: "application/json")
    }
}
