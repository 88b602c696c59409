// Chorus studio: the page in front of the /v1 API. Plain script, no framework, nothing from another origin.
// Every string that came from a user or the service is shown with textContent (never as markup). The key the user
// enters lives in this tab's sessionStorage only and is sent as `Authorization: Bearer …` — never in a URL.
'use strict';

const $ = (id) => document.getElementById(id);
const KEY = 'chorus.key';
// The player's and the pictures' speaker colours (Okabe–Ito), in the order the speakers are listed.
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#D55E00', '#56B4E9', '#F0E442'];
const SAMPLE_LIMIT = 40;

const state = {
  voices: [],
  speakers: [],      // {name, voice}  (voice '' = the service's default for the name)
  messages: [],      // {speaker, text} or {speaker, clip, label}; gap_ms optional
  extra: {},         // fields of an imported conversation the page does not edit (cleanup, lexicon, …), kept as they were
  samples: new Map(),
  lexicon: null,     // the open lexicon's name
  bookends: { intro: null, outro: null, music: null },  // recordings: {clip, label} or {inline (base64), label}
  bookendKept: { intro: {}, outro: {} },  // what an imported intro or outro says that the page does not edit (voice)
  recordings: [],    // recordings for a voice to be made, from the microphone
  planned: {},       // each speaker's voice as a render would give it (POST /v1/renders/plan): the defaults shown
};

// ---- The API -------------------------------------------------------------------------------------------------------

function key() { return sessionStorage.getItem(KEY) || ''; }

async function failure(response) {
  let message = `${response.status} ${response.statusText}`.trim();
  let field = null;
  try {
    const body = await response.json();
    if (body && body.error && body.error.message) {
      message = body.error.message + (body.error.code ? ` (${body.error.code})` : '');
      field = body.error.field || null;
    }
  } catch (_) { /* not JSON: the status says it */ }
  if (response.status === 401) message = `The service refused the key: ${message}`;
  const error = new Error(message);
  error.status = response.status;
  error.field = field;
  return error;
}

