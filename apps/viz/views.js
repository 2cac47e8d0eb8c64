// ember viz: the Graphs and Timeline views (page.js holds the state and the other views; onnx.js
// draws its graph with layoutGraph below).
'use strict';

// ---- graphs ------------------------------------------------------------------------------------
async function loadGraphList() {
  const list = await getJSON('/api/graphs?' + runParam(state.current));
  const sel = $('#graph-select');
  sel.textContent = '';
  for (const g of list) sel.add(new Option(g.name + ' (' + g.kernels + ' kernels, ' + g.ops + ' nodes)', g.name));
  $('#graph-note').textContent = list.length ? 'the realize with the most kernels first (a training step)' : 'This run has no graphs: train it with `ember train --profile`.';
  $('#graph-view').textContent = '';
  if (list.length) await drawGraph();
}
async function drawGraph() {
  const name = $('#graph-select').value, kind = $('#graph-kind').value;
  const base = '/api/graph?' + runParam(state.current) + '&name=' + encodeURIComponent(name) + '&kind=' + kind;
  const view = $('#graph-view'), layout = $('#graph-layout');
  if (!state.info) {
    state.info = await getJSON('/api/info');
    layout.options[0].disabled = !state.info.graphviz;
    if (!state.info.graphviz) layout.value = 'page';
  }
  let why = state.info.graphviz ? '' : 'Graphviz is not installed: laid out in the page';
  if (layout.value === 'graphviz' && state.info.graphviz) {
    const svg = await fetch(base + '&format=svg');
    if (svg.ok) {
      view.innerHTML = await svg.text();
      view.dataset.layout = 'graphviz';
      $('#graph-note').textContent = 'laid out by Graphviz (dot -Tsvg)';
      return;
    }
    why = (await svg.json().catch(() => ({ error: 'HTTP ' + svg.status }))).error;
  }
  const dot = await fetch(base + '&format=dot');
  view.textContent = '';
  view.dataset.layout = 'page';
  $('#graph-note').textContent = why || 'laid out in the page';
  if (dot.ok) layoutGraph(parseDot(await dot.text()), view);
}
$('#graph-select').onchange = drawGraph;
$('#graph-kind').onchange = drawGraph;
$('#graph-layout').onchange = drawGraph;

