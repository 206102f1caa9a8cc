// emu report: draws the charts from the JSON embedded in the page.
// Chart.js (MIT) is inlined before this script.
"use strict";
(function () {
  const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  const data = JSON.parse(document.getElementById("emu-report-data").textContent);
  const color = i => COLORS[i % COLORS.length];

  function line(id, xTitle, yTitle, datasets, yMax) {
    const el = document.getElementById(id);
    if (!el) return;
    new Chart(el, {
      type: "line",
      data: { datasets: datasets.map((d, i) => ({
        label: d.label, data: d.data, borderColor: d.color || color(i),
        backgroundColor: d.color || color(i), borderDash: d.dash ? [6, 4] : [],
        borderWidth: 1.5, pointRadius: 0, fill: false, stepped: d.stepped || false,
      })) },
      options: {
        animation: false, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: "linear", title: { display: true, text: xTitle } },
                  y: { beginAtZero: true, max: yMax, title: { display: true, text: yTitle } } },
      },
    });
    el.dataset.points = datasets.reduce((n, d) => n + d.data.length, 0);
  }

  const xy = (xs, ys) => xs.map((x, i) => ({ x, y: ys[i] })).filter(p => p.y != null);

  line("utilization", "simulated seconds", "memory allocated %",
       data.runs.map(r => ({ label: r.name, data: xy(r.t_s, r.memory_pct) })), 100);
  line("jain", "simulated seconds", "Jain's index (dominant shares)",
       data.runs.filter(r => r.jain.length).map(r => ({ label: r.name, data: xy(r.t_s, r.jain) })), 1);
  line("cdf", "turnaround seconds", "fraction of jobs",
       data.runs.filter(r => r.cdf.length).map(r => ({
         label: r.name, stepped: true,
         data: r.cdf.map((x, i) => ({ x, y: (i + 1) / r.cdf.length })) })), 1);

  const waitEl = document.getElementById("wait");
  if (waitEl) {
    const queues = [...new Set(data.runs.flatMap(r => Object.keys(r.wait_by_queue)))].sort();
    new Chart(waitEl, {
      type: "bar",
      data: { labels: queues, datasets: data.runs.map((r, i) => ({
        label: r.name, backgroundColor: color(i),
        data: queues.map(q => r.wait_by_queue[q] ?? null) })) },
      options: { animation: false, maintainAspectRatio: false,
                 scales: { y: { beginAtZero: true, title: { display: true, text: "mean wait s" } } } },
    });
  }

  data.runs.forEach((r, k) => {
    const sets = [];
    Object.entries(r.queues).forEach(([q, s], i) => {
      sets.push({ label: q, color: color(i), data: xy(r.t_s, s.allocated_gb) });
      if (s.share_gb) {
        const share = { capacity: " guarantee", fair: " fair share" }[r.scheduler] || " capacity";
        sets.push({ label: q + share,
                    color: color(i), dash: true, data: xy(r.t_s, s.share_gb) });
      }
    });
    line("queues-" + k, "simulated seconds", "memory GB", sets);
  });

  // Node-label partitions (only runs that had them): utilisation per
  // partition, then each partition's queues against its size.
  data.runs.forEach((r, k) => {
    const parts = Object.entries(r.partitions || {});
    if (!parts.length) return;
    const t = r.partition_t_s;
    line("partition-util-" + k, "simulated seconds", "memory allocated %",
         parts.map(([p, s], i) => ({ label: p, color: color(i), data: xy(t, s.memory_pct) })), 100);
    parts.forEach(([p, s], j) => {
      // Queues first: Chart.js draws the first datasets on top.
      const sets = Object.entries(s.queues).map(([q, gb], i) =>
        ({ label: q, color: color(i), data: xy(t, gb) }));
      sets.push({ label: "allocated", color: "#555", data: xy(t, s.allocated_gb) },
                { label: "size", color: "#555", dash: true, data: xy(t, s.size_gb) });
      line("partition-" + k + "-" + j, "simulated seconds", "memory GB", sets);
    });
  });
})();