async function api(path, options = {}) {
  const headers = new Headers(options.headers || {});
  if (key()) headers.set('Authorization', `Bearer ${key()}`);
  let response;
  try {
    response = await fetch(path, { ...options, headers, cache: 'no-store' });
  } catch (error) {
    throw new Error(`The service did not answer (${error.message})`);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

function json(body) {
  return { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
}

/** Follows a server-sent event stream; `onEvent(name, data)` returns false to stop. Returns whether it was stopped
 *  (false: the stream ended first). */
async function follow(path, onEvent) {
  const response = await api(path, { headers: { Accept: 'text/event-stream' } });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer = (buffer + value).replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
        if (data.length && onEvent(name, JSON.parse(data.join('\n'))) === false) return true;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function say(id, error) {
  const element = $(id);
  element.textContent = error ? (error.message || String(error)) : '';
}

function status(id, text) { $(id).textContent = text || ''; }

/** Properties `element` sets; anything else is an attribute it refuses unless named here (never markup, never a
 *  handler given as text). */
const PROPERTIES = new Set(['id', 'className', 'type', 'value', 'checked', 'disabled', 'hidden', 'min', 'max', 'step', 'size',
  'rows', 'placeholder', 'accept', 'multiple', 'htmlFor', 'tabIndex', 'href', 'download']);
const ATTRIBUTES = new Set(['aria-label', 'aria-hidden', 'role']);

function element(tag, properties = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(properties)) {
    if (name === 'text') node.textContent = value;
    else if (name === 'on') for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    else if (name === 'data') Object.assign(node.dataset, value);
    else if (PROPERTIES.has(name)) node[name] = value;
    else if (ATTRIBUTES.has(name)) node.setAttribute(name, value);
    else throw new Error(`element: ${name} is not a property the studio sets`);
  }
  for (const child of children) node.append(child);
  return node;
}

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = element('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  document.body.dataset.downloaded = name;
}

// ---- Key -----------------------------------------------------------------------------------------------------------

async function useKey(event) {
  event.preventDefault();
  sessionStorage.setItem(KEY, $('key').value.trim());
  $('key').value = '';
  status('key-status', 'Checking…');
  const accepted = await loadAll();
  if (accepted) status('key-status', key() ? 'Key accepted; kept for this tab only.' : 'No key: for a service without keys.');
  else status('key-status', 'Not accepted: the reason is under Voices.');
}

function forgetKey() {
  sessionStorage.removeItem(KEY);
  status('key-status', 'Key forgotten.');
  loadAll();
}

// ---- Voices --------------------------------------------------------------------------------------------------------

/** Counts loads, so that an answer to an earlier one (another key's) never replaces a later one's. */
const loads = { voices: 0, plan: 0, lexicons: 0 };

/** Lists the voices; returns whether the service answered (false: its reason is shown). */
async function loadVoices() {
  const load = ++loads.voices;
  say('voices-error');
  let voices = [];
  let refusal = null;
  try {
    voices = (await (await api('/v1/voices')).json()).voices || [];
  } catch (error) {
    refusal = error;
  }
  if (load !== loads.voices) return !refusal;
  state.voices = voices;
  if (refusal) say('voices-error', refusal);
  document.body.dataset.voicesLoaded = String(load);
  const providers = [...new Set(state.voices.map((v) => v.provider))].sort();
  const select = $('voice-provider');
  const chosen = select.value;
  select.replaceChildren(element('option', { value: '', text: 'every provider' }),
    ...providers.map((p) => element('option', { value: p, text: p })));
  select.value = providers.includes(chosen) ? chosen : '';
  showVoices();
  fillVoiceSelects();
  return !refusal;
}

function voiceKind(voice) {
  if (voice.made) return voice.category === 'generated' ? 'made by Chorus' : 'made from recordings';
  return voice.category === 'cloned' ? 'cloned' : 'stock';
}

function showVoices() {
  const filter = $('voice-filter').value.trim().toLowerCase();
  const provider = $('voice-provider').value;
  const shown = state.voices.filter((v) => (!provider || v.provider === provider)
    && (!filter || [v.id, v.name, v.language, v.gender].some((f) => f && f.toLowerCase().includes(filter))));
  const rows = shown.map((voice) => element('tr', { data: { voice: voice.id } }, [
    element('td', { text: voice.id }),
    element('td', { text: voice.provider }),
    element('td', { text: voice.language || '' }),
    element('td', { text: voice.gender || '' }),
    element('td', { text: voiceKind(voice) }),
    element('td', {}, [element('button', {
      type: 'button', text: 'Play', 'aria-label': `Play a sample of ${voice.id}`,
      on: { click: () => playSample(voice.id, $('sample-text').value, 'voices-error') },
    })]),
  ]));
  $('voice-table').tBodies[0].replaceChildren(...rows);
  status('voices-count', `${shown.length} of ${state.voices.length} voices`);
}

/** Speaks `text` with `voice` (OpenAI's speech route) and plays it; each voice and text is fetched once. */
async function playSample(voice, text, errorId, lexicon) {
  say(errorId);
  const input = (text || '').trim() || 'Hello.';
  const cacheKey = JSON.stringify([voice, input, lexicon || null]);
  try {
    let url = state.samples.get(cacheKey);
    if (url) {
      state.samples.delete(cacheKey);  // most recently used last
      state.samples.set(cacheKey, url);
    } else {
      const body = { model: 'tts-1', input, voice, response_format: 'mp3' };
      if (lexicon) body.lexicon = lexicon;
      const blob = await (await api('/v1/audio/speech', json(body))).blob();
      url = state.samples.get(cacheKey) || URL.createObjectURL(blob);
      if (!lexicon && !state.samples.has(cacheKey)) {
        state.samples.set(cacheKey, url);
        if (state.samples.size > SAMPLE_LIMIT) {
          const [oldest, oldURL] = state.samples.entries().next().value;
          state.samples.delete(oldest);
          URL.revokeObjectURL(oldURL);
        }
      }
    }
    const audio = $('sample-audio');
    // A sample said with a lexicon's unsaved entries is not kept: its address goes when the next one plays.
    if (audio.dataset.uncached && audio.src !== url) URL.revokeObjectURL(audio.src);
    audio.src = url;
    if (lexicon) audio.dataset.uncached = 'true'; else delete audio.dataset.uncached;
    await audio.play();
    document.body.dataset.samplePlayed = voice;
  } catch (error) {
    if (error.name !== 'AbortError') say(errorId, error);  // AbortError: a newer sample took its place
  }
}

function kokoroNames() {
  return state.voices.filter((v) => v.provider === 'kokoro' && !v.id.includes('+')).map((v) => v.id.slice('kokoro:'.length));
}

function addBlendPart(name) {
  const index = $('blend-parts').children.length + 1;
  const names = kokoroNames();
  const select = element('select', { 'aria-label': `Blend voice ${index}`, on: { change: blendID } },
    names.map((n) => element('option', { value: n, text: n })));
  if (name && names.includes(name)) select.value = name;
  else if (names[index - 1]) select.value = names[index - 1];
  const weight = element('input', { type: 'number', min: '1', max: '10', step: '1', value: '1',
    'aria-label': `Weight of blend voice ${index}`, on: { input: blendID } });
  const remove = element('button', { type: 'button', text: 'Remove', 'aria-label': `Remove blend voice ${index}`,
    on: { click: (event) => { event.target.closest('.row').remove(); blendID(); $('blend-add').focus(); } } });
  $('blend-parts').append(element('div', { className: 'row' }, [select, weight, remove]));
  blendID();
}

function blendID() {
  const parts = [...$('blend-parts').children].map((row) => {
    const [select, weight] = row.querySelectorAll('select, input');
    return { name: select.value, weight: Math.max(1, Math.min(10, Math.round(Number(weight.value) || 1))) };
  }).filter((p) => p.name);
  const equal = parts.every((p) => p.weight === parts[0].weight);
  const id = parts.length ? 'kokoro:' + parts.map((p) => (equal ? p.name : `${p.name}(${p.weight})`)).join('+') : '';
  $('blend-id').value = id;
  return id;
}

async function playBlend() {
  const id = blendID();
  if (!id) { say('blend-error', new Error('No Kokoro voices are installed to blend.')); return; }
  await playSample(id, $('sample-text').value, 'blend-error');
}

async function makeVoice() {
  say('make-error');
  const name = $('make-name').value.trim();
  const files = [...$('make-files').files, ...state.recordings];
  if (!name) { say('make-error', new Error('Name the voice first.')); return; }
  if (!files.length) { say('make-error', new Error('Choose one or more recordings of the person.')); return; }
  const form = new FormData();
  form.append('name', name);
  for (const file of files) form.append('files', file, file.name);
  if ($('make-hint').value) form.append('labels', JSON.stringify({ gender: $('make-hint').value }));
  const progress = $('make-progress');
  $('make-start').disabled = true;
  try {
    const added = await (await api('/v1/voices/add', { method: 'POST', body: form })).json();
    progress.hidden = false;
    status('make-status', `Making ${added.voice_id}…`);
    let outcome = null;
    await follow(`${added.job}/events`, (event, job) => {
      progress.value = job.progress || 0;
      status('make-status', `${job.voice_id}: ${job.status} (${Math.round((job.progress || 0) * 100)} %)`);
      if (['ready', 'failed', 'cancelled'].includes(event)) { outcome = job; return false; }
      return true;
    });
    if (outcome && outcome.status === 'ready') {
      status('make-status', `${outcome.voice_id} is ready.`);
      state.recordings = [];
      status('make-recorded', '');
      await loadVoices();
    } else if (outcome) {
      say('make-error', new Error(outcome.error || `The voice was ${outcome.status}.`));
    } else {
      say('make-error', new Error(`The job's events ended before it did: see ${added.job}.`));
    }
  } catch (error) {
    say('make-error', error);
  } finally {
    $('make-start').disabled = false;
  }
}

// ---- Conversation --------------------------------------------------------------------------------------------------

/** The "default voice" choice of speaker `name`, naming the voice the service would give them once it has said. */
function defaultLabel(name) {
  const planned = state.planned[name];
  return planned ? `default voice (${planned})` : 'default voice';
}

function voiceOptions(chosen, name) {
  const options = [element('option', { value: '', text: defaultLabel(name) })];
  for (const voice of state.voices) options.push(element('option', { value: voice.id, text: voice.id }));
  if (chosen && !state.voices.some((v) => v.id === chosen)) options.push(element('option', { value: chosen, text: chosen }));
  return options;
}

function fillVoiceSelects() {
  showSpeakers();
  const lexiconVoice = $('lexicon-voice');
  const chosen = lexiconVoice.value;
  lexiconVoice.replaceChildren(...state.voices.map((v) => element('option', { value: v.id, text: v.id })));
  if (chosen) lexiconVoice.value = chosen;
  const blend = $('blend-parts');
  if (!blend.children.length && kokoroNames().length >= 2) { addBlendPart(); addBlendPart(); }
}

function showSpeakers() {
  const items = state.speakers.map((speaker, index) => {
    const name = element('input', { type: 'text', value: speaker.name, 'aria-label': `Speaker ${index + 1} name`,
      on: { change: (event) => renameSpeaker(index, event.target.value) } });
    const voice = element('select', { 'aria-label': `Speaker ${index + 1} voice`,
      on: { change: (event) => { state.speakers[index].voice = event.target.value; plan(); } } }, voiceOptions(speaker.voice, speaker.name));
    voice.value = speaker.voice || '';
    const hear = element('button', { type: 'button', text: 'Hear', 'aria-label': `Hear speaker ${index + 1}'s voice`,
      on: { click: () => playSample(state.speakers[index].voice || state.planned[state.speakers[index].name] || defaultVoice(), $('sample-text').value, 'conversation-error') } });
    const remove = element('button', { type: 'button', text: 'Remove', 'aria-label': `Remove speaker ${index + 1}`,
      on: { click: () => removeSpeaker(index) } });
    const swatch = element('span', { className: 'swatch', 'aria-hidden': 'true' });
    swatch.style.background = COLOURS[index % COLOURS.length];
    return element('li', { data: { speaker: speaker.name } }, [swatch, name, voice, hear, remove]);
  });
  $('speakers').replaceChildren(...items);
  showSpeakerChoices();
}

/** The lists that choose a speaker — each message's, the intro's and the outro's — after the speakers changed;
 *  `renamed` carries a renamed speaker's choices over to the new name. */
function showSpeakerChoices(renamed) {
  for (const which of ['intro', 'outro']) {
    const select = $(`${which}-speaker`);
    const chosen = renamed && select.value === renamed.from ? renamed.to : select.value;
    select.replaceChildren(...state.speakers.map((s) => element('option', { value: s.name, text: s.name })));
    if (state.speakers.some((s) => s.name === chosen)) select.value = chosen;
  }
  showMessages();
}

let planTimer = null;

/** Asks the service which voice each speaker would get (after a short pause, so a burst of edits asks once), and
 *  shows it on their "default voice" choice. A speaker without a message yet is asked about with a line of their own;
 *  empty texts are asked about as a word (the voices do not depend on the words). */
function plan() {
  clearTimeout(planTimer);
  planTimer = setTimeout(async () => {
    if (!state.speakers.length) return;
    const body = conversation();
    body.messages = body.messages.map((m) => (m.clip || m.audio_base64 || (m.text || '').trim() ? m : { ...m, text: 'Hello.' }));
    for (const speaker of state.speakers) {
      if (!body.messages.some((m) => m.speaker === speaker.name)) body.messages.push({ speaker: speaker.name, text: 'Hello.' });
    }
    const load = ++loads.plan;
    try {
      const planned = await (await api('/v1/renders/plan', json(body))).json();
      if (load !== loads.plan) return;
      state.planned = Object.fromEntries(planned.speakers.filter((s) => s.voice).map((s) => [s.name, s.voice]));
      for (const item of $('speakers').children) {
        const option = item.querySelector('select option[value=""]');
        if (option) option.textContent = defaultLabel(item.dataset.speaker);
      }
    } catch (_) {
      // Not shown: the render names what is wrong when it is asked for.
    }
  }, 250);
}

function defaultVoice() { return (state.voices.find((v) => v.provider === 'kokoro') || state.voices[0] || { id: 'alloy' }).id; }

/** Renames a speaker everywhere they are named (messages, intro, outro, what the conversation says of them), in
 *  place: the name's field keeps its place and focus. */
function renameSpeaker(index, name) {
  const old = state.speakers[index].name;
  const trimmed = name.trim();
  const field = $('speakers').children[index].querySelector('input');
  const refuse = (reason) => { say('conversation-error', new Error(reason)); field.value = old; field.setAttribute('aria-invalid', 'true'); };
  if (!trimmed) { refuse(`Speaker ${index + 1} needs a name.`); return; }
  if (trimmed !== old && state.speakers.some((s) => s.name === trimmed)) { refuse(`There is a speaker named ${trimmed} already.`); return; }
  field.removeAttribute('aria-invalid');
  say('conversation-error');
  if (trimmed === old) return;
  state.speakers[index].name = trimmed;
  field.value = trimmed;
  field.closest('li').dataset.speaker = trimmed;
  for (const message of state.messages) if (message.speaker === old) message.speaker = trimmed;
  const said = state.extra.speakers;
  if (said && old in said) { said[trimmed] = said[old]; delete said[old]; }
  if (old in state.planned) { state.planned[trimmed] = state.planned[old]; delete state.planned[old]; }
  showSpeakerChoices({ from: old, to: trimmed });
  plan();
}

function addSpeaker() {
  let n = state.speakers.length + 1;
  while (state.speakers.some((s) => s.name === `Speaker ${n}`)) n += 1;
  state.speakers.push({ name: `Speaker ${n}`, voice: '' });
  showSpeakers();
  plan();
  $('speakers').lastElementChild.querySelector('input').focus();
}

function removeSpeaker(index) {
  const name = state.speakers[index].name;
  if (state.messages.some((m) => m.speaker === name)) {
    say('conversation-error', new Error(`${name} still has messages: remove or reassign them first.`));
    return;
  }
  state.speakers.splice(index, 1);
  showSpeakers();
  plan();
  const next = $('speakers').children[Math.min(index, state.speakers.length - 1)];
  (next ? next.querySelector('input') : $('add-speaker')).focus();
}

function showMessages() {
  const names = state.speakers.map((s) => s.name);
  const items = state.messages.map((message, index) => {
    const n = index + 1;
    const speaker = element('select', { 'aria-label': `Message ${n} speaker`,
      on: { change: (event) => { state.messages[index].speaker = event.target.value; plan(); } } },
    names.map((name) => element('option', { value: name, text: name })));
    speaker.value = message.speaker;
    const body = message.clip || message.inline
      ? element('span', { className: 'clip', text: `Recorded clip: ${message.label}` })
      : element('textarea', { rows: 2, value: message.text || '', 'aria-label': `Message ${n} text`,
        on: { input: (event) => { state.messages[index].text = event.target.value; } } });
    const gap = element('input', { type: 'number', min: '-60000', max: '60000', step: '50', size: 6,
      value: message.gap_ms ?? '', placeholder: 'gap', 'aria-label': `Gap before message ${n} (ms)`,
      on: { input: (event) => { const v = event.target.value; if (v === '') delete state.messages[index].gap_ms; else state.messages[index].gap_ms = Number(v); } } });
    const up = element('button', { type: 'button', text: '↑', 'aria-label': `Move message ${n} up`, disabled: index === 0,
      on: { click: () => moveMessage(index, -1) } });
    const down = element('button', { type: 'button', text: '↓', 'aria-label': `Move message ${n} down`,
      disabled: index === state.messages.length - 1, on: { click: () => moveMessage(index, 1) } });
    const remove = element('button', { type: 'button', text: 'Remove', 'aria-label': `Remove message ${n}`,
      on: { click: () => removeMessage(index) } });
    return element('li', { data: { index: String(index) } }, [element('div', { className: 'row' }, [speaker, body, gap, up, down, remove])]);
  });
  $('messages').replaceChildren(...items);
}

function removeMessage(index) {
  state.messages.splice(index, 1);
  showMessages();
  plan();
  const next = $('messages').children[Math.min(index, state.messages.length - 1)];
  (next ? next.querySelector('select') : $('add-message')).focus();
}

function moveMessage(index, by) {
  const [message] = state.messages.splice(index, 1);
  state.messages.splice(index + by, 0, message);
  showMessages();
  const button = $('messages').children[index + by].querySelectorAll('button')[by < 0 ? 0 : 1];
  if (button && !button.disabled) button.focus();
}

function ensureSpeaker() {
  if (!state.speakers.length) state.speakers.push({ name: 'Speaker 1', voice: '' });
  return state.speakers[state.speakers.length > 1 && state.messages.length ? state.messages.length % state.speakers.length : 0].name;
}

function addMessage() {
  const speaker = ensureSpeaker();
  state.messages.push({ speaker, text: '' });
  showSpeakers();
  $('messages').lastElementChild.querySelector('textarea').focus();
}

async function addClip(file) {
  say('conversation-error');
  if (!file) return;
  try {
    const clip = await (await api('/v1/clips', { method: 'POST', body: file, headers: { 'Content-Type': 'application/octet-stream' } })).json();
    const speaker = ensureSpeaker();
    state.messages.push({ speaker, clip: clip.id, label: `${file.name || 'recording'} (${clip.duration.toFixed(1)} s)` });
    showSpeakers();
  } catch (error) {
    say('conversation-error', error);
  }
}

/** The intro's or outro's row: its kind, who says its line and the line, or its clip. */
function bookendRow(which, title) {
  const kinds = [['', 'none'], ['line', 'a line a speaker says'], ['clip', 'a recorded clip (a jingle)']];
  $('bookends').append(element('div', { className: 'row' }, [
    element('label', { htmlFor: `${which}-kind`, text: title }),
    element('select', { id: `${which}-kind` }, kinds.map(([value, text]) => element('option', { value, text }))),
    element('select', { id: `${which}-speaker`, 'aria-label': `Who says the ${which}`, hidden: true }),
    element('input', { id: `${which}-text`, type: 'text', size: 40, 'aria-label': `The ${which}'s line`, hidden: true }),
    element('input', { id: `${which}-file`, type: 'file', accept: 'audio/*', 'aria-label': `The ${which}'s clip`, hidden: true }),
    element('span', { id: `${which}-clip` }),
  ]));
}

/** Shows the fields of the intro's or outro's kind (a line a speaker says, or a clip). */
function showBookend(which) {
  const kind = $(`${which}-kind`).value;
  $(`${which}-speaker`).hidden = kind !== 'line';
  $(`${which}-text`).hidden = kind !== 'line';
  $(`${which}-file`).hidden = kind !== 'clip';
  const clip = state.bookends[which];
  $(`${which}-clip`).textContent = kind === 'clip' && clip ? clip.label : '';
}

async function uploadBookend(which, file) {
  say('around-error');
  if (!file) return;
  try {
    const clip = await (await api('/v1/clips', { method: 'POST', body: file, headers: { 'Content-Type': 'application/octet-stream' } })).json();
    state.bookends[which] = { clip: clip.id, label: `${file.name} (${clip.duration.toFixed(1)} s)` };
  } catch (error) {
    say('around-error', error);
  }
  if (which === 'music') $('music-clip').textContent = state.bookends.music ? state.bookends.music.label : '';
  else showBookend(which);
}

/** The intro or outro as the render takes it, or nothing. */
function bookend(which) {
  const kind = $(`${which}-kind`).value;
  const text = $(`${which}-text`).value.trim();
  const kept = state.bookendKept[which];
  if (kind === 'line' && text) return { ...kept, speaker: $(`${which}-speaker`).value, text };
  if (kind === 'clip' && state.bookends[which]) return { ...kept, ...recording(state.bookends[which]) };
  return null;
}

/** A recording as the service takes it: an uploaded clip's id, or inline bytes an imported conversation carried. */
function recording(part) { return part.clip ? { clip: part.clip } : { audio_base64: part.inline }; }

/** An imported recording (`clip` or `audio_base64`) as the page keeps it, or nothing for a path (which the service
 *  never reads). */
function importedRecording(part) {
  if (typeof part.clip === 'string') return { clip: part.clip, label: `clip ${part.clip.slice(0, 12)}` };
  if (typeof part.audio_base64 === 'string') return { inline: part.audio_base64, label: 'a recording carried in the file' };
  return null;
}

function conversation() {
  const body = { ...state.extra };
  const gap = $('gap').value;
  if (gap !== '') body.gap_ms = Number(gap);
  // Voices by speaker (`voices`); what else is said of a speaker (`speakers`: sounds) kept as imported.
  const voices = {};
  const speakers = {};
  for (const speaker of state.speakers) {
    if (speaker.voice) voices[speaker.name] = speaker.voice;
    const kept = state.extra.speakers && state.extra.speakers[speaker.name];
    if (kept) speakers[speaker.name] = kept;
  }
  if (Object.keys(voices).length) body.voices = voices; else delete body.voices;
  if (Object.keys(speakers).length) body.speakers = speakers; else delete body.speakers;
  body.messages = state.messages.map((m) => {
    const message = { ...(m.kept || {}), speaker: m.speaker };
    if (m.clip || m.inline) {
      Object.assign(message, recording(m));
      if (m.text) message.text = m.text;  // a recording's words, aligned to it
    } else {
      message.text = m.text || '';
    }
    if (m.gap_ms !== undefined) message.gap_ms = m.gap_ms;
    return message;
  });
  for (const which of ['intro', 'outro']) {
    const part = bookend(which);
    if (part) body[which] = part; else delete body[which];
  }
  if (state.bookends.music) {
    body.music = { ...(state.extra.music || {}), ...recording(state.bookends.music), loop: $('music-loop').checked };
    // Left empty: the engine's default.
    if ($('music-level').value !== '') body.music.level_lu = Number($('music-level').value);
    if ($('music-duck').value !== '') body.music.duck_db = Number($('music-duck').value);
  } else {
    delete body.music;
  }
  if ($('preset').value) body.loudness_preset = $('preset').value; else delete body.loudness_preset;
  body.output = { ...(state.extra.output || {}), format: $('format').value };
  return body;
}

function load(imported) {
  if (!imported || typeof imported !== 'object' || !Array.isArray(imported.messages)) {
    throw new Error('Not a Chorus conversation: it needs a "messages" list.');
  }
  const { speakers = {}, voices = {}, messages, gap_ms: gap, loudness_preset: preset, intro, outro, music, ...rest } = imported;
  const names = [];
  const list = [];
  const problems = [];
  for (const [index, message] of messages.entries()) {
    if (!message || typeof message !== 'object') { problems.push(`messages[${index}] is not a message`); continue; }
    const { speaker, text, clip, gap_ms: messageGap, audio, audio_base64: inline, ...kept } = message;
    const name = typeof speaker === 'string' && speaker.trim() ? speaker.trim() : 'Speaker 1';
    const entry = { speaker: name, kept, text: typeof text === 'string' ? text : '' };
    const heard = importedRecording(message);
    if (heard) Object.assign(entry, heard);
    else if (audio) { problems.push(`messages[${index}] names a recording by its path (${audio}): upload it as a clip`); continue; }
    if (!names.includes(name)) names.push(name);
    if (typeof messageGap === 'number') entry.gap_ms = messageGap;
    list.push(entry);
  }
  for (const [which, part] of [['intro', intro], ['outro', outro]]) {
    state.bookends[which] = null;
    state.bookendKept[which] = {};
    $(`${which}-kind`).value = '';
    $(`${which}-text`).value = '';
    if (!part || typeof part !== 'object') continue;
    const { speaker: _speaker, text: _text, clip: _clip, audio: _audio, audio_base64: _inline, ...kept } = part;
    state.bookendKept[which] = kept;
    const heard = importedRecording(part);
    if (heard) {
      $(`${which}-kind`).value = 'clip';
      state.bookends[which] = heard;
    } else if (typeof part.text === 'string') {
      $(`${which}-kind`).value = 'line';
      $(`${which}-text`).value = part.text;
      if (typeof part.speaker === 'string' && !names.includes(part.speaker)) names.push(part.speaker);
    } else {
      problems.push(`the ${which} names a recording by its path: upload it as a clip`);
    }
  }
  state.bookends.music = null;
  if (music && typeof music === 'object') {
    const heard = importedRecording(music);
    if (heard) {
      state.bookends.music = heard;
      if (typeof music.level_lu === 'number') $('music-level').value = String(music.level_lu);
      if (typeof music.duck_db === 'number') $('music-duck').value = String(music.duck_db);
      if (typeof music.loop === 'boolean') $('music-loop').checked = music.loop;
    } else {
      problems.push('the music bed names a recording by its path: upload it as a clip');
    }
  }
  $('music-clip').textContent = state.bookends.music ? state.bookends.music.label : '';
  for (const name of Object.keys(speakers)) if (!names.includes(name)) names.push(name);
  state.speakers = names.map((name) => ({ name, voice: typeof voices[name] === 'string' ? voices[name] : '' }));
  state.messages = list;
  state.extra = { ...rest, speakers };
  if (music && typeof music === 'object') {
    const { clip, audio, audio_base64: inline, level_lu: level, duck_db: duck, loop, ...settings } = music;
    state.extra.music = settings;  // fades: kept as imported
  }
  delete state.extra.messages;
  $('gap').value = typeof gap === 'number' ? String(gap) : '300';
  $('preset').value = typeof preset === 'string' ? preset : '';
  if (rest.output && typeof rest.output.format === 'string') $('format').value = rest.output.format;
  showSpeakers();
  for (const which of ['intro', 'outro']) {
    if (intro && which === 'intro' && typeof intro.speaker === 'string') $('intro-speaker').value = intro.speaker;
    if (outro && which === 'outro' && typeof outro.speaker === 'string') $('outro-speaker').value = outro.speaker;
    showBookend(which);
  }
  plan();
  if (problems.length) throw new Error(`Imported with gaps: ${problems.join('; ')}.`);
}

async function importFile(file) {
  say('conversation-error');
  if (!file) return;
  try {
    load(JSON.parse(await file.text()));
    status('render-status', `Imported ${file.name}.`);
  } catch (error) {
    say('conversation-error', error instanceof SyntaxError ? new Error(`${file.name}: not JSON (${error.message})`) : error);
  }
}

function exportFile() {
  download(new Blob([JSON.stringify(conversation(), null, 2) + '\n'], { type: 'application/json' }), 'conversation.json');
}

/** Shows a refused render's reason beside what it names too — a message (`messages[N]…`), a speaker (`voices.NAME`,
 *  `speakers.NAME`), the intro, outro or music — and moves there. `{}` clears what an earlier one marked. */
function markField(error) {
  const conversation = $('conversation');
  for (const old of conversation.querySelectorAll('li .error')) old.remove();
  for (const old of conversation.querySelectorAll('[aria-invalid]')) old.removeAttribute('aria-invalid');
  say('around-error');
  const field = error.field || error.message || '';
  const message = /^messages\[(\d+)\]/.exec(field);
  const speaker = /^(?:voices|speakers)\.(.+?)(?:\.|$)/.exec(field);
  let item = null;
  let label = '';
  if (message) {
    item = $('messages').children[Number(message[1])];
    label = `Message ${Number(message[1]) + 1}: `;
  } else if (speaker) {
    item = [...$('speakers').children].find((li) => li.dataset.speaker === speaker[1]);
  } else if (/^(intro|outro|music)\b/.test(field)) {
    say('around-error', error);
    const which = field.slice(0, 5);
    const control = $(`${which}-kind`) || $('music-file');
    control.setAttribute('aria-invalid', 'true');
    control.focus();
    return;
  }
  if (!item) return;
  item.append(element('p', { className: 'error', role: 'alert', text: label + error.message }));
  const control = item.querySelector('textarea') || item.querySelector('select');
  control.setAttribute('aria-invalid', 'true');
  control.focus();
}

async function render() {
  say('render-error');
  markField({});
  if (!state.messages.length) { say('render-error', new Error('Add a message first.')); return; }
  const button = $('render');
  const progress = $('render-progress');
  button.disabled = true;
  progress.hidden = false;
  progress.value = 0;
  status('render-status', 'Sending…');
  try {
    let manifest = await (await api('/v1/renders', { ...json(conversation()), headers: { 'Content-Type': 'application/json', Prefer: 'respond-async' } })).json();
    if (manifest.status !== 'done') {
      let failed = null;
      await follow(`/v1/renders/${encodeURIComponent(manifest.id)}/events`, (event, data) => {
        if (event === 'progress' && data.total) {
          progress.value = (data.synthesized + data.rendered) / (2 * data.total);
          status('render-status', `${data.synthesized} of ${data.total} messages spoken, ${data.rendered} placed`);
        } else if (event === 'done') {
          manifest = data;
          return false;
        } else if (event === 'error') {
          failed = new Error((data.error && data.error.message) || data.message || 'the render failed');
          failed.field = (data.error && data.error.field) || null;
          return false;
        }
        return true;
      });
      if (failed) throw failed;
    }
    if (manifest.status !== 'done') manifest = await (await api(`/v1/renders/${encodeURIComponent(manifest.id)}`)).json();
    if (manifest.status !== 'done') throw new Error(`The render ended ${manifest.status}.`);
    progress.value = 1;
    status('render-status', typeof manifest.duration === 'number' ? `Rendered ${manifest.duration.toFixed(1)} s.` : 'Rendered.');
    await showResult(manifest);
  } catch (error) {
    say('render-error', error);
    markField(error);
    status('render-status', '');
  } finally {
    button.disabled = false;
    progress.hidden = true;
  }
}

async function showResult(manifest) {
  const id = encodeURIComponent(manifest.id);
  // The player's route answers the key with a signed link (303), which fetch follows: the frame gets that link.
  const player = await api(`/v1/renders/${id}/player`);
  const format = $('format').value;
  const parts = [
    ['audio', `Audio (${format.toUpperCase()})`, `chorus-${manifest.id.slice(0, 8)}.${format}`],
    ['timeline', 'Timeline (JSON)', 'timeline.json'],
    ['captions.vtt', 'Captions (WebVTT)', 'captions.vtt'],
    ['waveform', 'Peaks (JSON)', 'peaks.json'],
    ['waveform.png', 'Picture (PNG)', 'waveform.png'],
  ];
  $('downloads').replaceChildren(element('span', { text: 'Download:' }), ...parts.map(([part, label, name]) => element('button', {
    type: 'button', text: label, data: { part },
    on: { click: async () => {
      say('render-error');
      try { download(await (await api(`/v1/renders/${id}/${part}`)).blob(), name); } catch (error) { say('render-error', error); }
    } },
  })));
  $('result').hidden = false;
  const frame = $('player');
  frame.src = player.url;
  document.body.dataset.render = manifest.id;
}

// ---- Recording -----------------------------------------------------------------------------------------------------

/** A button that records from the microphone while pressed; `done(file)` gets the recording. */
function recorder(buttonId, errorId, done) {
  let recording = null;
  let starting = false;
  $(buttonId).addEventListener('click', async () => {
    const button = $(buttonId);
    if (recording) { recording.stop(); return; }
    if (starting) return;  // still asking for the microphone
    say(errorId);
    starting = true;
    let stream = null;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const chunks = [];
      recording = new MediaRecorder(stream);
      recording.addEventListener('dataavailable', (event) => chunks.push(event.data));
      recording.addEventListener('stop', () => {
        stream.getTracks().forEach((track) => track.stop());
        const type = recording.mimeType || 'audio/webm';
        recording = null;
        button.setAttribute('aria-pressed', 'false');
        button.textContent = button.dataset.label;
        done(new File(chunks, `recording.${type.includes('ogg') ? 'ogg' : 'webm'}`, { type }));
      });
      recording.start();
      button.dataset.label = button.dataset.label || button.textContent;
      button.setAttribute('aria-pressed', 'true');
      button.textContent = 'Stop recording';
    } catch (error) {
      recording = null;
      if (stream) stream.getTracks().forEach((track) => track.stop());
      say(errorId, new Error(`The microphone is not available (${error.message}).`));
    } finally {
      starting = false;
    }
  });
}

// ---- Listen --------------------------------------------------------------------------------------------------------

let listened = null;

function chooseListenFile(file) {
  listened = file || null;
  const audio = $('listen-audio');
  if (audio.src) URL.revokeObjectURL(audio.src);
  if (!file) { audio.hidden = true; return; }
  audio.src = URL.createObjectURL(file);
  audio.hidden = false;
  $('listen-words').replaceChildren();
}

async function listen(align) {
  say('listen-error');
  const file = listened || $('listen-file').files[0];
  if (!file) { say('listen-error', new Error('Choose or record a clip first.')); return; }
  const text = $('align-text').value.trim();
  if (align && !text) { say('listen-error', new Error('Write the words said in the clip to time them.')); return; }
  const form = new FormData();
  form.append('file', file, file.name || 'clip');
  form.append('model', $('listen-model').value);
  form.append('response_format', 'verbose_json');
  form.append('timestamp_granularities[]', 'word');
  const language = $('listen-language').value.trim();
  if (language) form.append('language', language);
  if (align) form.append('text', text);
  status('listen-status', align ? 'Timing the words…' : 'Listening…');
  try {
    const heard = await (await api(align ? '/v1/audio/alignments' : '/v1/audio/transcriptions', { method: 'POST', body: form })).json();
    const words = (heard.words || []).map((word) => element('span', {
      text: word.word.trim(), tabIndex: 0, role: 'button', 'aria-label': `${word.word.trim()} at ${word.start.toFixed(2)} s`,
      data: { start: String(word.start), end: String(word.end) },
      on: { click: (event) => seekTo(event.target), keydown: (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); seekTo(event.target); } } },
    }));
    const spaced = [];
    for (const word of words) spaced.push(word, ' ');
    $('listen-words').replaceChildren(...spaced);
    status('listen-status', `${words.length} words in ${heard.duration ? heard.duration.toFixed(1) : '?'} s; language: ${heard.language || 'unknown'}${language ? '' : ' (detected)'}`);
    document.body.dataset.listenLanguage = heard.language || '';
  } catch (error) {
    status('listen-status', '');
    say('listen-error', error);
  }
}

