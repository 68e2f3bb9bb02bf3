// timingbench labelling page: audio player + zoomable log-mel spectrogram, Layer 1 and 2.
// All times are seconds; onsets snap to the analysis frame grid (hop / sr).
"use strict";

const $ = (id) => document.getElementById(id);
const EVENT_COLORS = ["#4cc9f0", "#f4a261", "#90be6d", "#f15bb5", "#ffd166", "#a78bfa"];
const L2_COLOR = "#e9ecf2";
const CURSOR_COLOR = "rgba(255,255,255,0.55)";
const PLAYHEAD_COLOR = "#3dff8b";  // green: stands out against the magma colormap
const AXIS_H = 22;         // px of the time axis under the spectrogram
const FREQ_W = 44;         // px of the frequency axis left of it
const MAGMA = [[0, 0, 0, 4], [0.13, 28, 16, 68], [0.25, 79, 18, 123], [0.38, 129, 37, 129],
  [0.5, 181, 54, 122], [0.63, 229, 80, 100], [0.75, 251, 135, 97], [0.88, 254, 194, 135],
  [1, 252, 253, 191]];

const S = {
  session: null, clip: null, detail: null, lm: null, specImg: null,
  zoomIndex: 1, viewStart: 0, active: null, hoverT: null, newOnset: null,
  pending: 0, raf: 0, showVerdicts: true,
};

// ------------------------------------------------------------------ helpers

function lut() {
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const x = i / 255;
    let k = 0;
    while (k < MAGMA.length - 2 && MAGMA[k + 1][0] < x) k++;
    const [x0, r0, g0, b0] = MAGMA[k], [x1, r1, g1, b1] = MAGMA[k + 1];
    const f = (x - x0) / (x1 - x0);
    out[3 * i] = r0 + f * (r1 - r0); out[3 * i + 1] = g0 + f * (g1 - g0); out[3 * i + 2] = b0 + f * (b1 - b0);
  }
  return out;
}
const LUT = lut();

function enc(name) { return encodeURIComponent(name); }
function fmtT(t) { return t == null ? "—" : t.toFixed(3) + " s"; }
function fmtMs(d) { const ms = Math.round(d * 1000); return (ms > 0 ? "+" : ms < 0 ? "−" : "±") + Math.abs(ms) + " ms"; }
function frameDur() { return S.lm.hop / S.lm.sr; }
function snap(t) { const fd = frameDur(); return Math.round(Math.round(t / fd) * fd * 1e6) / 1e6; }
function totalDur() { return S.lm ? S.lm.n_frames * frameDur() : 0; }
function pxPerSec() { return S.session.zoom_px_per_s[S.zoomIndex]; }
function specW() { return $("spec").clientWidth - FREQ_W; }
function viewDur() { return specW() / pxPerSec(); }
function xForTime(t) { return FREQ_W + (t - S.viewStart) * pxPerSec(); }
function timeForX(x) { return S.viewStart + (x - FREQ_W) / pxPerSec(); }
function clampView() {
  S.viewStart = Math.max(0, Math.min(S.viewStart, Math.max(0, totalDur() - viewDur())));
}
function eventColor(i) { return EVENT_COLORS[i % EVENT_COLORS.length]; }
// the scorer's verdict on an instructed event (read-only layer; null without --results)
function verdictOf(id) {
  const vs = S.detail && S.detail.verdicts;
  return vs ? vs.find((v) => v.event_id === id) || null : null;
}
function verdictText(v) {
  if (v.outcome === "none") return `scorer: none` + (v.rejected_by ? ` (rejected by ${v.rejected_by})` : "");
  return `scorer: ${v.outcome} ${fmtMs(v.error_s)}`;
}
function typing() {
  const el = document.activeElement;
  return el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
}

function toast(msg) {
  const t = $("toast"); t.textContent = msg; t.hidden = false;
  clearTimeout(toast.timer); toast.timer = setTimeout(() => { t.hidden = true; }, 6000);
}

function setSave(state, text) { const s = $("save"); s.dataset.state = state; s.textContent = text; }

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  if (body !== undefined) { S.pending++; setSave("saving", "Saving…"); }
  try {
    const r = await fetch(path, opts);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
    if (body !== undefined && --S.pending === 0) {
      setSave("saved", "All changes saved " + new Date().toLocaleTimeString());
    }
    return data;
  } catch (e) {
    if (body !== undefined) { S.pending = Math.max(0, S.pending - 1); setSave("error", "Not saved"); }
    toast(e.message);
    throw e;
  }
}

