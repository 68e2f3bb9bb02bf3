// timingbench report: the clip table of index.html (sort, filter, paginate). No network.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tb-table").textContent);
  var PAGE_ROWS = 100;
  var WORDS = { on_time: "on time", off_time: "off time", none: "none" };
  var state = { family: "", kind: "", outcome: "", text: "", order: "clip", sortKey: null, sortDir: 1, page: 0 };
  var cols = [
    { key: "clip", label: "clip" },
    { key: "event_id", label: "event" },
    { key: "kind", label: "kind" },
    { key: "family", label: "family" },
    { key: "outcome", label: "outcome" },
    { key: "error_s", label: "error ms", num: true },
    { key: "rejected_by", label: "rejecting gate" },
    { key: "p_chance", label: "p_chance", num: true },
    { key: "margin_floors", label: "margin (floors)", num: true,
      title: "(tolerance - |error|) / floor: below 1 in magnitude the apparatus's own error could flip the verdict" },
    { key: "detector", label: "detector" }
  ];
  data.systems.slice(1).forEach(function (name, k) {
    cols.push({ key: "other" + k, label: name, other: k });
  });
  cols[4].label = data.systems.length > 1 ? data.systems[0] : "outcome";

  function value(r, c) {
    if (c.other !== undefined) {
      var o = r.others[c.other];
      return o ? o.outcome : null;
    }
    return r[c.key];
  }
  function cmp(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    return a < b ? -1 : 1;
  }
  function disagrees(r) {
    return r.others.some(function (o) { return !o || o.outcome !== r.outcome; });
  }
  function filtered() {
    var t = state.text.toLowerCase();
    var rows = data.rows.filter(function (r) {
      return (!state.family || r.family === state.family) && (!state.kind || r.kind === state.kind)
        && (!state.outcome || r.outcome === state.outcome) && (!t || String(r.clip).toLowerCase().indexOf(t) >= 0);
    });
    var byClip = function (a, b) { return cmp(a.clip, b.clip) || cmp(a.event_id, b.event_id); };
    if (state.sortKey !== null) {
      var c = cols.filter(function (x) { return x.key === state.sortKey; })[0];
      rows.sort(function (a, b) {
        var va = value(a, c), vb = value(b, c);
        if (va === null || va === undefined) return (vb === null || vb === undefined) ? byClip(a, b) : 1;
        if (vb === null || vb === undefined) return -1;
        return state.sortDir * cmp(va, vb) || byClip(a, b);
      });
    } else if (state.order === "closest") {
      rows.sort(function (a, b) {
        var ma = a.margin_floors === null ? null : Math.abs(a.margin_floors);
        var mb = b.margin_floors === null ? null : Math.abs(b.margin_floors);
        return cmp(ma, mb) || byClip(a, b);
      });
    } else if (state.order === "disagree") {
      rows.sort(function (a, b) { return (disagrees(b) - disagrees(a)) || byClip(a, b); });
    } else {
      rows.sort(byClip);
    }
    return rows;
  }
  function fmtNum(c, v) {
    if (v === null || v === undefined) return "-";
    if (c.key === "error_s") return (v >= 0 ? "+" : "") + Math.round(1000 * v);
    if (c.key === "p_chance") return v.toFixed(3);
    if (c.key === "margin_floors") return v.toFixed(1);
    return String(v);
  }
  function cell(tr, text, cls, title) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    if (title) td.title = title;
    tr.appendChild(td);
    return td;
  }
  function head() {
    var thead = document.querySelector("#clip-table thead");
    var tr = document.createElement("tr");
    cols.forEach(function (c) {
      var th = document.createElement("th");
      th.textContent = c.label + (state.sortKey === c.key ? (state.sortDir > 0 ? " ▲" : " ▼") : "");
      th.dataset.key = c.key;
      if (c.title) th.title = c.title;
      th.addEventListener("click", function () {
        if (state.sortKey === c.key) state.sortDir = -state.sortDir; else { state.sortKey = c.key; state.sortDir = 1; }
        state.page = 0;
        render();
      });
      tr.appendChild(th);
    });
    thead.replaceChildren(tr);
  }
  function render() {
    head();
    var rows = filtered();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
    state.page = Math.min(state.page, pages - 1);
    var shown = rows.slice(state.page * PAGE_ROWS, (state.page + 1) * PAGE_ROWS);
    var body = document.createDocumentFragment();
    shown.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.dataset.family = r.family || "";
      tr.dataset.clip = r.clip;
      if (r.exempt) tr.className = "exempt";
      var href = r.page === null ? null
        : "clips/c" + String(r.page).padStart(5, "0") + ".html" + (r.event_id ? "#ev-" + encodeURIComponent(r.event_id) : "");
      if (href) tr.addEventListener("click", function (ev) { if (ev.target.tagName !== "A") window.location.href = href; });
      cols.forEach(function (c) {
        if (c.key === "clip") {
          var td = cell(tr, href ? "" : r.clip, "");
          if (href) {
            var a = document.createElement("a");
            a.href = href; a.textContent = r.clip;
            td.appendChild(a);
          }
          if (r.clip_error) td.title = r.clip_error;
        } else if (c.key === "outcome" || c.other !== undefined) {
          var v = value(r, c);
          var o = c.other !== undefined ? r.others[c.other] : r;
          var txt = v ? WORDS[v] + (r.clip_error && c.other === undefined ? " (error)" : "") + (o && o.error_s !== null && o.error_s !== undefined && c.other !== undefined ? " " + fmtNum({ key: "error_s" }, o.error_s) : "")
            : (r.clip_error ? "error" : r.no_event ? "no timed event" : "-");
          var cls = v || (r.clip_error ? "err" : r.no_event ? "no_event" : "err");
          cell(tr, txt, "oc " + cls, r.clip_error || (r.no_event ? "the prompt instructs no timed event (tempo or controls only)" : ""));
        } else if (c.key === "family") {
          cell(tr, (r.family || "-") + (r.exempt ? " *" : ""), "", r.exempt ? "identity not verified" : "");
        } else {
          cell(tr, c.num ? fmtNum(c, r[c.key]) : (r[c.key] === null || r[c.key] === undefined ? "-" : String(r[c.key])), c.num ? "num" : "");
        }
      });
      body.appendChild(tr);
    });
    document.querySelector("#clip-table tbody").replaceChildren(body);
    document.getElementById("count").textContent = rows.length + " of " + data.rows.length + " rows";
    document.getElementById("pageinfo").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }
  function options(id, values) {
    var sel = document.getElementById(id);
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v; o.textContent = v;
      sel.appendChild(o);
    });
  }
  options("f-family", data.families);
  options("f-kind", data.kinds);
  [["f-family", "family"], ["f-kind", "kind"], ["f-outcome", "outcome"], ["f-order", "order"]].forEach(function (p) {
    document.getElementById(p[0]).addEventListener("change", function (e) {
      state[p[1]] = e.target.value;
      if (p[1] === "order") state.sortKey = null;
      state.page = 0;
      render();
    });
  });
  document.getElementById("f-text").addEventListener("input", function (e) { state.text = e.target.value; state.page = 0; render(); });
  document.getElementById("prev").addEventListener("click", function () { state.page -= 1; render(); });
  document.getElementById("next").addEventListener("click", function () { state.page += 1; render(); });
  render();
  window.tbReport = { ready: true, state: state, filtered: filtered, rows: data.rows, render: render };
})();