function seekTo(word) {
  const audio = $('listen-audio');
  audio.currentTime = Number(word.dataset.start);
  audio.play().catch(() => {});
}

function highlightWord() {
  const t = $('listen-audio').currentTime;
  for (const word of $('listen-words').querySelectorAll('span')) {
    const on = Number(word.dataset.start) <= t && t < Number(word.dataset.end);
    if (on) word.setAttribute('aria-current', 'true'); else word.removeAttribute('aria-current');
  }
}

async function loadModels() {
  try {
    const health = await (await fetch('/health', { cache: 'no-store' })).json();
    const models = Object.keys(health.transcription_models || {});
    if (models.length) {
      $('listen-model').replaceChildren(element('option', { value: 'whisper-1', text: "the service's default" }),
        ...models.map((m) => element('option', { value: m, text: m })));
    }
  } catch (_) { /* the default model stays */ }
}

// ---- Pronunciations ------------------------------------------------------------------------------------------------

async function loadLexicons() {
  const load = ++loads.lexicons;
  try {
    const list = await (await api('/v1/lexicons')).json();
    if (load !== loads.lexicons) return;
    $('lexicon-names').replaceChildren(...list.lexicons.map((l) => element('option', { value: l.name })));
  } catch (error) {
    if (load === loads.lexicons) say('lexicon-error', error);
  }
}