// ------------------------------------------------------------------ loading

async function loadSession() {
  S.session = await api("/api/session");
  S.zoomIndex = S.session.default_zoom_index;
  $("who").textContent = `annotator ${S.session.annotator} · split ${S.session.split}`;
  const fam = $("l2-family");
  fam.innerHTML = '<option value="">family…</option>' +
    S.session.families.map((f) => `<option value="${f}">${f}</option>`).join("");
  const vt = $("verdicts-toggle");
  if (S.session.results) {
    vt.hidden = false; vt.title = `verdicts from ${S.session.results.path}`;
    $("show-verdicts").addEventListener("change", (ev) => { S.showVerdicts = ev.target.checked; renderLayers(); draw(); });
  }
  renderClipList();
  const firstOpen = S.session.clips.find((c) => c.l1_done < c.n_events || !c.l2_done);
  const start = S.session.last_clip || (firstOpen || S.session.clips[0]).clip;
  await openClip(start);
}

async function refreshSession() {
  const s = await api("/api/session");
  S.session.clips = s.clips;
  renderClipList();
}

function renderClipList() {
  const clips = S.session.clips;
  const l1 = clips.filter((c) => c.l1_done === c.n_events).length;
  const l2 = clips.filter((c) => c.l2_done).length;
  const pct = clips.length ? Math.round(100 * (l1 + l2) / (2 * clips.length)) : 0;
  $("progress").innerHTML = `Layer 1: <b>${l1}</b>/${clips.length} done · Layer 2: <b>${l2}</b>/${clips.length} done` +
    `<div class="bar"><i style="width:${pct}%"></i></div>`;
  $("cliplist").innerHTML = "";
  for (const c of clips) {
    const li = document.createElement("li");
    li.dataset.clip = c.clip;
    if (S.clip === c.clip) li.className = "current";
    const l1c = c.l1_done === c.n_events ? "done" : c.l1_done > 0 ? "part" : "";
    const l2c = c.l2_done ? "done" : c.l2_count > 0 ? "part" : "";
    li.innerHTML = `<span class="name"></span><span class="badges">` +
      `<span class="pill ${l1c}">L1 ${c.l1_done}/${c.n_events}</span>` +
      `<span class="pill ${l2c}">L2 ${c.l2_count}${c.l2_done ? " ✓" : ""}</span></span>`;
    li.querySelector(".name").textContent = c.clip;
    li.addEventListener("click", () => openClip(c.clip));
    $("cliplist").appendChild(li);
  }
}

async function openClip(name) {
  const audio = $("audio");
  audio.pause();
  S.clip = name;
  $("clipname").textContent = name;
  renderClipList();
  const [detail, lm] = await Promise.all([
    api(`/api/clip/${enc(name)}`), api(`/api/clip/${enc(name)}/logmel`),
  ]);
  S.detail = detail; S.lm = lm;
  buildSpecImage();
  audio.src = `/api/clip/${enc(name)}/audio`;
  $("export").href = `/api/clip/${enc(name)}/labels.txt`;
  $("duration").textContent = "/ " + detail.duration_s.toFixed(3) + " s";
  S.viewStart = 0; S.newOnset = null;
  fitZoom();
  const evs = detail.prompt.events;
  const todo = evs.find((e) => !(detail.layer1[e.id] || {}).complete);
  S.active = todo ? { type: "l1", id: todo.id } : evs.length ? { type: "l1", id: evs[0].id } : { type: "new" };
  renderPrompt(); renderLayers(); draw();
  api(`/api/clip/${enc(name)}/open`, {}).catch(() => {});
}

