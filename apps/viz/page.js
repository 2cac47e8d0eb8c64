// ember viz: the page's views over the JSON API (README, "ember viz"). Plain JS, no libraries.
'use strict';
const $ = (s) => document.querySelector(s);
const SVGNS = 'http://www.w3.org/2000/svg';
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const state = { runs: [], current: null, overlay: new Set(), epochs: {}, kernels: [], view: 'runs' };

async function getJSON(url) {
  const r = await fetch(url);
  if (!r.ok) {
    const body = await r.json().catch(() => ({}));
    throw new Error(url + ': HTTP ' + r.status + (body.error ? ': ' + body.error : ''));
  }
  return r.json();
}
const runParam = (id) => 'run=' + encodeURIComponent(id);
function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}
const fmt = (x, d = 2) => (x === null || x === undefined || !isFinite(x)) ? '' : Number(x).toFixed(d);
const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));

// A table whose header cells (th[data-key]) sort it: t.rows the data, t.sort {key, desc}, t.row(tr,
// r, tbody) fills one row; a column first clicked sorts descending unless its key is in t.text.
// Returns the function that draws it.
function sortedTable(sel, t) {
  const draw = () => {
    const { key, desc } = t.sort;
    const rows = [...t.rows].sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0) * (desc ? -1 : 1));
    const tb = $(sel + ' tbody');
    tb.textContent = '';
    for (const r of rows) t.row(tb.insertRow(), r, tb);
    for (const th of document.querySelectorAll(sel + ' th')) th.classList.toggle('sorted', th.dataset.key === key);
  };
  for (const th of document.querySelectorAll(sel + ' th[data-key]'))
    th.onclick = () => {
      const k = th.dataset.key;
      t.sort = { key: k, desc: t.sort.key === k ? !t.sort.desc : !t.text.includes(k) };
      draw();
    };
  return draw;
}