/** What each entry row says besides its word, alias and IPA (`case_sensitive`), kept as it was read. */
const entryKept = new WeakMap();

function entryRow(word = '', alias = '', ipa = '', kept = {}) {
  const index = $('lexicon-table').tBodies[0].children.length + 1;
  const cells = [
    element('input', { type: 'text', value: word, 'aria-label': `Entry ${index}: written word` }),
    element('input', { type: 'text', value: alias, 'aria-label': `Entry ${index}: said as` }),
    element('input', { type: 'text', value: ipa, 'aria-label': `Entry ${index}: IPA` }),
  ];
  const row = element('tr', {}, cells.map((cell) => element('td', {}, [cell])));
  entryKept.set(row, kept);
  row.append(element('td', {}, [
    element('button', { type: 'button', text: 'Say it', 'aria-label': `Say it: entry ${index}`,
      on: { click: () => sayEntry(cells[0].value) } }),
    element('button', { type: 'button', text: 'Remove', 'aria-label': `Remove entry ${index}`,
      on: { click: () => { row.remove(); $('lexicon-add').focus(); } } }),
  ]));
  $('lexicon-table').tBodies[0].append(row);
  return cells[0];
}

function entries() {
  const result = {};
  for (const row of $('lexicon-table').tBodies[0].children) {
    const [word, alias, ipa] = [...row.querySelectorAll('input')].map((input) => input.value.trim());
    if (!word) continue;
    const kept = entryKept.get(row) || {};
    if (!ipa && !Object.keys(kept).length) { result[word] = alias; continue; }
    result[word] = { ...kept };
    if (alias) result[word].alias = alias;
    if (ipa) result[word].ipa = ipa;
  }
  return result;
}

