// emu's live pages: poll /ws/v1/emu/track every second and redraw.
// Chart.js (chart.umd.js, MIT) is served from the same directory.
"use strict";
const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
  "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const TOTAL = "#555";  // a partition's total lines, beside its queues' colours
const charts = {};

// One line chart over simulated seconds, with `scales` beside its x axis.
function chartOn(el, scales) {
  return new Chart(el, {
    type: "line",
    data: { labels: [], datasets: [] },
    options: {
      animation: false, maintainAspectRatio: false, parsing: false, normalized: true,
      elements: { point: { radius: 0 } },
      scales: { x: { type: "linear", title: { display: true, text: "simulated seconds" } }, ...scales },
    },
  });
}

function lineChart(id, yTitle) {
  const el = typeof id === "string" ? document.getElementById(id) : id;
  if (!el) return null;
  return chartOn(el, { y: { beginAtZero: true, title: { display: true, text: yTitle } } });
}

// A tracked job's chart: memory in GB on the left axis, vcores on the right.
function jobChart(el) {
  return chartOn(el, {
    y: { beginAtZero: true, position: "left", title: { display: true, text: "GB" } },
    y1: { beginAtZero: true, position: "right", title: { display: true, text: "vcores" },
          grid: { drawOnChartArea: false } },
  });
}

function jobSeries(history, job) {
  const at = (h, f) => ((h.jobs || {})[job] || {})[f] || 0;
  return [
    { label: "allocated memory", color: COLORS[0], data: pts(history, h => at(h, "usage.memory") / 1024) },
    { label: "demanded memory", color: COLORS[0], dash: true,
      data: pts(history, h => at(h, "demand.memory") / 1024) },
    { label: "allocated vcores", color: COLORS[1], axis: "y1", data: pts(history, h => at(h, "usage.vcores")) },
    { label: "demanded vcores", color: COLORS[1], axis: "y1", dash: true,
      data: pts(history, h => at(h, "demand.vcores")) },
  ];
}

function setSeries(chart, series) {
  if (!chart) return;
  chart.data.datasets = series.map((s, i) => ({
    label: s.label, data: s.data, borderColor: s.color || COLORS[i % COLORS.length],
    backgroundColor: s.color || COLORS[i % COLORS.length], borderDash: s.dash ? [6, 4] : [],
    borderWidth: 1.5, fill: false, yAxisID: s.axis || "y",
  }));
  chart.update();
  // How many points are drawn: lets a headless browser check the chart has data.
  chart.canvas.dataset.points = series.reduce((n, s) => n + s.data.length, 0);
}

function pts(history, f) {
  return history.map(h => ({ x: h.time / 1000, y: f(h) }));
}

function queueSeries(history) {
  const names = [...new Set(history.flatMap(h => Object.keys(h.queues)))].sort();
  const out = [];
  names.forEach((q, i) => {
    const color = COLORS[i % COLORS.length];
    out.push({ label: q, color, data: pts(history, h => (h.queues[q] || {}).allocatedMB / 1024 || 0) });
    out.push({ label: q + " share", color, dash: true,
               data: pts(history, h => ((h.queues[q] || {}).shareMB || 0) / 1024) });
  });
  return out;
}

// A node-label partition's chart: its allocated memory, its size (allocated +
// available, dashed) and each leaf queue's allocation there, in GB.
function partitionSeries(history, part) {
  const at = (h, f) => ((h.partitions || {})[part] || {})[f] || 0;
  const prefix = "queue.", suffix = ".allocated.memory";
  const queues = [...new Set(history.flatMap(h => Object.keys((h.partitions || {})[part] || {})))]
    .filter(k => k.startsWith(prefix) && k.endsWith(suffix)).sort();
  // Queues first: Chart.js draws the first datasets on top, so a queue that
  // holds the whole allocation stays visible over the total.
  const out = queues.map((k, i) => ({
    label: k.slice(prefix.length, -suffix.length), color: COLORS[i % COLORS.length],
    data: pts(history, h => at(h, k) / 1024) }));
  out.push(
    { label: "allocated", color: TOTAL, data: pts(history, h => at(h, "allocated.memory") / 1024) },
    { label: "size", color: TOTAL, dash: true,
      data: pts(history, h => (at(h, "allocated.memory") + at(h, "available.memory")) / 1024) });
  return out;
}

// One chart per partition the history names, created as partitions appear.
function partitionCharts(history) {
  const box = document.getElementById("partition-charts");
  if (!box) return;
  const names = [...new Set(history.flatMap(h => Object.keys(h.partitions || {})))];
  charts.partitions = charts.partitions || {};
  for (const name of names) {
    if (!charts.partitions[name]) {
      const div = document.createElement("div");
      div.className = "chart";
      const h2 = document.createElement("h2");
      h2.textContent = name;
      const canvas = document.createElement("canvas");
      canvas.className = "partition-chart";
      canvas.dataset.partition = name;
      div.append(h2, canvas);
      box.append(div);
      charts.partitions[name] = lineChart(canvas, "GB");
    }
    setSeries(charts.partitions[name], partitionSeries(history, name));
  }
  if (names.length) document.getElementById("partitions").hidden = false;
}

function table(id, rows) {
  const el = document.getElementById(id);
  if (!el) return;
  if (!rows.length) { el.innerHTML = "<tr><td>none</td></tr>"; return; }
  const keys = Object.keys(rows[0]);
  const esc = v => String(v == null ? "" : v).replace(/[&<>]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c]));
  el.innerHTML = "<tr>" + keys.map(k => "<th>" + esc(k) + "</th>").join("") + "</tr>" +
    rows.map(r => "<tr>" + keys.map(k => "<td>" + esc(r[k]) + "</td>").join("") + "</tr>").join("");
}

async function refresh() {
  let data;
  try {
    data = await (await fetch("/ws/v1/emu/track")).json();
  } catch (e) {
    document.getElementById("status").textContent = "the run is gone";
    return;
  }
  const h = data.history || [];
  document.getElementById("status").textContent = data.time == null ? "waiting for the run…" :
    (data.finished ? "run finished" : "running") + " — simulated " + (data.time / 1000).toFixed(0) + " s";
  setSeries(charts.running, [
    { label: "running apps", data: pts(h, p => p.appsRunning) },
    { label: "running containers", data: pts(h, p => p.containersAllocated) },
  ]);
  setSeries(charts.memory, [
    { label: "allocated", data: pts(h, p => p.allocatedMB / 1024) },
    { label: "available", data: pts(h, p => p.availableMB / 1024) },
  ]);
  setSeries(charts.vcores, [
    { label: "allocated", data: pts(h, p => p.allocatedVCores) },
    { label: "available", data: pts(h, p => p.availableVCores) },
  ]);
  setSeries(charts.queues, queueSeries(h));
  for (const [job, chart] of Object.entries(charts.jobs || {})) setSeries(chart, jobSeries(h, job));
  partitionCharts(h);
  table("queue-table", data.queues || []);
  table("app-table", data.apps || []);
  if (data.metrics) {
    table("metrics-table", Object.entries(data.metrics).map(([k, v]) => ({ metric: k, value: v })));
  }
}

window.addEventListener("DOMContentLoaded", () => {
  charts.running = lineChart("running", "count");
  charts.memory = lineChart("memory", "GB");
  charts.vcores = lineChart("vcores", "vcores");
  charts.queues = lineChart("queues", "GB");
  charts.jobs = {};
  for (const el of document.querySelectorAll("canvas.job-chart")) charts.jobs[el.dataset.job] = jobChart(el);
  refresh();
  setInterval(refresh, 1000);
});
