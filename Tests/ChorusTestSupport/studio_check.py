#!/usr/bin/env python3
"""Drives Chorus's studio page (`chorus serve`'s `/`) in headless Chromium (selenium + chromedriver, downloads through
the DevTools protocol) the way a user would, and checks what they see.

    studio_check.py BASE_URL --key KEY --voice A --voice B --clip CLIP --download-dir DIR [--screenshot PNG]

Steps: open the page; a wrong key (a clear message, the page keeps working); the right key; the voices listed, one
played; a three-message conversation (two voices, one uploaded clip; one speaker named like markup) rendered, the
player's highlighted word following playback; the MP3 downloaded; the clip transcribed with its words highlighted as
it plays; a lexicon entry saved and said. Prints one JSON object of measurements on success; on a failed check prints
the reason to stderr and exits 1; exits 2 when the browser cannot start (the caller fails: a browser test never skips).
"""
import argparse
import json
import os
import sys
import time

from player_check import check_console, fail, start_browser, wait, watch

XSS = "<img src=x onerror=alert(1)>"


def click(driver, selector):
    driver.execute_script("document.querySelector(arguments[0]).click()", selector)


def type_into(driver, selector, text):
    """Sets a field's text as typing it would, then leaves it (input, then change)."""
    found = driver.execute_script("""
        const field = document.querySelector(arguments[0]);
        if (!field) return false;
        field.focus(); field.value = arguments[1];
        field.dispatchEvent(new Event('input', {bubbles: true})); field.dispatchEvent(new Event('change', {bubbles: true}));
        return true;""", selector, text)
    if not found:
        fail(f"the page has no {selector}")


def choose(driver, selector, value):
    found = driver.execute_script("""
        const select = document.querySelector(arguments[0]);
        if (![...select.options].some(o => o.value === arguments[1])) return false;
        select.value = arguments[1]; select.dispatchEvent(new Event('change', {bubbles: true})); return true;""",
                                  selector, value)
    if not found:
        fail(f"{selector} offers no {value!r}")


def text_of(driver, selector):
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : null", selector)


# Text (and controls) whose colour is below WCAG AA's contrast against the background it sits on: 4.5:1, or 3:1 for
# large text (24 px, or 18.66 px bold). Disabled controls and hidden elements are exempt, as WCAG says.
LOW_CONTRAST = """
const channel = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
const luminance = c => 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
const rgb = s => { const m = /rgba?\\(([^)]+)\\)/.exec(s); return m ? m[1].split(',').map(Number) : null; };
const background = e => {
  for (; e; e = e.parentElement) {
    const c = rgb(getComputedStyle(e).backgroundColor);
    if (c && (c.length < 4 || c[3] > 0)) return c;
  }
  return [255, 255, 255];
};
const low = [];
for (const e of document.querySelectorAll('body *')) {
  if (e.disabled || !e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
  const control = ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(e.tagName);
  if (!control && ![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
  const style = getComputedStyle(e);
  const a = luminance(rgb(style.color)), b = luminance(background(e));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
  if (ratio < (size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5)) low.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''} "${(e.textContent || e.value || '').trim().slice(0, 30)}" ${ratio.toFixed(2)}:1`);
}
return low;
"""


def download(driver, folder, selector, name):
    """Clicks `selector` and returns the path of `name` once the browser has written it whole (no partial file left,
    its size the same twice)."""
    driver.execute_script("delete document.body.dataset.downloaded")
    click(driver, selector)
    wait(driver, f"return document.body.dataset.downloaded === {json.dumps(name)}", f"the page to hand over {name}", 60)
    path = os.path.join(folder, name)
    deadline = time.monotonic() + 60
    last = -1
    while time.monotonic() < deadline:
        partial = any(n.endswith(".crdownload") for n in os.listdir(folder))
        size = os.path.getsize(path) if os.path.exists(path) else -1
        if size > 0 and size == last and not partial:
            return path
        last = size
        time.sleep(0.2)
    fail(f"{name} was not downloaded whole within 60 s of clicking {selector}")