function buildSpecImage() {
  const { n_mels: nm, n_frames: nf, data } = S.lm;
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const cv = document.createElement("canvas");
  cv.width = nf; cv.height = nm;
  const ctx = cv.getContext("2d");
  const img = ctx.createImageData(nf, nm);
  for (let f = 0; f < nf; f++) {
    for (let m = 0; m < nm; m++) {
      const v = bytes[f * nm + m];
      const o = 4 * ((nm - 1 - m) * nf + f);  // low bands at the bottom
      img.data[o] = LUT[3 * v]; img.data[o + 1] = LUT[3 * v + 1]; img.data[o + 2] = LUT[3 * v + 2];
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  S.specImg = cv;
}

// ------------------------------------------------------------------ drawing

function sizeCanvas(cv) {
  const dpr = window.devicePixelRatio || 1;
  const w = cv.clientWidth, h = cv.clientHeight;
  if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) {
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
  }
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return [ctx, w, h];
}

function melOf(f) {  // Slaney mel scale (librosa's default)
  return f < 1000 ? f / (200 / 3) : 15 + Math.log(f / 1000) / (Math.log(6.4) / 27);
}

function niceStep(minSec) {
  for (const s of [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10]) if (s >= minSec) return s;
  return 10;
}

function draw() {
  if (!S.lm) return;
  clampView();
  const [ctx, w, h] = sizeCanvas($("spec"));
  const sh = h - AXIS_H, sw = w - FREQ_W;
  ctx.fillStyle = "#0c0f16"; ctx.fillRect(0, 0, w, h);
  // spectrogram
  const fd = frameDur();
  const sx = S.viewStart / fd, swf = viewDur() / fd;
  ctx.imageSmoothingEnabled = pxPerSec() * fd < 2;
  ctx.drawImage(S.specImg, sx, 0, swf, S.lm.n_mels, FREQ_W, 0, sw, sh);
  // frequency axis
  ctx.fillStyle = "#0c0f16"; ctx.fillRect(0, 0, FREQ_W, h);
  ctx.font = "10px system-ui, sans-serif"; ctx.fillStyle = "#8d96a8"; ctx.textAlign = "right";
  const mMax = melOf(S.lm.fmax_hz), step = mMax / (S.lm.n_mels + 1);
  for (const [f, lab] of [[100, "100"], [500, "500"], [1000, "1k"], [2000, "2k"], [5000, "5k"], [10000, "10k"]]) {
    if (f >= S.lm.fmax_hz) continue;
    const band = melOf(f) / step - 1;
    const y = sh - (band + 0.5) * sh / S.lm.n_mels;
    ctx.fillText(lab, FREQ_W - 6, y + 3);
    ctx.fillRect(FREQ_W - 4, y, 4, 1);
  }
  ctx.save(); ctx.translate(10, sh / 2); ctx.rotate(-Math.PI / 2); ctx.textAlign = "center";
  ctx.fillText("Hz (mel)", 0, 0); ctx.restore();
  // clip the overlays to the spectrogram area
  ctx.save(); ctx.beginPath(); ctx.rect(FREQ_W, 0, sw, h); ctx.clip();
  const evs = S.detail.prompt.events;
  evs.forEach((e, i) => {
    const col = eventColor(i), x = xForTime(e.time_s);
    if (e.tolerance_s) {
      ctx.fillStyle = col + "22";
      ctx.fillRect(xForTime(e.time_s - e.tolerance_s), 0, 2 * e.tolerance_s * pxPerSec(), sh);
    }
    ctx.strokeStyle = col; ctx.setLineDash([5, 4]); ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x + 0.5, 0); ctx.lineTo(x + 0.5, sh); ctx.stroke(); ctx.setLineDash([]);
    label(ctx, `${short(e.id)} ${e.target} @ ${e.time_s.toFixed(2)} s`, x + 4, 14, col);
    const rec = S.detail.layer1[e.id];
    if (rec && rec.occurred && rec.onset_s != null) {
      const ox = xForTime(rec.onset_s);
      ctx.strokeStyle = col; ctx.lineWidth = 2;
      ctx.beginPath(); ctx.moveTo(ox, 22); ctx.lineTo(ox, sh); ctx.stroke();
      ctx.fillStyle = col; ctx.beginPath(); ctx.moveTo(ox - 6, 22); ctx.lineTo(ox + 6, 22); ctx.lineTo(ox, 32); ctx.fill();
      label(ctx, `onset ${fmtMs(rec.onset_s - e.time_s)}`, ox + 8, 36, col);
    }
    const v = S.showVerdicts ? verdictOf(e.id) : null;
    if (v && v.detected_s != null) {
      const vx = xForTime(v.detected_s);
      ctx.strokeStyle = col; ctx.lineWidth = 1.5; ctx.setLineDash([1, 3]);
      ctx.beginPath(); ctx.moveTo(vx + 0.5, 40); ctx.lineTo(vx + 0.5, sh); ctx.stroke(); ctx.setLineDash([]);
      ctx.fillStyle = col; ctx.beginPath();
      ctx.moveTo(vx, sh - 58); ctx.lineTo(vx + 6, sh - 52); ctx.lineTo(vx, sh - 46); ctx.lineTo(vx - 6, sh - 52); ctx.fill();
      label(ctx, verdictText(v), vx + 8, sh - 48, col);
    } else if (v) {
      label(ctx, verdictText(v), x + 4, sh - 48, col);
    }
  });
  for (const r of S.detail.layer2) {
    const x = xForTime(r.onset_s), act = S.active && S.active.type === "l2" && S.active.id === r.id;
    ctx.strokeStyle = act ? "#ffffff" : "rgba(233,236,242,0.7)"; ctx.lineWidth = act ? 2 : 1;
    ctx.beginPath(); ctx.moveTo(x + 0.5, sh - 40); ctx.lineTo(x + 0.5, sh); ctx.stroke();
    label(ctx, r.source, x + 4, sh - 30, L2_COLOR);
  }
  if (S.newOnset != null && S.active && S.active.type === "new") {
    const x = xForTime(S.newOnset);
    ctx.strokeStyle = "#ffffff"; ctx.setLineDash([2, 3]);
    ctx.beginPath(); ctx.moveTo(x + 0.5, sh - 40); ctx.lineTo(x + 0.5, sh); ctx.stroke(); ctx.setLineDash([]);
  }
  if (S.hoverT != null) {
    const x = xForTime(S.hoverT);
    ctx.strokeStyle = CURSOR_COLOR; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(x + 0.5, 0); ctx.lineTo(x + 0.5, sh); ctx.stroke();
    label(ctx, S.hoverT.toFixed(3) + " s", x + 4, sh - 8, "#ffffff");
  }
  const pt = $("audio").currentTime, px = xForTime(pt);
  ctx.strokeStyle = PLAYHEAD_COLOR; ctx.lineWidth = 2;
  ctx.beginPath(); ctx.moveTo(px, 0); ctx.lineTo(px, sh); ctx.stroke();
  ctx.fillStyle = PLAYHEAD_COLOR;
  ctx.beginPath(); ctx.moveTo(px - 6, sh); ctx.lineTo(px + 6, sh); ctx.lineTo(px, sh - 9); ctx.fill();
  // time axis
  ctx.fillStyle = "#151a24"; ctx.fillRect(FREQ_W, sh, sw, AXIS_H);
  ctx.fillStyle = "#aab3c5"; ctx.textAlign = "left"; ctx.font = "10.5px system-ui, sans-serif";
  const tick = niceStep(70 / pxPerSec());
  for (let t = Math.ceil(S.viewStart / tick) * tick; t <= S.viewStart + viewDur(); t += tick) {
    const x = xForTime(t);
    ctx.fillRect(x, sh, 1, 5);
    ctx.fillText((tick < 1 ? t.toFixed(2) : t.toFixed(0)) + " s", x + 3, sh + 15);
  }
  ctx.restore();
  drawOverview();
  $("time").textContent = pt.toFixed(3) + " s";
  $("zoom").textContent = pxPerSec() + " px/s";
}

