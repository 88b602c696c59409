"""The official OpenAI Python SDK against Chorus's OpenAI-compatible audio routes, as an app would call them after
changing its base URL. Usage: openai_sdk_check.py BASE_URL API_KEY AUDIO_FILE. Prints one JSON object: what each
call returned (or the error the SDK raised), for the Swift test to check."""
import json
import sys

import openai

base_url, api_key, path = sys.argv[1:4]
client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=120)
result = {"sdk": openai.__version__}

with open(path, "rb") as audio:
    result["json"] = client.audio.transcriptions.create(model="whisper-1", file=audio).text
with open(path, "rb") as audio:
    verbose = client.audio.transcriptions.create(model="whisper-1", file=audio, response_format="verbose_json",
                                                 timestamp_granularities=["word", "segment"], language="en")
result["verbose"] = {
    "text": verbose.text, "language": verbose.language, "duration": verbose.duration,
    "words": [{"word": w.word, "start": w.start, "end": w.end} for w in verbose.words or []],
    "segments": [{"text": s.text, "start": s.start, "end": s.end} for s in verbose.segments or []],
}
with open(path, "rb") as audio:
    result["vtt"] = client.audio.transcriptions.create(model="whisper-1", file=audio, response_format="vtt")
try:
    client.audio.transcriptions.create(model="whisper-1", file=("note.m4a", b"not audio at all", "audio/mp4"))
    result["not_audio"] = None
except openai.APIStatusError as error:
    result["not_audio"] = {"status": error.status_code, "message": str(error)}
speech = client.audio.speech.create(model="tts-1", voice="alloy", input="Hello from the SDK.", response_format="wav")
result["speech_bytes"] = len(speech.content)
# Chorus's own "lexicon" through the SDK's extra_body: the IPA makes "Bob" as long as the long name.
for name, extra in [("plain", None), ("lexicon", {"lexicon": {"Bob": {"ipa": "ˌnɛbjʊkədˈnɛzəɹ"}}})]:
    said = client.audio.speech.create(model="tts-1", voice="alloy", input="See you Bob.", response_format="pcm", extra_body=extra)
    result["bob_" + name] = len(said.content)
print(json.dumps(result))
