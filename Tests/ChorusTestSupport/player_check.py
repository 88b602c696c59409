#!/usr/bin/env python3
"""Drives a Chorus player page in headless Chromium (selenium + chromedriver) and checks what a listener sees.

    player_check.py URL TIMELINE.json [--screenshot PNG] [--secret TEXT] [--expect-signed]

Prints one JSON object of measurements on success; on any failed check prints the reason to stderr and
exits 1; exits 2 when the browser cannot start (the caller fails: a browser test never skips silently).
"""
import argparse
import json
import sys
import time
import urllib.parse


def fail(message, code=1):
    print("player_check: " + message, file=sys.stderr)
    sys.exit(code)


def start_browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        fail(f"selenium is not installed ({error}); run scripts/setup.sh --test", 2)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--autoplay-policy=no-user-gesture-required", "--mute-audio", "--window-size=1100,860",
                 "--hide-scrollbars"):
        options.add_argument(flag)
    try:
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as error:  # the message names what is missing (binary, driver, version mismatch)
        fail(f"headless Chromium did not start: {str(error).strip().splitlines()[0]}; run scripts/setup.sh --test", 2)


def wait(driver, script, what, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.02)
    fail(f"timed out after {seconds:.0f} s waiting for {what}")


def check_console(driver, allowed=()):
    """Fails when the page logged an error other than those containing one of `allowed`."""
    errors = [entry["message"] for entry in driver.get_log("browser")
              if entry.get("level") == "SEVERE" and not any(text in entry["message"] for text in allowed)]
    if errors:
        fail(f"the page logged errors: {errors}")


def watch(driver, probe, check, times, interval):
    """Samples `probe` (a script returning an object with `t`) `times` times while media plays; `check(state)` says
    whether the sample counts (and fails the run when it is wrong). Returns how many counted."""
    counted = 0
    for _ in range(times):
        if check(driver.execute_script(probe)):
            counted += 1
        time.sleep(interval)
    return counted


def segment_at(timeline, t):
    for segment in timeline["segments"]:
        if segment["start"] <= t < segment["end"]:
            return segment
    return None


STATE = """
const speaker = document.querySelector('#speakers button[aria-current="true"]');
const message = document.querySelector('#transcript li[aria-current="true"]');
const word = document.querySelector('.word[aria-current="true"]');
return {t: chorusPlayer.audio.currentTime, speaker: speaker && speaker.dataset.speaker,
        message: message && Number(message.dataset.index), word: word && word.textContent,
        now: document.getElementById('now').textContent, paused: chorusPlayer.audio.paused,
        rate: chorusPlayer.audio.playbackRate};
"""


