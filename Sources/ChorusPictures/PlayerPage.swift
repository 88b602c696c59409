import ChorusAudio
public import Foundation

/// One HTML page that plays a render: the audio, the waveform on a canvas in speaker colours (the same
/// palette as `WaveformPicture`), the current speaker named and highlighted, a speaker list that jumps to
/// that speaker's next message, the transcript with the current message and word highlighted, playback
/// speed 1×–2×, keyboard control (space, ←/→) and ARIA labels; `aria-current="true"` marks the current
/// speaker, message and word. No build step and no outside network: everything is inline or at the URLs given.
///
/// ```swift
/// let html = PlayerPage.html(audio: .url("/v1/renders/…/audio?exp=…&sig=…"), peaks: .url(…), timeline: .url(…))
/// let file = PlayerPage.html(audio: .inline(mp3, mimeType: "audio/mpeg"), peaks: .inline(peaksJSON), timeline: .inline(timelineJSON))
/// ```
public enum PlayerPage {
    /// Where the page finds something: a URL it fetches, or the bytes themselves.
    public enum Source: Sendable {
        case url(String)
        /// JSON for peaks and timeline; any audio with its MIME type (made a `data:` URL).
        case inline(Data, mimeType: String = "application/json")
    }

    /// The page. `title` is shown and escaped.
    public static func html(audio: Source, peaks: Source?, timeline: Source, title: String = "Conversation") -> String {
        var config: [String: Any] = [:]
        switch audio {
        case .url(let url): config["audio"] = url
        case .inline(let data, let mimeType): config["audio"] = "data:\(mimeType);base64," + data.base64EncodedString()
        }
        for (key, source) in [("peaks", peaks), ("timeline", timeline)] {
            switch source {
            case .url(let url)?: config[key + "URL"] = url
            case .inline(let data, _)?: config[key] = try? JSONSerialization.jsonObject(with: data)
            case nil: break
            }
        }
        let json =
            (try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        // `</` cannot appear inside the script element.
        let safe = json.replacingOccurrences(of: "</", with: "<\\/")
        return template.replacingOccurrences(of: "{{TITLE}}", with: MarkupText.escape(title, quotes: true))
            .replacingOccurrences(of: "{{CONFIG}}", with: safe)
    }

    static let template = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{TITLE}}</title>
        <link rel="icon" href="data:,">
        <style>
          :root { --bg: #fff; --fg: #222; --muted: #666; --line: #e4e4e4; --accent: #0072B2; }
          @media (prefers-color-scheme: dark) { :root { --bg: #1e1e1e; --fg: #eee; --muted: #999; --line: #333; } }
          body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
          main { max-width: 960px; margin: 0 auto; padding: 20px; }
          h1 { font-size: 20px; margin: 0 0 12px; }
          .controls { display: flex; align-items: center; gap: 12px; margin: 8px 0; flex-wrap: wrap; }
          button { font: inherit; border: 1px solid var(--line); background: transparent; color: var(--fg); border-radius: 6px; padding: 4px 10px; cursor: pointer; }
          button[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
          #play { width: 44px; font-size: 18px; }
          #time { font-variant-numeric: tabular-nums; color: var(--muted); }
          canvas { width: 100%; height: 120px; display: block; cursor: pointer; border-radius: 6px; background: var(--line); }
          #now { margin: 10px 0; min-height: 1.5em; }
          #speakers { list-style: none; padding: 0; display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 16px; }
          #speakers button[aria-current="true"] { outline: 3px solid var(--fg); font-weight: 600; }
          .dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 6px; }
          #transcript { padding-left: 0; list-style: none; }
          #transcript li { padding: 6px 10px; border-left: 4px solid transparent; border-radius: 4px; cursor: pointer; }
          #transcript li[aria-current="true"] { background: var(--line); }
          .who { font-weight: 600; margin-right: 6px; }
          .word[aria-current="true"] { background: #F0E442; color: #000; border-radius: 3px; }
        </style>
        </head>
        <body>
        <main aria-label="Conversation player">
          <h1>{{TITLE}}</h1>
          <audio id="audio" preload="auto"></audio>
          <div class="controls" role="group" aria-label="Playback">
            <button id="play" aria-label="Play">▶</button>
            <span id="time">0:00 / 0:00</span>
            <span role="group" aria-label="Playback speed" id="speeds"></span>
          </div>
          <canvas id="wave" height="120" tabindex="0" role="slider" aria-label="Position in the conversation" aria-valuemin="0" aria-valuemax="0" aria-valuenow="0"></canvas>
          <p id="now" aria-live="polite"></p>
          <ul id="speakers" aria-label="Speakers: jump to the speaker's next message"></ul>
          <ol id="transcript" aria-label="Transcript"></ol>
        </main>
        <script type="application/json" id="chorus-config">{{CONFIG}}</script>
        <script>
        (async () => {
          const palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442"];
          const config = JSON.parse(document.getElementById("chorus-config").textContent);
          const load = async (key) => config[key] || (config[key + "URL"] ? (await fetch(config[key + "URL"])).json() : null);
          // Usable once the timeline is here; the waveform fills in when the peaks arrive.
          const peaksLoading = load("peaks");
          const timeline = await load("timeline");
          let peaks = null;
          const audio = document.getElementById("audio"), canvas = document.getElementById("wave");
          const segments = timeline.segments, speakers = timeline.speakers.map(s => s.name);
          const colour = name => palette[speakers.indexOf(name) % palette.length];
          const clock = t => { t = Math.max(0, Math.floor(t)); return Math.floor(t / 60) + ":" + String(t % 60).padStart(2, "0"); };
          audio.addEventListener("loadedmetadata", () => { document.body.dataset.audioReadyAt = performance.now().toFixed(1); }, { once: true });
          audio.src = config.audio;
          const speakerList = document.getElementById("speakers"), transcript = document.getElementById("transcript");
          const speakerButtons = speakers.map(name => {
            const item = document.createElement("li"), button = document.createElement("button");
            button.innerHTML = `<span class="dot" style="background:${colour(name)}"></span>`;
            button.append(name);
            button.dataset.speaker = name;
            button.setAttribute("aria-current", "false");
            button.setAttribute("aria-label", `Jump to ${name}'s next message`);
            button.addEventListener("click", () => {
              const now = audio.currentTime;
              const mine = segments.filter(s => s.speaker === name);
              const next = mine.find(s => s.start > now + 0.05) || mine[0];
              if (next) { audio.currentTime = next.start; update(); }
            });
            item.append(button); speakerList.append(item);
            return button;
          });
          const messageItems = segments.map(segment => {
            const item = document.createElement("li");
            item.dataset.index = segment.index;
            item.setAttribute("aria-current", "false");
            item.style.borderLeftColor = colour(segment.speaker);
            const who = document.createElement("span"); who.className = "who"; who.textContent = segment.speaker + ":"; item.append(who);
            // The message's own text, punctuation and all, with each timed word wrapped where it occurs.
            const words = segment.words || [], text = segment.text || "";
            let cursor = 0;
            words.forEach(word => {
              const span = document.createElement("span");
              span.className = "word"; span.textContent = word.word; span.dataset.start = word.start; span.dataset.end = word.end;
              span.setAttribute("aria-current", "false");
              // A word goes to where it is spoken (the message's own click goes to its start).
              span.addEventListener("click", event => { event.stopPropagation(); audio.currentTime = word.start; update(); });
              const at = text.indexOf(word.word, cursor);
              if (at >= 0) { item.append(text.slice(cursor, at), span); cursor = at + word.word.length; }
              else { item.append(cursor > 0 || item.childNodes.length > 1 ? " " : "", span); }
            });
            item.append(text.slice(cursor));
            item.addEventListener("click", () => { audio.currentTime = segment.start; update(); });
            transcript.append(item);
            return item;
          });
          const speeds = document.getElementById("speeds");
          [1, 1.25, 1.5, 2].forEach(rate => {
            const button = document.createElement("button");
            button.textContent = rate + "×"; button.dataset.rate = rate;
            button.setAttribute("aria-pressed", rate === 1 ? "true" : "false");
            button.setAttribute("aria-label", `Speed ${rate} times`);
            button.addEventListener("click", () => {
              audio.playbackRate = rate;
              speeds.querySelectorAll("button").forEach(b => b.setAttribute("aria-pressed", String(Number(b.dataset.rate) === rate)));
            });
            speeds.append(button);
          });
          const duration = timeline.duration;
          canvas.setAttribute("aria-valuemax", duration.toFixed(1));
          function draw() {
            const width = canvas.width = canvas.clientWidth * (window.devicePixelRatio || 1), height = canvas.height;
            const context = canvas.getContext("2d");
            context.clearRect(0, 0, width, height);
            const played = audio.currentTime / duration;
            const points = peaks ? peaks.length : 0, scale = peaks && peaks.bits === 8 ? 128 : 32768;
            for (let x = 0; x < width; x++) {
              const seconds = (x + 0.5) / width * duration;
              const segment = segments.find(s => s.start <= seconds && seconds < s.end);
              context.fillStyle = segment ? colour(segment.speaker) : "#999";
              context.globalAlpha = x / width <= played ? 1 : 0.45;
              let low = 0, high = 0;
              if (points) {
                const first = Math.floor(x / width * points), last = Math.max(first + 1, Math.floor((x + 1) / width * points));
                low = Infinity; high = -Infinity;
                for (let p = first; p < last && p < points; p++) { low = Math.min(low, peaks.data[2 * p]); high = Math.max(high, peaks.data[2 * p + 1]); }
                if (!isFinite(low)) { low = 0; high = 0; }
              }
              const half = height * 0.45, top = height / 2 - high / scale * half, bottom = height / 2 - low / scale * half;
              context.fillRect(x, Math.min(top, height / 2 - 0.5), 1, Math.max(1, bottom - top));
            }
            context.globalAlpha = 1;
            context.fillStyle = getComputedStyle(document.body).color;
            context.fillRect(Math.round(played * width) - 1, 0, 2, height);
          }
          let current = { speaker: null, message: -1, word: null };
          function update() {
            const t = audio.currentTime;
            const segment = segments.find(s => s.start <= t && t < s.end) || null;
            const speaker = segment ? segment.speaker : null;
            if (speaker !== current.speaker) {
              speakerButtons.forEach(b => b.setAttribute("aria-current", String(b.dataset.speaker === speaker)));
              document.getElementById("now").textContent = speaker ? "Now speaking: " + speaker : "";
              current.speaker = speaker;
            }
            const message = segment ? segments.indexOf(segment) : -1;
            if (message !== current.message) {
              messageItems.forEach((item, index) => item.setAttribute("aria-current", String(index === message)));
              if (message >= 0 && !audio.paused) messageItems[message].scrollIntoView({ block: "nearest" });
              current.message = message;
            }
            let word = null;
            if (message >= 0) {
              word = Array.from(messageItems[message].querySelectorAll(".word")).find(w => Number(w.dataset.start) <= t && t < Number(w.dataset.end)) || null;
            }
            if (word !== current.word) {
              if (current.word) current.word.setAttribute("aria-current", "false");
              if (word) word.setAttribute("aria-current", "true");
              current.word = word;
            }
            document.getElementById("time").textContent = clock(t) + " / " + clock(duration);
            canvas.setAttribute("aria-valuenow", t.toFixed(1));
            canvas.setAttribute("aria-valuetext", clock(t) + (speaker ? ", " + speaker : ""));
            draw();
          }
          const play = document.getElementById("play");
          const toggle = () => audio.paused ? audio.play() : audio.pause();
          play.addEventListener("click", toggle);
          audio.addEventListener("play", () => { play.textContent = "❚❚"; play.setAttribute("aria-label", "Pause"); });
          audio.addEventListener("pause", () => { play.textContent = "▶"; play.setAttribute("aria-label", "Play"); });
          audio.addEventListener("timeupdate", update);
          audio.addEventListener("seeked", update);
          const seekTo = event => { const box = canvas.getBoundingClientRect(); audio.currentTime = (event.clientX - box.left) / box.width * duration; update(); };
          canvas.addEventListener("click", seekTo);
          document.addEventListener("keydown", event => {
            if (event.key === " " && event.target.tagName !== "BUTTON") { event.preventDefault(); toggle(); }
            else if (event.key === "ArrowRight") { audio.currentTime = Math.min(duration, audio.currentTime + 5); update(); }
            else if (event.key === "ArrowLeft") { audio.currentTime = Math.max(0, audio.currentTime - 5); update(); }
          });
          window.addEventListener("resize", draw);
          (function tick() { if (!audio.paused) update(); requestAnimationFrame(tick); })();
          update();
          window.chorusPlayer = { audio, update, segments, readyAt: performance.now() };
          document.body.dataset.ready = "true";
          peaksLoading.then(loaded => { peaks = loaded; draw(); document.body.dataset.peaksAt = performance.now().toFixed(1); })
            .catch(() => { document.getElementById("now").textContent = "The waveform could not be loaded."; });
        })();
        </script>
        </body>
        </html>
        """#
}