// The DOT that ember's GRAPH=1 writes: one statement a line (nodes, edges, clusters).
function parseDot(text) {
  const nodes = new Map(), edges = [], clusters = [];
  let cluster = null;
  for (const line of text.split('\n')) {
    let m;
    if ((m = line.match(/^\s*subgraph (\w+) \{/))) { cluster = { id: m[1], label: '', nodes: [] }; clusters.push(cluster); }
    else if (cluster && /^\s*\}\s*$/.test(line)) cluster = null;
    else if (cluster && (m = line.match(/^\s*label="((?:[^"\\]|\\.)*)";/))) cluster.label = m[1];
    else if ((m = line.match(/^\s*(\w+) -> (\w+)/))) edges.push([m[1], m[2]]);
    else if ((m = line.match(/^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"/))) {
      nodes.set(m[1], { id: m[1], label: m[2].replace(/\\n/g, '\n'), cluster: cluster ? cluster.id : null });
      if (cluster) cluster.nodes.push(m[1]);
    }
  }
  for (const [a, b] of edges) for (const id of [a, b]) if (!nodes.has(id)) nodes.set(id, { id, label: id, cluster: null });
  return { nodes, edges, clusters };
}
// g: {nodes: Map(id -> {id, label, cluster, cls?, fill?}), edges: [[from, to]], clusters: [{id,
// label, nodes}]}, as parseDot gives it (or onnx.js builds it).
// Layers by longest path from the sources give each node its row. Each kernel (cluster) gets a
// band of columns of its own, so that its box holds its ops and nothing else. Bands go left to
// right by first row.
function layoutGraph(g, view) {
  const ids = [...g.nodes.keys()];
  const preds = new Map(ids.map((k) => [k, []])), succ = new Map(ids.map((k) => [k, []]));
  const indeg = new Map(ids.map((k) => [k, 0]));
  for (const [a, b] of g.edges) { preds.get(b).push(a); succ.get(a).push(b); indeg.set(b, indeg.get(b) + 1); }
  const rank = new Map(), queue = ids.filter((k) => indeg.get(k) === 0);
  for (const k of queue) rank.set(k, 0);
  while (queue.length) {
    const k = queue.shift();
    for (const s of succ.get(k)) {
      rank.set(s, Math.max(rank.get(s) || 0, rank.get(k) + 1));
      indeg.set(s, indeg.get(s) - 1);
      if (indeg.get(s) === 0) queue.push(s);
    }
  }
  // A node outside kernels (a buffer, a constant, a root) goes to the band of the kernel that
  // reads it (or writes it): above or below that kernel's box, beside the ops it feeds.
  const home = (n) => {
    if (n.cluster) return n.cluster;
    const near = [...succ.get(n.id), ...preds.get(n.id)].map((k) => g.nodes.get(k).cluster).find((c) => c);
    return near || null;
  };
  const bands = new Map([[null, []]]);
  for (const c of g.clusters) bands.set(c.id, []);
  for (const n of g.nodes.values()) bands.get(home(n)).push(n);
  const firstRow = (ns) => Math.min(...ns.filter((n) => n.cluster).map((n) => rank.get(n.id) || 0));
  const order = [...bands.entries()].filter(([, ns]) => ns.length)
    .sort((a, b) => (a[0] === null ? -1 : b[0] === null ? 1 : firstRow(a[1]) - firstRow(b[1])));
  const NH = 34, GAPX = 14, GAPY = 46, CH = 6.6, PAD = 10;
  const pos = new Map();
  let x0 = 10, rows = 0;
  for (const [, ns] of order) {
    const byRow = new Map();
    for (const n of ns) { const r = rank.get(n.id) || 0; if (!byRow.has(r)) byRow.set(r, []); byRow.get(r).push(n); rows = Math.max(rows, r + 1); }
    let bandWidth = 0;
    for (const [r, row] of byRow) {
      let x = x0 + PAD;
      for (const n of row) {
        const w = Math.max(40, Math.max(...n.label.split('\n').map((l) => l.length)) * CH + 12);
        pos.set(n.id, { x: x + w / 2, y: 30 + r * (NH + GAPY) + NH / 2, w });
        x += w + GAPX;
      }
      bandWidth = Math.max(bandWidth, x - x0);
    }
    x0 += bandWidth + PAD + GAPX;
  }
  const width = x0;
  const height = 30 + rows * (NH + GAPY);
  const svg = svgEl('svg', { width, height, 'font-family': 'monospace', 'font-size': 10 }, view);
  for (const c of g.clusters) {
    const ps = c.nodes.map((id) => pos.get(id));
    if (!ps.length) continue;
    const x0 = Math.min(...ps.map((p) => p.x - p.w / 2)) - 6, x1 = Math.max(...ps.map((p) => p.x + p.w / 2)) + 6;
    const y0 = Math.min(...ps.map((p) => p.y)) - NH / 2 - 16, y1 = Math.max(...ps.map((p) => p.y)) + NH / 2 + 6;
    const gc = svgEl('g', { class: 'cluster' }, svg);
    svgEl('rect', { class: 'box', x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 4 }, gc);
    svgEl('text', { x: x0 + 4, y: y0 + 11 }, gc).textContent = c.label;
  }
  for (const [a, b] of g.edges) {
    const p = pos.get(a), q = pos.get(b);
    svgEl('path', { class: 'edge', d: 'M' + p.x + ',' + (p.y + NH / 2) + ' L' + q.x + ',' + (q.y - NH / 2) }, svg);
  }
  for (const n of g.nodes.values()) {
    const p = pos.get(n.id), gn = svgEl('g', { class: n.cls ? 'node ' + n.cls : 'node' }, svg);
    const box = svgEl('rect', { x: p.x - p.w / 2, y: p.y - NH / 2, width: p.w, height: NH, rx: 3 }, gn);
    if (n.fill) box.style.fill = n.fill;
    if (n.title) svgEl('title', {}, gn).textContent = n.title;
    n.label.split('\n').slice(0, 3).forEach((l, i, all) => {
      svgEl('text', { x: p.x, y: p.y + (i - (all.length - 1) / 2) * 11 + 3, 'text-anchor': 'middle' }, gn).textContent = l;
    });
  }
}

// ---- timeline ----------------------------------------------------------------------------------
const tl = { rows: [], t0: 0, t1: 1, view: [0, 1], names: {} };
async function loadTimeline() {
  const path = '/files/' + state.current.split('/').map(encodeURIComponent).join('/') + '/profile/trace.json';
  $('#trace-link').href = state.current === '.' ? '/files/profile/trace.json' : path;
  const run = state.runs.find((r) => r.id === state.current);
  let trace = { traceEvents: [] };
  if (run && run.profile) trace = await getJSON('/api/trace?' + runParam(state.current));
  const rows = new Map();
  tl.names = {};
  for (const e of trace.traceEvents || []) {
    if (e.ph === 'M' && e.name === 'thread_name') tl.names[e.tid] = e.args.name;
    if (e.ph !== 'X') continue;
    if (!rows.has(e.tid)) rows.set(e.tid, []);
    rows.get(e.tid).push(e);
  }
  tl.rows = [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([tid, ev]) => ({ tid, ev: ev.sort((a, b) => a.ts - b.ts) }));
  const all = tl.rows.flatMap((r) => r.ev);
  tl.t0 = all.length ? Math.min(...all.map((e) => e.ts)) : 0;
  tl.t1 = all.length ? Math.max(...all.map((e) => e.ts + e.dur)) : 1;
  tl.view = [tl.t0, tl.t1];
  drawTimeline();
}
const ROW = 22, LABEL = 130;
function drawTimeline() {
  const cv = $('#timeline'), ctx = cv.getContext('2d');
  cv.width = cv.clientWidth;
  cv.height = Math.max(60, 24 + tl.rows.length * ROW * 2);
  ctx.clearRect(0, 0, cv.width, cv.height);
  ctx.font = '11px sans-serif';
  const [v0, v1] = tl.view, X = (t) => LABEL + (t - v0) / (v1 - v0) * (cv.width - LABEL);
  ctx.fillStyle = '#444';
  if (!tl.rows.length) return ctx.fillText('This run has no trace: train it with `ember train --profile`.', 8, 20);
  ctx.fillText(((v1 - v0) / 1e3).toFixed(3) + ' ms across', LABEL, 12);
  tl.rows.forEach((row, i) => {
    const y = 20 + i * ROW * 2;
    ctx.fillStyle = '#444';
    ctx.fillText(tl.names[row.tid] || 'thread ' + row.tid, 4, y + ROW);
    for (const e of row.ev) {
      if (e.ts + e.dur < v0 || e.ts > v1) continue;
      const x = X(e.ts), w = Math.max(1, X(e.ts + e.dur) - x);
      const lane = e.cat === 'phase' ? 0 : 1;  // phases above the kernels they contain
      ctx.fillStyle = e.cat === 'phase' ? '#9bb7d4' : '#e8a33d';
      ctx.fillRect(x, y + lane * ROW, w, ROW - 3);
      if (w > 40) { ctx.fillStyle = '#222'; ctx.fillText(e.name.slice(0, w / 6), x + 2, y + lane * ROW + 13); }
    }
  });
}
function eventAt(px, py) {
  const cv = $('#timeline'), [v0, v1] = tl.view;
  const i = Math.floor((py - 20) / (ROW * 2)), lane = Math.floor((py - 20 - i * ROW * 2) / ROW);
  if (i < 0 || i >= tl.rows.length) return null;
  const t = v0 + (px - LABEL) / (cv.width - LABEL) * (v1 - v0), slack = (v1 - v0) / cv.width * 2;
  return tl.rows[i].ev.find((e) => (e.cat === 'phase' ? 0 : 1) === lane && e.ts - slack <= t && t <= e.ts + e.dur + slack) || null;
}
(() => {
  const cv = $('#timeline'), tip = $('#tooltip');
  let drag = null;
  cv.onwheel = (e) => {
    e.preventDefault();
    const [v0, v1] = tl.view, f = e.deltaY > 0 ? 1.25 : 0.8;
    const t = v0 + (e.offsetX - LABEL) / (cv.width - LABEL) * (v1 - v0);
    tl.view = [t - (t - v0) * f, t + (v1 - t) * f];
    drawTimeline();
  };
  cv.onmousedown = (e) => { drag = { x: e.offsetX, view: [...tl.view] }; };
  window.addEventListener('mouseup', () => { drag = null; });
  cv.onmousemove = (e) => {
    if (drag) {
      const dt = (e.offsetX - drag.x) / (cv.width - LABEL) * (drag.view[1] - drag.view[0]);
      tl.view = [drag.view[0] - dt, drag.view[1] - dt];
      return drawTimeline();
    }
    const ev = eventAt(e.offsetX, e.offsetY);
    tip.style.display = ev ? 'block' : 'none';
    if (!ev) return;
    tip.textContent = ev.name + '  ' + (ev.dur >= 1000 ? (ev.dur / 1e3).toFixed(3) + ' ms' : ev.dur.toFixed(1) + ' us') +
      (ev.args ? '\n' + Object.entries(ev.args).map(([k, v]) => k + ': ' + v).join('\n') : '');
    tip.style.left = (e.offsetX + 12) + 'px';
    tip.style.top = (e.offsetY + 12) + 'px';
  };
  cv.onmouseleave = () => { tip.style.display = 'none'; };
})();
// Perfetto's documented way to open a trace from another page: open the UI, wait for its PONG,
// then post the trace's bytes.
$('#perfetto').onclick = async () => {
  const buf = await (await fetch('/api/trace?' + runParam(state.current))).arrayBuffer();
  const ui = window.open('https://ui.perfetto.dev');
  const ping = setInterval(() => ui.postMessage('PING', 'https://ui.perfetto.dev'), 200);
  window.addEventListener('message', function onPong(e) {
    if (e.data !== 'PONG') return;
    clearInterval(ping);
    window.removeEventListener('message', onPong);
    ui.postMessage({ perfetto: { buffer: buf, title: 'ember ' + state.current } }, 'https://ui.perfetto.dev');
  });
};
window.addEventListener('resize', () => { if (state.view === 'timeline') drawTimeline(); });