function short(id) { const k = id.lastIndexOf("/"); return k >= 0 ? id.slice(k + 1) : id; }

function label(ctx, text, x, y, col) {
  ctx.font = "11px system-ui, sans-serif"; ctx.textAlign = "left";
  const w = ctx.measureText(text).width;
  ctx.fillStyle = "rgba(12,15,22,0.72)"; ctx.fillRect(x - 2, y - 11, w + 6, 15);
  ctx.fillStyle = col; ctx.fillText(text, x + 1, y);
}

function drawOverview() {
  const [ctx, w, h] = sizeCanvas($("overview"));
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(S.specImg, 0, 0, S.lm.n_frames, S.lm.n_mels, 0, 0, w, h);
  const T = totalDur() || 1;
  ctx.fillStyle = "rgba(255,255,255,0.16)"; ctx.strokeStyle = "#ffffff"; ctx.lineWidth = 1;
  const x0 = S.viewStart / T * w, x1 = Math.min(w, (S.viewStart + viewDur()) / T * w);
  ctx.fillRect(x0, 0, x1 - x0, h); ctx.strokeRect(x0 + 0.5, 0.5, x1 - x0 - 1, h - 1);
  ctx.fillStyle = PLAYHEAD_COLOR; ctx.fillRect($("audio").currentTime / T * w - 1, 0, 2, h);
}

