// ember viz: the ONNX view, over what `ember onnx run MODEL --profile DIR` writes (/api/onnx):
// the model's graph (laid out by views.js's layoutGraph, each group of nodes that kernels fused a
// box) and a table of per-node kernel times, sortable.
'use strict';
const onnx = { list: [], profile: null };

async function loadOnnxList() {
  onnx.list = await getJSON('/api/onnx');
  const sel = $('#onnx-select'), keep = sel.value;
  sel.textContent = '';
  for (const p of onnx.list) {
    const o = new Option(p.id + (p.error ? ' (cannot be shown: ' + p.error + ')' : ' (' + p.model + ', ' + p.nodes + ' nodes)'), p.id);
    o.disabled = !!p.error;  // a malformed profile: listed with its reason, not opened
    sel.add(o);
  }
  if (!onnx.list.length) {
    $('#onnx-note').textContent = 'No profiled models under this folder: run `ember onnx run MODEL --profile DIR` with DIR in it.';
    return;
  }
  if (keep && onnx.list.some((p) => p.id === keep)) sel.value = keep;
  if (sel.value && (!onnx.profile || onnx.profile.id !== sel.value)) await loadOnnxProfile(sel.value);
}
$('#onnx-select').onchange = (e) => loadOnnxProfile(e.target.value);

async function loadOnnxProfile(id) {
  const p = await getJSON('/api/onnx/profile?id=' + encodeURIComponent(id));
  p.id = id;
  onnx.profile = p;
  const total = p.kernel_s || 0, share = (s) => (total > 0 ? s / total : 0);
  const outShape = (n) => (n.shapes[0] && n.shapes[0].shape ? '[' + n.shapes[0].shape.join(', ') + ']' : '');
  onnxTable.rows = p.nodes.map((n) => ({
    index: n.index, label: n.name || n.outputs[0] || '', op: n.op_type, shape: outShape(n), us: n.seconds * 1e6,
    share: share(n.seconds), launches: n.launches, group: n.group === null ? '' : 'group ' + n.group,
  }));
  for (const g of p.groups)
    onnxTable.rows.push({ index: '', label: 'kernels fused across nodes ' + g.nodes.join(', '), op: g.kernels.join(' '), shape: '',
      us: g.seconds * 1e6, share: share(g.seconds), launches: g.launches, group: 'group ' + g.id, isGroup: true });
  if (p.unattributed_s > 0)
    onnxTable.rows.push({ index: '', label: 'copies (no node)', op: '', shape: '', us: p.unattributed_s * 1e6,
      share: share(p.unattributed_s), launches: '', group: '' });
  $('#onnx-note').textContent = p.model + ' on ' + p.device + ', ' + p.threads + ' threads: ' + fmt(total * 1e3, 3) +
    ' ms of kernels per run (mean of ' + p.runs + ' runs), wall ' + fmt(p.wall_ms.median, 3) + ' ms (median). ' +
    (p.groups.length ? 'A kernel that fused several nodes is timed for their group, unsplit.' : '');
  renderOnnxTable();
  drawOnnxGraph(p);
}

const onnxTable = {
  rows: [], sort: { key: 'us', desc: true }, text: ['index', 'label', 'op', 'shape', 'group'],
  row: (tr, r) => {
    if (r.isGroup) tr.className = 'group';
    cell(tr, r.index, 'num'); cell(tr, r.label).title = r.label; cell(tr, r.op).title = r.op; cell(tr, r.shape);
    cell(tr, fmt(r.us, 2), 'num'); cell(tr, fmt(r.share * 100, 1) + '%', 'num'); cell(tr, r.launches, 'num'); cell(tr, r.group);
  },
};
const renderOnnxTable = sortedTable('#onnx-table', onnxTable);

// Nodes (shaded by their share of the kernel time), the graph's inputs and outputs, an edge per
// value from its producer to each reader, and a box per fused group.
function drawOnnxGraph(p) {
  const nodes = new Map(), edges = [], producer = new Map(), clusters = new Map();
  const total = p.kernel_s || 0;
  for (const v of p.inputs) {
    nodes.set('in_' + v.name, { id: 'in_' + v.name, label: 'input ' + v.name, cluster: null, cls: 'io' });
    producer.set(v.name, 'in_' + v.name);
  }
  for (const n of p.nodes) {
    const id = 'n' + n.index, cluster = n.group === null ? null : 'g' + n.group;
    const heat = total > 0 ? Math.min(1, n.seconds / total * 3) : 0;
    const time = n.launches || n.group === null ? fmt(n.seconds * 1e6, 2) + ' us' : 'in group ' + n.group;
    nodes.set(id, { id, label: n.op_type + '\n' + (n.name || n.outputs[0] || '') + '\n' + time,
      cluster, cls: 'op', fill: 'rgb(255,' + Math.round(255 - 120 * heat) + ',' + Math.round(255 - 200 * heat) + ')',
      title: n.op_type + ' ' + n.name + '\n' + n.shapes.map((s) => s.name + ': ' + (s.dtype || s.kind) + ' [' + (s.shape || []).join(', ') + ']').join('\n') });
    if (cluster) {
      if (!clusters.has(cluster)) {
        const g = p.groups[n.group];
        clusters.set(cluster, { id: cluster, label: 'fused group ' + n.group + ': ' + fmt(g.seconds * 1e6, 2) + ' us', nodes: [] });
      }
      clusters.get(cluster).nodes.push(id);
    }
    for (const o of n.outputs) if (o) producer.set(o, id);
  }
  for (const n of p.nodes)
    for (const i of n.inputs) if (producer.has(i)) edges.push([producer.get(i), 'n' + n.index]);
  for (const v of p.outputs) {
    nodes.set('out_' + v.name, { id: 'out_' + v.name, label: 'output ' + v.name, cluster: null, cls: 'io' });
    if (producer.has(v.name)) edges.push([producer.get(v.name), 'out_' + v.name]);
  }
  const view = $('#onnx-graph');
  view.textContent = '';
  layoutGraph({ nodes, edges, clusters: [...clusters.values()] }, view);
}