// ---- charts ------------------------------------------------------------------------------------
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) { hi = lo + 1; }
  const step0 = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toPrecision(12));
  return ticks;
}
// labels: {x, y}: the axes' names with their units, under the x axis and along the y axis.
function axes(svg, W, H, m, xs, ys, labels) {
  const X = (x) => m.l + (x - xs[0]) / (xs[1] - xs[0] || 1) * (W - m.l - m.r);
  const Y = (y) => H - m.b - (y - ys[0]) / (ys[1] - ys[0] || 1) * (H - m.t - m.b);
  svgEl('rect', { x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: 'none', stroke: '#ccc' }, svg);
  for (const t of niceTicks(xs[0], xs[1], 5)) {
    svgEl('line', { x1: X(t), x2: X(t), y1: H - m.b, y2: H - m.b + 4, stroke: '#888' }, svg);
    svgEl('text', { x: X(t), y: H - m.b + 15, 'text-anchor': 'middle' }, svg).textContent = t;
  }
  for (const t of niceTicks(ys[0], ys[1], 5)) {
    svgEl('line', { x1: m.l, x2: W - m.r, y1: Y(t), y2: Y(t), stroke: '#eee' }, svg);
    svgEl('text', { x: m.l - 4, y: Y(t) + 4, 'text-anchor': 'end' }, svg).textContent = t;
  }
  svgEl('text', { x: m.l + (W - m.l - m.r) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis-label' }, svg).textContent = labels.x;
  const cy = m.t + (H - m.t - m.b) / 2;
  svgEl('text', { x: 12, y: cy, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + cy + ')', class: 'axis-label' }, svg).textContent = labels.y;
  return { X, Y };
}
const MARGIN = { l: 62, r: 10, t: 10, b: 38 };
// series: [{run, color, points: [[x, y], ...]}]; each point is a circle of class `cls`.
function lineChart(div, series, cls, labels) {
  const W = 440, H = 260, m = MARGIN;
  const all = series.flatMap((s) => s.points);
  div.textContent = '';
  const svg = svgEl('svg', { width: W, height: H, class: cls + '-chart' }, div);
  if (!all.length) { svgEl('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle' }, svg).textContent = 'no points yet'; return; }
  const ext = (i) => [Math.min(...all.map((p) => p[i])), Math.max(...all.map((p) => p[i]))];
  const { X, Y } = axes(svg, W, H, m, ext(0), ext(1), labels);
  for (const s of series) {
    svgEl('polyline', { points: s.points.map((p) => X(p[0]) + ',' + Y(p[1])).join(' '), fill: 'none', stroke: s.color, 'stroke-width': 1.5 }, svg);
    for (const p of s.points) {
      const c = svgEl('circle', { cx: X(p[0]), cy: Y(p[1]), r: 3, fill: s.color, class: cls, 'data-run': s.run }, svg);
      svgEl('title', {}, c).textContent = s.run + ': ' + p[0] + ', ' + fmt(p[1]);
    }
  }
}
const PHASES = [['collect_s', '#4e79a7'], ['update_s', '#f28e2b'], ['eval_s', '#59a14f']];
function phaseChart(div, rows) {
  const W = 440, H = 260, m = { ...MARGIN, t: 24 };
  div.textContent = '';
  const svg = svgEl('svg', { width: W, height: H, class: 'phase-chart' }, div);
  if (!rows.length) return;
  const total = (r) => PHASES.reduce((a, [k]) => a + (r[k] || 0), 0);
  const { X, Y } = axes(svg, W, H, m, [-0.5, rows.length - 0.5], [0, Math.max(...rows.map(total))],
    { x: 'epoch', y: 'time (s)' });
  const bw = Math.max(1, (X(1) - X(0)) * 0.8);
  rows.forEach((r, i) => {
    let y0 = 0;
    for (const [k, color] of PHASES) {
      const v = r[k] || 0;
      const b = svgEl('rect', { x: X(i) - bw / 2, y: Y(y0 + v), width: bw, height: Y(y0) - Y(y0 + v), fill: color, class: 'phase-bar' }, svg);
      svgEl('title', {}, b).textContent = 'epoch ' + r.epoch + ' ' + k.replace('_s', '') + ': ' + fmt(v, 3) + ' s';
      y0 += v;
    }
  });
  const leg = svgEl('g', {}, svg);
  PHASES.forEach(([k, c], i) => {
    svgEl('rect', { x: m.l + 8 + i * 80, y: 4, width: 10, height: 10, fill: c }, leg);
    svgEl('text', { x: m.l + 22 + i * 80, y: 13 }, leg).textContent = k.replace('_s', '');
  });
}

// ---- runs --------------------------------------------------------------------------------------
function runStatus(r) { return r.summary ? (r.summary.reached_target ? 'reached target' : 'finished') : 'training or stopped'; }
function renderRuns() {
  const tb = $('#runs-table tbody');
  tb.textContent = '';
  for (const r of state.runs) {
    const tr = tb.insertRow();
    tr.dataset.run = r.id;
    if (r.id === state.current) tr.className = 'selected';
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = state.overlay.has(r.id);
    box.onclick = async (e) => {
      e.stopPropagation();
      box.checked ? state.overlay.add(r.id) : state.overlay.delete(r.id);
      if (box.checked && !state.epochs[r.id]) await loadEpochs(r.id);
      drawCurves();
    };
    tr.insertCell().appendChild(box);
    const c = r.config || {};
    cell(tr, r.id); cell(tr, r.started_at || ''); cell(tr, r.epochs, 'num');
    cell(tr, c.envs + ' x ' + c.steps_per_env);
    cell(tr, c.policy ? c.policy.layers + ' x ' + c.policy.hidden : '');
    cell(tr, c.seed); cell(tr, runStatus(r)); cell(tr, r.profile ? 'yes' : '');
    tr.onclick = () => selectRun(r.id);
  }
  const sel = $('#run-select');
  const keep = state.current;
  sel.textContent = '';
  for (const r of state.runs) sel.add(new Option(r.id, r.id));
  if (keep) sel.value = keep;
}
async function loadEpochs(id) { state.epochs[id] = await getJSON('/api/epochs?' + runParam(id)); }
function drawCurves() {
  const ids = [...state.overlay].filter((id) => state.epochs[id]);
  const color = (id) => COLORS[state.runs.findIndex((r) => r.id === id) % COLORS.length];
  const pts = (id, xk, yk) => state.epochs[id].filter((e) => e[yk] !== null && e[yk] !== undefined).map((e) => [e[xk], e[yk]]);
  lineChart($('#eval-chart'), ids.map((id) => ({ run: id, color: color(id), points: pts(id, 'transitions', 'eval_mean') })), 'eval-point',
    { x: 'environment steps (transitions)', y: 'evaluation return (mean)' });
  lineChart($('#return-chart'), ids.map((id) => ({ run: id, color: color(id), points: pts(id, 'epoch', 'train_return_mean') })), 'return-point',
    { x: 'epoch', y: 'training return (mean of episodes)' });
  phaseChart($('#phase-chart'), state.epochs[state.current] || []);
  $('#legend').innerHTML = ids.map((id) => '<span style="color:' + color(id) + '">&#9632; ' + escapeHtml(id) + '</span>').join('');
}
async function selectRun(id) {
  state.current = id;
  state.overlay.add(id);
  $('#run-select').value = id;
  const run = state.runs.find((r) => r.id === id) || {};
  $('#run-json').textContent = JSON.stringify({ config: run.config, provenance: run.provenance, summary: run.summary }, null, 2);
  await loadEpochs(id);
  renderRuns();
  drawCurves();
  state.loaded = {};
  showView(state.view);
}
async function refresh() {
  try {
    const runs = await getJSON('/api/runs');
    const changed = (r) => { const o = state.runs.find((x) => x.id === r.id); return !o || o.epochs !== r.epochs || !state.epochs[r.id]; };
    const stale = runs.filter((r) => state.overlay.has(r.id) && changed(r)).map((r) => r.id);
    state.runs = runs;
    await Promise.all(stale.map(loadEpochs));
    if (!state.current && runs.length) return selectRun(runs[0].id);
    renderRuns();
    if (stale.length) drawCurves();
  } catch (e) { console.error(e); }
}

// ---- kernels -----------------------------------------------------------------------------------
const C_TOKENS = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|(^[ \t]*#[^\n]*)|\b(void|int|int64_t|int32_t|uint8_t|float|double|const|restrict|for|if|else|return|static|inline|typedef|struct|unsigned|char|__m256|__m512|__m128)\b|\b(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[fFuUlL]*)\b/gm;
function highlightC(src) {
  let out = '', last = 0, m;
  C_TOKENS.lastIndex = 0;
  while ((m = C_TOKENS.exec(src))) {
    out += escapeHtml(src.slice(last, m.index));
    const cls = m[1] ? 'com' : m[2] ? 'pre' : m[3] ? 'kw' : 'num';
    out += '<span class="' + cls + '">' + escapeHtml(m[0]) + '</span>';
    last = m.index + m[0].length;
    if (m[0].length === 0) C_TOKENS.lastIndex++;
  }
  return out + escapeHtml(src.slice(last));
}
async function loadKernels() {
  const k = await getJSON('/api/kernels?' + runParam(state.current));
  state.kernels = k ? k.kernels : [];
  const total = k ? k.seconds : 0;
  for (const r of state.kernels) { r.mean = r.seconds / r.launches; r.share = total > 0 ? r.seconds / total : 0; }
  $('#kernel-note').textContent = k ? state.kernels.length + ' kernels, ' + fmt(total * 1e3, 1) + ' ms of kernel time. Click a column to sort, a row for its source.'
    : 'This run has no kernel table: train it with `ember train --profile`.';
  kernelTable.rows = state.kernels;
  renderKernels();
}
const kernelTable = {
  rows: [], sort: { key: 'seconds', desc: true }, text: ['name', 'ops'],
  row: (tr, r, tb) => {
    tr.dataset.program = r.program;
    cell(tr, r.name); cell(tr, r.launches, 'num'); cell(tr, fmt(r.seconds * 1e3, 3), 'num');
    cell(tr, fmt(r.mean * 1e6, 1), 'num'); cell(tr, fmt(r.share * 100, 1) + '%', 'num');
    cell(tr, fmt(r.gflops), 'num'); cell(tr, fmt(r.gbs), 'num'); cell(tr, r.ops).title = r.ops;
    tr.onclick = () => {
      for (const x of tb.rows) x.classList.toggle('selected', x === tr);
      $('#kernel-title').textContent = r.name + ' [' + r.shape.join(', ') + '], ' + r.family;
      $('#kernel-plan').textContent = 'plan: ' + (r.plan || '(none)');
      $('#kernel-source').innerHTML = r.source ? highlightC(r.source) : '(no generated source on this device)';
    };
  },
};
const renderKernels = sortedTable('#kernel-table', kernelTable);

// ---- views -------------------------------------------------------------------------------------
async function showView(v) {
  state.view = v;
  for (const b of document.querySelectorAll('nav button')) b.classList.toggle('active', b.dataset.view === v);
  for (const s of document.querySelectorAll('main section')) s.classList.toggle('active', s.id === 'view-' + v);
  state.loaded = state.loaded || {};
  if (v === 'onnx') return loadOnnxList().catch((e) => console.error(e));  // not per run
  if (!state.current || state.loaded[v]) return;
  state.loaded[v] = true;
  try {
    if (v === 'kernels') await loadKernels();
    if (v === 'graphs') await loadGraphList();
    if (v === 'timeline') await loadTimeline();
  } catch (e) { console.error(e); }
}
for (const b of document.querySelectorAll('nav button')) b.onclick = () => showView(b.dataset.view);
$('#run-select').onchange = (e) => selectRun(e.target.value);
refresh();
setInterval(refresh, 3000);