// ------------------------------------------------------------------ panels

function renderPrompt() {
  const p = S.detail.prompt;
  $("prompt-text").textContent = p.text;
  $("event-chips").innerHTML = "";
  p.events.forEach((e, i) => {
    const c = document.createElement("span");
    c.className = "chip"; c.style.borderColor = eventColor(i); c.style.color = "#1d2330";
    c.innerHTML = `<b style="color:${eventColor(i)}">●</b> `;
    c.append(`${short(e.id)} · ${e.kind} · ${e.target} (${e.family}) at ${e.time_s.toFixed(2)} s` +
      (e.tolerance_s != null ? ` ±${e.tolerance_s}` : ""));
    $("event-chips").appendChild(c);
  });
  if (!p.events.length) $("event-chips").innerHTML = '<span class="muted small">no timed events in this prompt (Layer 2 only)</span>';
}

function segButtons(values, current, cls, attr) {
  return values.map((v) => `<button type="button" class="btn ${cls || ""} ${String(current) === String(v) ? "on" : ""}" data-${attr}="${v}">${v}</button>`).join("");
}

function renderLayers() {
  const evs = S.detail.prompt.events;
  const box = $("l1-cards");
  box.innerHTML = "";
  let done = 0;
  evs.forEach((e, i) => {
    const rec = S.detail.layer1[e.id] || {};
    if (rec.complete) done++;
    const card = document.createElement("div");
    card.className = "slot" + (S.active && S.active.type === "l1" && S.active.id === e.id ? " active" : "");
    card.dataset.event = e.id;
    card.dataset.testid = "l1-" + e.id;
    let disp = "";
    if (rec.onset_s != null) {
      const d = rec.onset_s - e.time_s, inTol = e.tolerance_s != null && Math.abs(d) <= e.tolerance_s + 1e-9;
      disp = `<span class="disp ${inTol ? "in" : "out"}">${fmtMs(d)} vs instructed</span>`;
    }
    const status = rec.complete ? '<span class="pill done">complete</span>'
      : Object.keys(rec).length ? '<span class="pill part">draft</span>' : '<span class="pill">to do</span>';
    card.innerHTML =
      `<div class="l1-title"><span class="swatch" style="background:${eventColor(i)}"></span>` +
      `<span class="what"></span><span class="muted small">${e.kind} · ${e.time_s.toFixed(2)} s</span>` +
      `<span class="status">${status}</span></div>` +
      `<div class="l1-grid">` +
      `<span class="lbl">Occurred</span><span class="seg">` +
      `<button type="button" class="btn ${rec.occurred === true ? "on" : ""}" data-occ="yes">Yes</button>` +
      `<button type="button" class="btn no ${rec.occurred === false ? "on" : ""}" data-occ="no">No</button></span>` +
      `<span class="lbl">Onset</span><span><span class="onset-val" data-testid="onset">${rec.onset_s != null ? rec.onset_s.toFixed(3) + " s" : "click the spectrogram"}</span>${disp}</span>` +
      `<span class="lbl">Character</span><span class="seg">${segButtons(S.session.onset_characters, rec.onset_character, "", "char")}</span>` +
      `<span class="lbl">Salience</span><span class="seg">${segButtons([1, 2, 3], rec.salience, "", "sal")}</span>` +
      `</div>`;
    card.querySelector(".what").textContent = `${short(e.id)} · ${e.target}`;
    const v = verdictOf(e.id);
    if (v && S.showVerdicts) {
      const line = document.createElement("div");
      line.className = "verdict muted small"; line.dataset.testid = "verdict-" + e.id;
      line.textContent = verdictText(v) + (v.detected_s != null ? ` · detected ${v.detected_s.toFixed(3)} s` : "") +
        ` · ${v.detector} (read-only)`;
      card.appendChild(line);
    }
    card.addEventListener("click", (ev) => {
      S.active = { type: "l1", id: e.id };
      const b = ev.target.closest("button");
      if (b && b.dataset.occ) putL1(e.id, { occurred: b.dataset.occ === "yes" });
      else if (b && b.dataset.char) putL1(e.id, { onset_character: b.dataset.char });
      else if (b && b.dataset.sal) putL1(e.id, { salience: Number(b.dataset.sal) });
      else { renderLayers(); draw(); }
    });
    box.appendChild(card);
  });
  if (!evs.length) box.innerHTML = '<div class="empty">This prompt instructs no timed event.</div>';
  $("l1-status").textContent = evs.length ? `${done}/${evs.length} complete` : "";
  // Layer 2
  const tb = $("l2-rows");
  tb.innerHTML = "";
  for (const r of S.detail.layer2) {
    const tr = document.createElement("tr");
    tr.dataset.id = r.id;
    if (S.active && S.active.type === "l2" && S.active.id === r.id) tr.className = "active";
    tr.innerHTML = `<td class="onset-cell">${r.onset_s.toFixed(3)} s</td><td><input class="src"></td>` +
      `<td><select class="fam">${S.session.families.map((f) => `<option ${f === r.family ? "selected" : ""}>${f}</option>`).join("")}</select></td>` +
      `<td><select class="sal">${[1, 2, 3].map((v) => `<option ${v === r.salience ? "selected" : ""}>${v}</option>`).join("")}</select></td>` +
      `<td><button class="del" title="Delete (Del)">×</button></td>`;
    const src = tr.querySelector(".src"); src.value = r.source;
    src.addEventListener("change", () => putL2({ ...pick(r), source: src.value }));
    tr.querySelector(".fam").addEventListener("change", (ev) => putL2({ ...pick(r), family: ev.target.value }));
    tr.querySelector(".sal").addEventListener("change", (ev) => putL2({ ...pick(r), salience: Number(ev.target.value) }));
    tr.querySelector(".del").addEventListener("click", (ev) => { ev.stopPropagation(); delL2(r.id); });
    tr.addEventListener("click", () => { if (!(S.active && S.active.id === r.id)) { S.active = { type: "l2", id: r.id }; renderLayers(); draw(); } });
    tb.appendChild(tr);
  }
  if (!S.detail.layer2.length) tb.innerHTML = '<tr><td colspan="5" class="empty">No observed events yet: click the spectrogram, describe the source, Add.</td></tr>';
  $("l2-form").classList.toggle("active", !!(S.active && S.active.type === "new"));
  $("l2-new-onset").textContent = S.newOnset != null ? S.newOnset.toFixed(3) + " s" : "— (click)";
  $("l2-done").checked = !!S.detail.l2_done;
  renderTarget();
}