async function openLexicon() {
  say('lexicon-error');
  const name = $('lexicon-name').value.trim();
  if (!name) { say('lexicon-error', new Error('Name the lexicon (letters, digits, - and _).')); return; }
  state.lexicon = null;
  $('lexicon-table').tBodies[0].replaceChildren();
  try {
    const lexicon = await (await api(`/v1/lexicons/${encodeURIComponent(name)}`)).json();
    for (const [word, entry] of Object.entries(lexicon.entries || {})) {
      if (typeof entry === 'string') entryRow(word, entry);
      else {
        const { alias, ipa, ...kept } = entry;
        entryRow(word, alias || '', ipa || '', kept);
      }
    }
    status('lexicon-status', `${name}: ${lexicon.entry_count} entries`);
  } catch (error) {
    if (error.status !== 404) { say('lexicon-error', error); return; }
    status('lexicon-status', `${name} is new: add entries and save.`);
  }
  state.lexicon = name;
  if (!$('lexicon-table').tBodies[0].children.length) entryRow();
}

async function saveLexicon() {
  say('lexicon-error');
  const name = $('lexicon-name').value.trim();
  if (!name) { say('lexicon-error', new Error('Name the lexicon first.')); return; }
  if (name !== state.lexicon) {
    say('lexicon-error', new Error(`Open ${name} first: the entries shown are ${state.lexicon ? `${state.lexicon}'s` : 'no lexicon\'s'}.`));
    return;
  }
  try {
    const saved = await (await api(`/v1/lexicons/${encodeURIComponent(name)}`, { ...json({ entries: entries() }), method: 'PUT' })).json();
    state.lexicon = name;
    status('lexicon-status', `Saved ${saved.name}: ${saved.entry_count} entries.`);
    document.body.dataset.lexiconSaved = saved.name;
    loadLexicons();
  } catch (error) {
    say('lexicon-error', error);
  }
}

async function sayEntry(word) {
  if (!word.trim()) { say('lexicon-error', new Error('Write the word first.')); return; }
  await playSample($('lexicon-voice').value || defaultVoice(), word, 'lexicon-error', entries());
}

// ---- Start ---------------------------------------------------------------------------------------------------------

/** Loads what the key reaches; returns whether the service accepted it. */
async function loadAll() {
  const accepted = await loadVoices();
  plan();
  loadLexicons();
  return accepted;
}

function start() {
  $('key-form').addEventListener('submit', useKey);
  $('key-forget').addEventListener('click', forgetKey);
  $('voice-filter').addEventListener('input', showVoices);
  $('voice-provider').addEventListener('change', showVoices);
  $('blend-add').addEventListener('click', () => addBlendPart());
  $('blend-play').addEventListener('click', playBlend);
  $('make-start').addEventListener('click', makeVoice);
  $('add-speaker').addEventListener('click', addSpeaker);
  $('add-message').addEventListener('click', addMessage);
  $('add-clip').addEventListener('change', (event) => { addClip(event.target.files[0]); event.target.value = ''; });
  recorder('record-clip', 'conversation-error', addClip);
  recorder('make-record', 'make-error', (file) => {
    state.recordings.push(new File([file], `recording-${state.recordings.length + 1}.${file.name.split('.').pop()}`, { type: file.type }));
    status('make-recorded', `${state.recordings.length} from the microphone`);
  });
  $('import-file').addEventListener('change', (event) => { importFile(event.target.files[0]); event.target.value = ''; });
  $('export').addEventListener('click', exportFile);
  $('render').addEventListener('click', render);
  bookendRow('intro', 'Intro');
  bookendRow('outro', 'Outro');
  for (const which of ['intro', 'outro']) {
    $(`${which}-kind`).addEventListener('change', () => { showBookend(which); plan(); });
    $(`${which}-speaker`).addEventListener('change', plan);
    $(`${which}-file`).addEventListener('change', (event) => { uploadBookend(which, event.target.files[0]); event.target.value = ''; });
  }
  $('music-file').addEventListener('change', (event) => { uploadBookend('music', event.target.files[0]); event.target.value = ''; });
  $('music-remove').addEventListener('click', () => { state.bookends.music = null; $('music-clip').textContent = ''; });
  $('listen-file').addEventListener('change', (event) => chooseListenFile(event.target.files[0]));
  recorder('listen-record', 'listen-error', chooseListenFile);
  $('listen-go').addEventListener('click', () => listen(false));
  $('align-go').addEventListener('click', () => listen(true));
  $('listen-audio').addEventListener('timeupdate', highlightWord);
  $('listen-audio').addEventListener('seeked', highlightWord);
  $('lexicon-open').addEventListener('click', openLexicon);
  $('lexicon-add').addEventListener('click', () => entryRow().focus());
  $('lexicon-save').addEventListener('click', saveLexicon);
  status('key-status', key() ? 'Using the key kept for this tab.' : '');
  state.speakers = [{ name: 'Speaker 1', voice: '' }, { name: 'Speaker 2', voice: '' }];
  showSpeakers();
  document.body.dataset.ready = 'true';
  document.body.dataset.readyAt = String(performance.now());
  loadModels();
  loadAll();
}

document.addEventListener('DOMContentLoaded', start);