def seek(driver, t):
    driver.execute_script("""
        const a = chorusPlayer.audio; window.__seeked = false;
        a.addEventListener('seeked', () => { window.__seeked = true; }, {once: true});
        a.currentTime = arguments[0];""", t)
    wait(driver, "return window.__seeked", f"the seek to {t:.2f} s")
    driver.execute_script("chorusPlayer.update()")
    return driver.execute_script(STATE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("timeline")
    parser.add_argument("--screenshot")
    parser.add_argument("--secret", action="append", default=[], help="text that must appear nowhere the page can see")
    parser.add_argument("--expect-signed", action="store_true")
    arguments = parser.parse_args()
    with open(arguments.timeline) as file:
        timeline = json.load(file)
    segments = timeline["segments"]
    result = {}

    driver = start_browser()
    try:
        started = time.monotonic()
        driver.get(arguments.url)
        wait(driver, "return document.body && document.body.dataset.ready === 'true'", "the page to become ready")
        result["interactive_ms"] = round(driver.execute_script("return chorusPlayer.readyAt"), 1)
        wait(driver, "return chorusPlayer.audio.readyState >= 1", "the audio's metadata")
        result["audio_ready_ms"] = float(wait(driver, "return document.body.dataset.audioReadyAt", "the audio's metadata time"))
        result["peaks_ms"] = float(wait(driver, "return document.body.dataset.peaksAt", "the waveform's peaks"))
        result["wall_ms"] = round((time.monotonic() - started) * 1000, 1)

        # Where the page was reached and what it holds: signed, and no secret anywhere.
        final = driver.current_url
        query = urllib.parse.parse_qs(urllib.parse.urlparse(final).query)
        if arguments.expect_signed and not ("sig" in query and "exp" in query and "key" not in query):
            fail(f"the page's address is not a signed link without the key: {final}")
        source = driver.page_source
        resources = driver.execute_script("return performance.getEntriesByType('resource').map(r => r.name)")
        for secret in arguments.secret:
            if secret in final or secret in source or any(secret in name for name in resources):
                fail("a secret appears in the page, its address or a URL it loaded")
        if arguments.expect_signed:
            unsigned = [name for name in resources if "/v1/" in name and "sig=" not in name]
            if unsigned:
                fail(f"the page loaded URLs without their own signature: {unsigned}")
        result["resources"] = len(resources)
        external = [name for name in resources if not (name.startswith(final.split("/v1/")[0]) or name.startswith("data:"))]
        if final.startswith("http") and external:
            fail(f"the page reached outside the service: {external}")

        duration = driver.execute_script("return chorusPlayer.audio.duration")
        if abs(duration - timeline["duration"]) > 0.1:
            fail(f"the browser reads {duration:.3f} s of audio; the timeline says {timeline['duration']:.3f} s")
        result["duration"] = duration
        speaker_names = driver.execute_script("return Array.from(document.querySelectorAll('#speakers button')).map(b => b.dataset.speaker)")
        expected_speakers = [s["name"] for s in timeline["speakers"]]
        if speaker_names != expected_speakers:
            fail(f"speaker list {speaker_names} is not the timeline's {expected_speakers}")
        messages = driver.execute_script("return document.querySelectorAll('#transcript li').length")
        if messages != len(segments):
            fail(f"the transcript has {messages} messages; the timeline has {len(segments)}")

        # Playing: time advances and the highlighted word follows it.
        driver.execute_script("chorusPlayer.audio.play()")
        wait(driver, "return chorusPlayer.audio.currentTime > 0.3", "playback to start (currentTime > 0.3 s)")
        first = driver.execute_script(STATE)
        time.sleep(1.0)
        second = driver.execute_script(STATE)
        if not second["t"] > first["t"] + 0.5:
            fail(f"currentTime did not advance while playing ({first['t']:.2f} → {second['t']:.2f})")
        result["played"] = [round(first["t"], 2), round(second["t"], 2)]
        driver.execute_script("chorusPlayer.audio.pause()")

        # Seeking through the messages: the named speaker, message and word are the timeline's at that time.
        checked_speakers, checked_words = set(), []
        for segment in segments[: min(len(segments), 12)]:
            words = segment.get("words") or []
            probe = segment["start"] + (segment["end"] - segment["start"]) * 0.3
            if words:
                middle = words[len(words) // 2]
                probe = (middle["start"] + middle["end"]) / 2
            state = seek(driver, probe)
            if state["speaker"] != segment["speaker"] or state["message"] != segment["index"]:
                fail(f"at {probe:.2f} s the page highlights {state['speaker']!r} / message {state['message']} "
                     f"but the timeline says {segment['speaker']!r} / message {segment['index']}")
            if segment["speaker"] not in state["now"]:
                fail(f"at {probe:.2f} s the page names {state['now']!r}, not {segment['speaker']!r}")
            if words:
                if state["word"] != middle["word"]:
                    fail(f"at {probe:.2f} s the highlighted word is {state['word']!r}, not {middle['word']!r}")
                checked_words.append(state["word"])
            checked_speakers.add(state["speaker"])
        if len(checked_speakers) < 2:
            fail("fewer than two speakers were seen highlighted")
        result["speakers_seen"] = sorted(checked_speakers)
        result["words_seen"] = len(checked_words)

        # In a gap between messages nothing is highlighted.
        if len(segments) > 1 and segments[1]["start"] - segments[0]["end"] > 0.1:
            state = seek(driver, (segments[0]["end"] + segments[1]["start"]) / 2)
            if state["speaker"] is not None or state["message"] is not None or state["word"] is not None:
                fail(f"in the gap after message 0 the page still highlights {state}")

        # Clicking a speaker jumps to that speaker's next message.
        state = seek(driver, segments[0]["start"] + 0.05)
        other = next((s for s in segments if s["speaker"] != segments[0]["speaker"]), None)
        if other is None:
            fail("the timeline has one speaker; the check needs two")
        driver.execute_script("""
            const a = chorusPlayer.audio; window.__seeked = false;
            a.addEventListener('seeked', () => { window.__seeked = true; }, {once: true});
            document.querySelector(`#speakers button[data-speaker="${CSS.escape(arguments[0])}"]`).click();""", other["speaker"])
        wait(driver, "return window.__seeked", "the seek after clicking a speaker")
        state = driver.execute_script(STATE)
        if abs(state["t"] - other["start"]) > 0.05 or state["speaker"] != other["speaker"]:
            fail(f"clicking {other['speaker']!r} moved to {state['t']:.3f} s ({state['speaker']!r}); "
                 f"their next message starts at {other['start']:.3f} s")
        result["speaker_click"] = {"speaker": other["speaker"], "to": round(state["t"], 3), "expected": round(other["start"], 3)}

        # Clicking a word goes to where it is spoken, and highlights it.
        spoken = [(s, w) for s in segments for w in (s.get("words") or [])]
        if spoken:
            segment, word = spoken[len(spoken) // 2]
            driver.execute_script("""
                const a = chorusPlayer.audio; window.__seeked = false;
                a.addEventListener('seeked', () => { window.__seeked = true; }, {once: true});
                [...document.querySelectorAll(`#transcript li[data-index="${arguments[0]}"] .word`)]
                    .find(w => Number(w.dataset.start) === arguments[1]).click();""", segment["index"], word["start"])
            wait(driver, "return window.__seeked", "the seek after clicking a word")
            state = driver.execute_script("chorusPlayer.update();" + STATE)
            if abs(state["t"] - word["start"]) > 0.05 or state["word"] != word["word"]:
                fail(f"clicking {word['word']!r} (at {word['start']:.3f} s) moved to {state['t']:.3f} s, highlighting {state['word']!r}")
            result["word_click"] = {"word": word["word"], "to": round(state["t"], 3)}

        # Keyboard: → moves 5 s on; space plays. Speed buttons set the rate.
        before = state["t"]
        driver.execute_script("document.activeElement && document.activeElement.blur()")
        driver.find_element("tag name", "body").send_keys("\ue014")  # ArrowRight
        wait(driver, f"return Math.abs(chorusPlayer.audio.currentTime - {min(before + 5, duration)}) < 0.3", "→ to move 5 s on")
        driver.find_element("tag name", "body").send_keys(" ")
        wait(driver, "return !chorusPlayer.audio.paused", "space to start playback")
        driver.execute_script("document.querySelector('#speeds button[data-rate=\"1.5\"]').click()")
        rate = driver.execute_script("return [chorusPlayer.audio.playbackRate, document.querySelector('#speeds button[aria-pressed=\"true\"]').dataset.rate]")
        if rate[0] != 1.5 or rate[1] != "1.5":
            fail(f"the 1.5× button set playbackRate {rate[0]} (pressed: {rate[1]})")
        driver.execute_script("chorusPlayer.audio.pause()")

        # A picture for the README: partway into a message, with a word highlighted.
        if arguments.screenshot:
            target = segments[min(3, len(segments) - 1)]
            words = target.get("words") or []
            seek(driver, (words[len(words) // 2]["start"] + 0.01) if words else target["start"] + 0.2)
            driver.set_window_size(1100, 860)
            driver.save_screenshot(arguments.screenshot)
            result["screenshot"] = arguments.screenshot
        check_console(driver)
    finally:
        driver.quit()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