function pick(r) { return { id: r.id, source: r.source, family: r.family, onset_s: r.onset_s, salience: r.salience }; }

function renderTarget() {
  const a = S.active;
  let what = "nothing selected";
  if (a && a.type === "l1") {
    const e = S.detail.prompt.events.find((x) => x.id === a.id);
    what = `the onset of <b>${short(e.id)} · ${e.target}</b> (Layer 1)`;
  } else if (a && a.type === "l2") {
    const r = S.detail.layer2.find((x) => x.id === a.id);
    what = r ? `the onset of observed event <b></b> (Layer 2)` : what;
  } else if (a && a.type === "new") what = "a <b>new observed event</b> (Layer 2)";
  $("target").innerHTML = "Click the spectrogram to set " + what + ".";
  if (a && a.type === "l2") {
    const r = S.detail.layer2.find((x) => x.id === a.id);
    if (r) $("target").querySelector("b").textContent = r.source;
  }
}

// ------------------------------------------------------------------ edits

function applyRecord(rec) {
  S.detail.layer1[rec.event_id] = rec;
  renderLayers(); draw(); refreshSession();
}

async function putL1(eventId, fields) {
  const rec = await api(`/api/clip/${enc(S.clip)}/layer1`, { event_id: eventId, ...fields });
  applyRecord(rec);
}

async function putL2(fields) {
  const row = await api(`/api/clip/${enc(S.clip)}/layer2`, fields);
  const i = S.detail.layer2.findIndex((r) => r.id === row.id);
  if (i >= 0) S.detail.layer2[i] = row; else S.detail.layer2.push(row);
  S.detail.layer2.sort((a, b) => a.onset_s - b.onset_s);
  renderLayers(); draw(); refreshSession();
  return row;
}

async function delL2(id) {
  await api(`/api/clip/${enc(S.clip)}/layer2/delete`, { id });
  S.detail.layer2 = S.detail.layer2.filter((r) => r.id !== id);
  if (S.active && S.active.id === id) S.active = { type: "new" };
  renderLayers(); draw(); refreshSession();
}

