// iolab dashboard: chart init, live progress over server-sent events,
// preset pre-filling, copy-URL buttons. No framework, no build step.
(function () {
  "use strict";
  window.iolabCharts = window.iolabCharts || {};

  function initCharts() {
    document.querySelectorAll(".chart[data-option]").forEach(function (div) {
      var option;
      try { option = JSON.parse(div.dataset.option); } catch (e) { div.textContent = "bad chart option: " + e; return; }
      var chart = echarts.init(div);
      if (!option.toolbox) {
        option.toolbox = { feature: { saveAsImage: { title: "save as PNG" }, dataZoom: {}, restore: {} } };
      }
      chart.setOption(option);
      window.iolabCharts[div.dataset.kind] = chart;
      window.addEventListener("resize", function () { chart.resize(); });
    });
  }

  function fmtSeconds(s) {
    if (s < 0) return "unknown";
    s = Math.round(s);
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + r + "s";
  }

  function live() {
    var box = document.getElementById("live");
    if (!box || !window.EventSource) return;
    var id = box.dataset.run;
    var chart = echarts.init(document.getElementById("live-chart"));
    var points = [];
    chart.setOption({
      animation: false,
      title: { text: "IOPS per interval", left: "center", textStyle: { fontSize: 13 } },
      tooltip: { trigger: "axis" },
      xAxis: { type: "value", name: "s", min: 0 },
      yAxis: { type: "value", name: "IOPS" },
      series: [{ type: "line", name: "IOPS", showSymbol: false, data: points }]
    });
    window.iolabCharts.live = chart;
    var stepEl = document.getElementById("live-step"), iopsEl = document.getElementById("live-iops"),
        leftEl = document.getElementById("live-left"), queuedEl = document.getElementById("live-queued");
    var es = new EventSource("/api/runs/" + id + "/events");
    es.addEventListener("queued", function (e) {
      var d = JSON.parse(e.data);
      queuedEl.hidden = false;
      queuedEl.textContent = "Queued: " + d.waiting + ".";
    });
    es.addEventListener("notice", function (e) {
      // What the runner does before the jobs start (laying out files).
      queuedEl.hidden = false;
      queuedEl.textContent = JSON.parse(e.data).message;
    });
    es.addEventListener("step", function (e) {
      var d = JSON.parse(e.data);
      queuedEl.hidden = true;
      if (!d.status) {
        points.length = 0;
        stepEl.textContent = "step " + d.step + "/" + d.total + " · " + d.label;
        chart.setOption({ series: [{ data: points }] });
      } else {
        // Each job's IOPS, never a writer's added to a reader's.
        var jobs = (d.jobs || []).map(function (j) {
          return (d.jobs.length > 1 ? j.name + " " : "") + Math.round(j.iops) + " IOPS";
        }).join(", ");
        stepEl.textContent = "step " + d.step + "/" + d.total + " · " + d.label + ": " + d.status +
          (jobs ? ", " + jobs : "") + (d.error ? " (" + d.error + ")" : "");
      }
    });
    es.addEventListener("progress", function (e) {
      var d = JSON.parse(e.data);
      points.push([Math.round(d.elapsed_s * 10) / 10, Math.round(d.iops)]);
      chart.setOption({ series: [{ data: points }] });
      iopsEl.textContent = Math.round(d.iops).toLocaleString();
      leftEl.textContent = fmtSeconds(d.left_s);
    });
    es.addEventListener("done", function (e) {
      es.close();
      var d = JSON.parse(e.data);
      var st = document.getElementById("run-status");
      if (st) { st.textContent = d.status; st.className = "status s-" + d.status; }
      setTimeout(function () { location.reload(); }, 300);
    });
  }

  function presets() {
    var form = document.getElementById("new-run");
    if (!form) return;
    var list = JSON.parse(form.dataset.presets || "[]");
    var sel = document.getElementById("preset"), desc = document.getElementById("preset-description");
    function fill(initial) {
      var p = list.find(function (x) { return x.name === sel.value; });
      desc.textContent = p ? p.description : "";
      if (!p || initial) return;
      Object.keys(p.fields).forEach(function (k) {
        var el = form.elements[k];
        if (!el) return;
        if (el.type === "checkbox") el.checked = p.fields[k] === "true";
        else el.value = p.fields[k];
      });
    }
    sel.addEventListener("change", function () { fill(false); });
    fill(true);
  }

  function copyButtons() {
    document.querySelectorAll("[data-copy-url]").forEach(function (b) {
      b.addEventListener("click", function () {
        var done = function () { b.textContent = "copied"; setTimeout(function () { b.textContent = "copy URL"; }, 1500); };
        if (navigator.clipboard) navigator.clipboard.writeText(location.href).then(done, function () { prompt("URL", location.href); });
        else prompt("URL", location.href);
      });
    });
    document.querySelectorAll("form[data-confirm]").forEach(function (f) {
      f.addEventListener("submit", function (e) { if (!confirm(f.dataset.confirm)) e.preventDefault(); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    initCharts();
    live();
    presets();
    copyButtons();
  });
})();