UNNAMED = """
return [...document.querySelectorAll('input, select, textarea, button, [role=button]')].filter(c =>
    !(c.labels && c.labels.length) && !c.getAttribute('aria-label') && !(c.tagName === 'BUTTON' && c.textContent.trim())
).map(c => c.id || c.outerHTML.slice(0, 80));"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--key", required=True)
    parser.add_argument("--voice", action="append", required=True)
    parser.add_argument("--clip", required=True)
    parser.add_argument("--clip-words", default="", help="a word the clip says (lower case)")
    parser.add_argument("--download-dir", required=True)
    parser.add_argument("--screenshot")
    arguments = parser.parse_args()
    first_voice, second_voice = arguments.voice[0], arguments.voice[-1]
    result = {}

    driver = start_browser()
    try:
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": arguments.download_dir})
        driver.get(arguments.base + "/")
        wait(driver, "return document.body && document.body.dataset.ready === 'true'", "the studio to become ready")
        result["interactive_ms"] = round(float(driver.execute_script("return document.body.dataset.readyAt")), 1)
        driver.execute_script("""
            window.__violations = []; window.__alerts = 0;
            document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective));
            window.alert = () => { window.__alerts += 1; };""")

        # A wrong key: the voices say so beside them; the page keeps working. (The page's first load, with no key,
        # is refused too: it is waited for, so that the message read is the wrong key's.)
        loaded = int(wait(driver, "return document.body.dataset.voicesLoaded", "the page's first load of the voices"))
        type_into(driver, "#key", "not-the-key-of-this-service")
        click(driver, "#key-form button[type=submit]")
        wait(driver, f"return Number(document.body.dataset.voicesLoaded) > {loaded}", "the wrong key's answer")
        refused = text_of(driver, "#voices-error")
        if "refused the key" not in refused:
            fail(f"a wrong key shows {refused!r}, not that the service refused it")
        result["wrong_key_message"] = refused

        # The right key: every voice in one request; one is played.
        type_into(driver, "#key", arguments.key)
        click(driver, "#key-form button[type=submit]")
        wait(driver, "return document.querySelectorAll('#voice-table tbody tr').length > 0", "the voices to be listed")
        if text_of(driver, "#voices-error"):
            fail(f"with the right key the voices show an error: {text_of(driver, '#voices-error')!r}")
        result["voices"] = driver.execute_script("return document.querySelectorAll('#voice-table tbody tr').length")

        # Every control has a name a screen reader says (a label, aria-label or its text); again at the end.
        unnamed = driver.execute_script(UNNAMED)
        if unnamed:
            fail(f"controls without a name: {unnamed}")
        result["controls"] = driver.execute_script("return document.querySelectorAll('input, select, textarea, button').length")

        # The speakers' default voices are shown before anything is rendered (POST /v1/renders/plan).
        defaults = wait(driver, """
            const labels = [...document.querySelectorAll('#speakers select option[value=""]')].map(o => o.textContent);
            return labels.length === 2 && labels.every(l => l.includes(':')) ? labels : null;""", "the default voices to be shown")
        result["default_voices"] = defaults
        driver.execute_script("""document.querySelector(`#voice-table tr[data-voice="${CSS.escape(arguments[0])}"] button`).click()""",
                              first_voice)
        wait(driver, f"return document.body.dataset.samplePlayed === {json.dumps(first_voice)}", "the sample to play", 60)
        sample = driver.execute_script("const a = document.getElementById('sample-audio'); return [a.duration, a.paused]")
        if not sample[0] or sample[0] <= 0:
            fail(f"the sample of {first_voice} has no duration ({sample})")
        result["sample_seconds"] = round(sample[0], 2)

        # Compose: two speakers (the second named like markup), two text messages and one uploaded clip.
        type_into(driver, "#speakers li:nth-child(1) input", "Ana")
        choose(driver, "#speakers li:nth-child(1) select", first_voice)
        type_into(driver, "#speakers li:nth-child(2) input", XSS)
        choose(driver, "#speakers li:nth-child(2) select", second_voice)
        click(driver, "#add-message")
        driver.find_element("css selector", "#messages li:nth-child(1) textarea").send_keys("Good morning, everyone. The bus leaves at nine.")
        click(driver, "#add-message")
        choose(driver, "#messages li:nth-child(2) select", XSS)

        # A render the service refuses (an empty message) says why, and the conversation stays as it was.
        click(driver, "#render")
        refusal = wait(driver, "return document.getElementById('render-error').textContent || null", "the refused render's reason", 60)
        kept = driver.execute_script("return [document.querySelectorAll('#messages li').length, document.querySelector('#messages li textarea').value]")
        if kept != [2, "Good morning, everyone. The bus leaves at nine."]:
            fail(f"after a refused render the conversation is {kept}")
        beside = text_of(driver, "#messages li:nth-child(2) .error")
        if not beside or not beside.startswith("Message 2:"):
            fail(f"the refused render's reason is not shown beside message 2 ({beside!r})")
        result["refused_render"] = beside
        driver.find_element("css selector", "#messages li:nth-child(2) textarea").send_keys("Thank you! I will bring the tickets and some water.")
        choose(driver, "#intro-kind", "line")
        choose(driver, "#intro-speaker", "Ana")
        type_into(driver, "#intro-text", "Welcome to the trip news.")
        driver.find_element("css selector", "#add-clip").send_keys(os.path.abspath(arguments.clip))
        wait(driver, "return document.querySelectorAll('#messages li').length === 3", "the clip to be uploaded", 60)
        choose(driver, "#messages li:nth-child(3) select", "Ana")
        shown = driver.execute_script("return document.querySelector('#speakers li:nth-child(2) input').value")
        if shown != XSS:
            fail(f"the speaker's name reads {shown!r}")

        # Render: progress, then the player in its frame.
        click(driver, "#render")
        wait(driver, "return document.body.dataset.render || document.getElementById('render-error').textContent", "the render", 240)
        if text_of(driver, "#render-error"):
            fail(f"the render failed: {text_of(driver, '#render-error')!r}")
        result["render"] = driver.execute_script("return document.body.dataset.render")
        frame = driver.find_element("css selector", "#player")
        player_url = driver.execute_script("return document.getElementById('player').src")
        if arguments.key in player_url or "sig=" not in player_url:
            fail(f"the player's address is not a signed link without the key: {player_url}")
        driver.switch_to.frame(frame)
        wait(driver, "return document.body && document.body.dataset.ready === 'true'", "the player to become ready", 30)
        speakers = driver.execute_script("return Array.from(document.querySelectorAll('#speakers button')).map(b => b.dataset.speaker)")
        if speakers != ["Ana", XSS]:
            fail(f"the player lists speakers {speakers}, not Ana and the markup-like name as text")
        timeline = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(document.querySelector('#chorus-config') ? JSON.parse(document.querySelector('#chorus-config').textContent).timelineURL : '')
              .then(r => r.json()).then(done, e => done({error: String(e)}));""")
        if "segments" not in timeline:
            fail(f"the player's timeline could not be read: {timeline}")
        driver.execute_script("chorusPlayer.audio.play()")
        wait(driver, "return chorusPlayer.audio.currentTime > 0.4", "the render to play")
        def highlighted(state):
            expected = [w["word"] for s in timeline["segments"] for w in (s.get("words") or [])
                        if w["start"] - 0.05 <= state["t"] < w["end"] + 0.05]
            if state["word"] is not None and state["word"] not in expected:
                fail(f"at {state['t']:.2f} s the player highlights {state['word']!r}; the timeline has {expected}")
            return state["word"] is not None

        followed = watch(driver, """
            chorusPlayer.update();
            const w = document.querySelector('.word[aria-current="true"]');
            return {t: chorusPlayer.audio.currentTime, word: w && w.textContent};""", highlighted, 12, 0.25)
        driver.execute_script("chorusPlayer.audio.pause()")
        if followed < 3:
            fail(f"the highlighted word followed playback {followed} times in 3 s")
        result["words_followed"] = followed
        low = driver.execute_script(LOW_CONTRAST)
        if low:
            fail(f"the player's text below WCAG AA contrast: {low}")
        result["player_images"] = driver.execute_script("return document.querySelectorAll('img').length")
        driver.switch_to.default_content()

        # Download the MP3 (the caller decodes it).
        result["downloaded"] = download(driver, arguments.download_dir, "#downloads button[data-part=audio]",
                                        f"chorus-{result['render'][:8]}.mp3")

        # Export the conversation, then import it again: the same conversation.
        exported = download(driver, arguments.download_dir, "#export", "conversation.json")
        with open(exported) as file:
            saved = json.load(file)
        if [m.get("speaker") for m in saved["messages"]] != ["Ana", XSS, "Ana"] or "clip" not in saved["messages"][2] \
                or saved.get("voices") != {"Ana": first_voice, XSS: second_voice} or saved.get("intro", {}).get("speaker") != "Ana":
            fail(f"the exported conversation is not the one composed: {saved}")
        driver.execute_script("document.getElementById('add-message').click()")
        driver.find_element("css selector", "#import-file").send_keys(exported)
        wait(driver, "return document.querySelectorAll('#messages li').length === 3", "the import to replace the conversation")
        again = driver.execute_script("return JSON.stringify(conversation())")
        if json.loads(again) != saved:
            fail(f"imported again, the conversation reads {again}, not {json.dumps(saved)}")
        result["exported_messages"] = len(saved["messages"])

        if arguments.screenshot:
            driver.set_window_size(1100, 1400)
            driver.execute_script("document.getElementById('conversation').scrollIntoView()")
            driver.save_screenshot(arguments.screenshot)
            result["screenshot"] = arguments.screenshot

        # Listen: transcribe the clip; the words light up as it plays.
        driver.find_element("css selector", "#listen-file").send_keys(os.path.abspath(arguments.clip))
        click(driver, "#listen-go")
        wait(driver, "return document.querySelectorAll('#listen-words span').length > 0 || document.getElementById('listen-error').textContent",
             "the transcript", 120)
        if text_of(driver, "#listen-error"):
            fail(f"transcription failed: {text_of(driver, '#listen-error')!r}")
        heard = text_of(driver, "#listen-words")
        result["transcript"] = heard
        result["language"] = driver.execute_script("return document.body.dataset.listenLanguage")
        if arguments.clip_words and arguments.clip_words not in heard.lower():
            fail(f"the transcript {heard!r} lacks {arguments.clip_words!r}")
        driver.execute_script("const a = document.getElementById('listen-audio'); a.currentTime = 0; a.play()")
        wait(driver, "return document.getElementById('listen-audio').currentTime > 0.3", "the clip to play")
        def lit_word(state):
            if state["start"] is not None and not (state["start"] - 0.3 <= state["t"] <= state["end"] + 0.3):
                fail(f"at {state['t']:.2f} s the lit word spans {state['start']:.2f}–{state['end']:.2f} s")
            return state["start"] is not None

        lit = watch(driver, """
            highlightWord();
            const a = document.getElementById('listen-audio');
            const w = document.querySelector('#listen-words span[aria-current="true"]');
            return {t: a.currentTime, start: w && Number(w.dataset.start), end: w && Number(w.dataset.end)};""", lit_word, 8, 0.2)
        driver.execute_script("document.getElementById('listen-audio').pause()")
        if lit < 2:
            fail(f"the clip's words lit up {lit} times while it played")
        result["transcript_words_lit"] = lit

        # Pronunciations: a new lexicon, one entry, saved, said.
        type_into(driver, "#lexicon-name", "family")
        click(driver, "#lexicon-open")
        wait(driver, "return document.querySelectorAll('#lexicon-table tbody tr').length === 1", "an empty entry")
        type_into(driver, "#lexicon-table tbody tr:nth-child(1) td:nth-child(1) input", "Nguyen")
        type_into(driver, "#lexicon-table tbody tr:nth-child(1) td:nth-child(2) input", "win")
        click(driver, "#lexicon-save")
        wait(driver, "return document.body.dataset.lexiconSaved === 'family' || document.getElementById('lexicon-error').textContent",
             "the lexicon to be saved")
        if text_of(driver, "#lexicon-error"):
            fail(f"saving the lexicon failed: {text_of(driver, '#lexicon-error')!r}")
        choose(driver, "#lexicon-voice", first_voice)
        driver.execute_script("delete document.body.dataset.samplePlayed")
        click(driver, "#lexicon-table tbody tr:nth-child(1) button")
        wait(driver, f"return document.body.dataset.samplePlayed === {json.dumps(first_voice)}", "the entry to be said", 60)
        result["lexicon"] = text_of(driver, "#lexicon-status")

        low = driver.execute_script(LOW_CONTRAST)
        if low:
            fail(f"the studio's text below WCAG AA contrast: {low}")
        unnamed = driver.execute_script(UNNAMED)
        if unnamed:
            fail(f"controls without a name at the end: {unnamed}")

        # Markup stayed text, nothing ran, the key went nowhere but the tab's session storage.
        images = driver.execute_script("return document.querySelectorAll('img').length")
        state = driver.execute_script("return {violations: window.__violations, alerts: window.__alerts}")
        if images or result["player_images"] or state["alerts"]:
            fail(f"the markup-like name became markup: {images} images in the page, {result['player_images']} in the "
                 f"player, {state['alerts']} alerts")
        if state["violations"]:
            fail(f"the page broke its Content-Security-Policy: {state['violations']}")
        stored = driver.execute_script("return [localStorage.length, sessionStorage.getItem('chorus.key')]")
        if stored[0] or stored[1] != arguments.key:
            fail(f"the key is kept where it should not be (localStorage {stored[0]} items; session {stored[1] is not None})")
        resources = driver.execute_script("return performance.getEntriesByType('resource').map(r => r.name)")
        if any(arguments.key in name for name in resources + [driver.current_url]) or arguments.key in driver.page_source:
            fail("the key appears in a URL or in the page")
        outside = [name for name in resources if not (name.startswith(arguments.base) or name.startswith("blob:"))]
        if outside:
            fail(f"the page reached outside the service: {outside}")
        result["resources"] = len(resources)
        # The browser logs as failed loads: the refusals of the first, keyless load and of the wrong key (voices,
        # lexicons, the voices plan), the refused render, and the new lexicon's lookup. Nothing else may fail.
        failed = "Failed to load resource: the server responded with a status of"
        check_console(driver, allowed=tuple(f"{arguments.base}{path} - {failed} {status}" for path, status in [
            ("/v1/voices", 401), ("/v1/lexicons", 401), ("/v1/renders/plan", 401), ("/v1/renders", 422),
            ("/v1/lexicons/family", 404)]))
    finally:
        driver.quit()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