async function addL2() {
  const source = $("l2-source").value.trim(), family = $("l2-family").value;
  if (S.newOnset == null) { toast("Set the onset first: click the spectrogram (or Enter at the playhead)."); return; }
  if (!source) { toast("Describe the source (e.g. 'kick drum')."); $("l2-source").focus(); return; }
  if (!family) { toast("Choose a family."); $("l2-family").focus(); return; }
  const row = await putL2({ source, family, onset_s: S.newOnset, salience: Number($("l2-salience").value) });
  $("l2-source").value = ""; S.newOnset = null;
  S.active = { type: "l2", id: row.id };
  document.activeElement && document.activeElement.blur();
  renderLayers(); draw();
}

function setOnset(t) {
  t = snap(Math.max(0, Math.min(t, totalDur())));
  const a = S.active;
  if (!a) return;
  if (a.type === "l1") {
    const rec = S.detail.layer1[a.id] || {};
    const fields = { onset_s: t };
    if (rec.occurred !== true) fields.occurred = true;
    putL1(a.id, fields);
  } else if (a.type === "l2") {
    const r = S.detail.layer2.find((x) => x.id === a.id);
    if (r) putL2({ ...pick(r), onset_s: t });
  } else {
    S.newOnset = t; renderLayers(); draw();
  }
}

function setSalience(v) {
  const a = S.active;
  if (!a) return;
  if (a.type === "l1") putL1(a.id, { salience: v });
  else if (a.type === "l2") { const r = S.detail.layer2.find((x) => x.id === a.id); if (r) putL2({ ...pick(r), salience: v }); }
  else $("l2-salience").value = String(v);
}

function slots() {
  return [...S.detail.prompt.events.map((e) => ({ type: "l1", id: e.id })),
    { type: "new" }, ...S.detail.layer2.map((r) => ({ type: "l2", id: r.id }))];
}

function moveSlot(d) {
  const all = slots();
  const i = all.findIndex((s) => S.active && s.type === S.active.type && s.id === S.active.id);
  S.active = all[Math.max(0, Math.min(all.length - 1, (i < 0 ? 0 : i) + d))];
  renderLayers(); draw();
}

// ------------------------------------------------------------------ player

function seek(t) {
  const audio = $("audio");
  audio.currentTime = Math.max(0, Math.min(t, audio.duration || totalDur()));
  follow(); draw();
}

function follow() {
  const t = $("audio").currentTime;
  if (t < S.viewStart || t > S.viewStart + viewDur()) S.viewStart = t - 0.1 * viewDur();
}

function tick() {
  follow(); draw();
  if (!$("audio").paused) S.raf = requestAnimationFrame(tick);
}

function togglePlay() {
  const audio = $("audio");
  if (audio.paused) audio.play().catch((e) => toast("Cannot play: " + e.message));
  else audio.pause();
}

function zoom(d, centerT) {
  const i = Math.max(0, Math.min(S.session.zoom_px_per_s.length - 1, S.zoomIndex + d));
  if (i === S.zoomIndex) return;
  const c = centerT != null ? centerT : $("audio").currentTime;
  const frac = (xForTime(c) - FREQ_W) / specW();
  S.zoomIndex = i;
  S.viewStart = c - (isFinite(frac) && frac >= 0 && frac <= 1 ? frac : 0.5) * viewDur();
  draw();
}

function fitZoom() {
  // the closest zoom that shows the whole clip, but never coarser than the default
  const z = S.session.zoom_px_per_s, T = totalDur();
  let best = S.session.default_zoom_index;
  for (let i = best; i < z.length; i++) if (T * z[i] <= specW()) best = i;
  S.zoomIndex = best;
}

// ------------------------------------------------------------------ wiring

