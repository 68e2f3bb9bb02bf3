// timingbench report: a clip page's log-mel overlay, time axis, cursor and click-to-seek. No network.
(function () {
  "use strict";
  var d = JSON.parse(document.getElementById("tb-clip").textContent);
  var audio = document.getElementById("audio");
  var wrap = document.getElementById("spec-wrap");
  var api = { ready: false, endS: d.spec ? d.spec.end_s : null };
  window.tbReport = api;
  if (!d.spec || !wrap) { api.ready = true; return; }
  var end = d.spec.end_s;
  var overlay = document.getElementById("overlay");
  var cursor = document.getElementById("cursor");
  function pct(t) { return (100 * Math.max(0, Math.min(end, t)) / end) + "%"; }
  function mark(cls, t0, t1, title) {
    var el = document.createElement("div");
    el.className = "mark " + cls;
    el.style.left = pct(t0);
    if (t1 !== null) el.style.width = "calc(" + pct(t1) + " - " + pct(t0) + ")";
    if (title) el.title = title;
    overlay.appendChild(el);
    return el;
  }
  d.events.forEach(function (e) {
    if (e.window) mark("window", e.window[0], e.window[1], e.event_id + ": search window [" + e.window[0].toFixed(2) + ", " + e.window[1].toFixed(2) + "] s");
    if (e.instructed_s !== null) {
      mark("tolerance", e.instructed_s - e.tolerance_s, e.instructed_s + e.tolerance_s, e.event_id + ": tolerance ±" + e.tolerance_s + " s");
      var lab = mark("instructed", e.instructed_s, null, e.event_id + ": instructed " + e.instructed_s + " s");
      lab.dataset.label = e.event_id.split("/").pop();
    }
    (e.candidates || []).forEach(function (t) { mark("candidate", t, null, "candidate " + t.toFixed(3) + " s"); });
    if (e.detected_s !== null && e.detected_s !== undefined) mark("detected " + e.outcome, e.detected_s, null, e.event_id + ": detected " + e.detected_s.toFixed(3) + " s (" + e.outcome + ")");
    if (e.nearest_s !== null && e.nearest_s !== undefined) mark("nearest", e.nearest_s, null, e.event_id + ": nearest rejected candidate " + e.nearest_s.toFixed(3) + " s");
  });
  var axis = document.getElementById("axis");
  var step = end > 60 ? 10 : end > 20 ? 2 : 1;
  for (var t = 0; t <= end + 1e-9; t += step) {
    var tick = document.createElement("span");
    tick.style.left = pct(t);
    tick.textContent = t + " s";
    axis.appendChild(tick);
  }
  api.xForTime = function (s) { return wrap.getBoundingClientRect().width * s / end; };
  api.timeForX = function (x) { return Math.max(0, Math.min(end, end * x / wrap.getBoundingClientRect().width)); };
  function place() { if (audio) cursor.style.left = pct(audio.currentTime); }
  var looping = false;
  function loop() { place(); if (audio && !audio.paused) window.requestAnimationFrame(loop); else looping = false; }
  if (audio) {
    audio.addEventListener("play", function () { if (!looping) { looping = true; window.requestAnimationFrame(loop); } });
    ["timeupdate", "seeked", "pause"].forEach(function (n) { audio.addEventListener(n, place); });
  }
  wrap.addEventListener("click", function (ev) {
    var t = api.timeForX(ev.clientX - wrap.getBoundingClientRect().left);
    api.lastSeek = t;
    if (audio) { audio.currentTime = t; place(); }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === " " && audio && ev.target === document.body) { ev.preventDefault(); if (audio.paused) audio.play(); else audio.pause(); }
  });
  place();
  api.ready = true;
})();