function wire() {
  const audio = $("audio"), spec = $("spec");
  $("play").addEventListener("click", togglePlay);
  audio.addEventListener("play", () => { $("play").textContent = "❚❚ Pause"; cancelAnimationFrame(S.raf); S.raf = requestAnimationFrame(tick); });
  audio.addEventListener("pause", () => { $("play").textContent = "▶ Play"; draw(); });
  audio.addEventListener("seeked", draw);
  $("zoom-in").addEventListener("click", () => zoom(1));
  $("zoom-out").addEventListener("click", () => zoom(-1));
  spec.addEventListener("mousemove", (ev) => {
    const x = ev.offsetX;
    S.hoverT = x >= FREQ_W && S.lm ? snap(timeForX(x)) : null; draw();
  });
  spec.addEventListener("mouseleave", () => { S.hoverT = null; draw(); });
  spec.addEventListener("click", (ev) => {
    if (ev.offsetX < FREQ_W || !S.lm) return;
    const t = snap(timeForX(ev.offsetX));
    setOnset(t);
    audio.currentTime = t;
  });
  spec.addEventListener("wheel", (ev) => {
    if (!S.lm) return;
    ev.preventDefault();
    if (ev.ctrlKey || ev.metaKey) { zoom(ev.deltaY < 0 ? 1 : -1, timeForX(ev.offsetX)); return; }
    const d = Math.abs(ev.deltaX) > Math.abs(ev.deltaY) ? ev.deltaX : ev.deltaY;
    S.viewStart += d / pxPerSec(); draw();
  }, { passive: false });
  const ov = $("overview");
  const ovJump = (ev) => { S.viewStart = ev.offsetX / ov.clientWidth * totalDur() - viewDur() / 2; draw(); };
  ov.addEventListener("mousedown", (ev) => { ovJump(ev); const mv = (e) => ovJump(e); ov.addEventListener("mousemove", mv); window.addEventListener("mouseup", () => ov.removeEventListener("mousemove", mv), { once: true }); });
  $("l2-form").addEventListener("submit", (ev) => { ev.preventDefault(); addL2(); });
  $("l2-form").addEventListener("click", () => { if (!(S.active && S.active.type === "new")) { S.active = { type: "new" }; renderLayers(); draw(); } });
  $("l2-done").addEventListener("change", async (ev) => {
    await api(`/api/clip/${enc(S.clip)}/layer2-done`, { done: ev.target.checked });
    S.detail.l2_done = ev.target.checked; refreshSession();
  });
  $("import-btn").addEventListener("click", () => $("import-file").click());
  $("import-file").addEventListener("change", async (ev) => {
    const f = ev.target.files[0]; if (!f) return;
    const text = await f.text(); ev.target.value = "";
    const res = await api(`/api/clip/${enc(S.clip)}/import-audacity`, { text, filename: f.name });
    toast(`Imported ${res.imported} label(s) from ${f.name}`);
    $("toast").style.background = "#173b2a";
    await openClip(S.clip); $("toast").style.background = "";
  });
  window.addEventListener("resize", draw);
  document.addEventListener("keydown", onKey);
}

function onKey(ev) {
  if (!S.detail) return;
  if (ev.key === "Escape") { document.activeElement && document.activeElement.blur(); return; }
  if (typing() || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const audio = $("audio"), k = ev.key;
  const step = ev.shiftKey ? frameDur() : S.session.seek_step_s;
  let handled = true;
  if (k === " ") togglePlay();
  else if (k === "ArrowLeft") seek(audio.currentTime - step);
  else if (k === "ArrowRight") seek(audio.currentTime + step);
  else if (k === "+" || k === "=") zoom(1);
  else if (k === "-" || k === "_") zoom(-1);
  else if (k === "ArrowUp") moveSlot(-1);
  else if (k === "ArrowDown") moveSlot(1);
  else if (k === "Enter" || k === "o") setOnset(audio.currentTime);
  else if (k === "1" || k === "2" || k === "3") setSalience(Number(k));
  else if ((k === "y" || k === "n") && S.active && S.active.type === "l1") putL1(S.active.id, { occurred: k === "y" });
  else if ("hsg".includes(k) && k.length === 1 && S.active && S.active.type === "l1") putL1(S.active.id, { onset_character: { h: "hard", s: "soft", g: "gradual" }[k] });
  else if (k === "a") { S.active = { type: "new" }; S.newOnset = snap(audio.currentTime); renderLayers(); draw(); $("l2-source").focus(); }
  else if ((k === "Delete" || k === "Backspace") && S.active && S.active.type === "l2") delL2(S.active.id);
  else if (k === "[" || k === "]") {
    const names = S.session.clips.map((c) => c.clip), i = names.indexOf(S.clip);
    const j = i + (k === "]" ? 1 : -1);
    if (j >= 0 && j < names.length) openClip(names[j]);
  } else handled = false;
  if (handled) ev.preventDefault();
}

// for tests and scripts: map a time to a CSS-pixel x offset inside the spectrogram canvas
window.tbLabel = { xForTime: (t) => xForTime(t), state: S, ready: false };

wire();
loadSession().then(() => { window.tbLabel.ready = true; }).catch((e) => toast("Cannot load: " + e.message));
