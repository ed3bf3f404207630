// iolab dashboard: charts (tooltips, whiskers, pickers, PNG and SVG
// downloads), live progress over server-sent events, preset pre-filling,
// form errors, copy-URL buttons. No framework, no build step.
(function () {
  "use strict";
  window.iolabCharts = window.iolabCharts || {};
  var iolab = window.iolab = window.iolab || {};

  // Numbers for people (chartprep.js, shared with the server's SVG
  // renderer): units per Chart.Format: iops, us (µs), mibs and kibs
  // (MiB/s, KiB/s), pct, s.
  var prep = window.iolabPrep, sig = prep.sig, num = prep.num, tick = prep.tick;
  function withUnit(v, unit) {
    if (typeof v !== "number") return String(v);
    switch (unit) {
      case "us":
        if (v >= 1e6) return sig(v / 1e6) + " s";
        if (v >= 1000) return sig(v / 1000) + " ms";
        if (v < 1) return sig(v * 1000) + " ns";
        return sig(v) + " µs";
      case "iops": return num(v) + " IOPS";
      case "mibs": return v >= 1024 ? sig(v / 1024) + " GiB/s" : sig(v) + " MiB/s";
      case "kibs": return v >= 1024 * 1024 ? sig(v / 1024 / 1024) + " GiB/s" : v >= 1024 ? sig(v / 1024) + " MiB/s" : sig(v) + " KiB/s";
      case "pct": return sig(v) + " %";
      case "s": return sig(v) + " s";
    }
    return num(v);
  }
  iolab.format = { sig: sig, num: num, withUnit: withUnit };

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }
  function dot(color) { return '<i class="tt-dot" style="background:' + esc(color || "#999") + '"></i>'; }
  function extras(d) {
    var out = [];
    if (d && d.extra) d.extra.forEach(function (e) { out.push(esc(e[0]) + " " + withUnit(e[1], e[2])); });
    if (d && d.n) out.push(d.n + (d.n === 1 ? " repeat" : " repeats"));
    var html = out.length ? '<div class="tt-more">' + out.join(" · ") + "</div>" : "";
    if (d && d.note) html += '<div class="tt-note">' + esc(d.note) + "</div>";
    return html;
  }
  function head(fmt, name) { return fmt.x_name && name !== undefined && name !== "" ? esc(fmt.x_name) + " " + esc(name) : esc(name || ""); }

  // tooltipFor writes a chart's tooltips: units, three significant
  // digits, the repeats behind a point, and for lines only the hovered
  // series' own group (an engine's other percentiles), not every line.
  function tooltipFor(fmt, option) {
    return function (p) {
      if (Array.isArray(p)) { // axis trigger: one row per series at this x
        if (!p.length) return "";
        var rows = p.filter(function (q) { var v = q.value; return v !== "-" && v !== undefined && !(Array.isArray(v) && v[1] === "-"); });
        var x = fmt.tooltip === "time" ? "t = " + sig(Number(p[0].axisValue)) + " s" + (p[0].data && p[0].data.name ? " · " + esc(p[0].data.name) : "") : head(fmt, p[0].name);
        return '<div class="tt"><div class="tt-head">' + x + "</div>" + rows.map(function (q) {
          var v = Array.isArray(q.value) ? q.value[1] : q.value;
          return "<div>" + dot(q.color) + esc(q.seriesName) + " <b>" + withUnit(v, fmt.y) + "</b></div>";
        }).join("") + "</div>";
      }
      var d = p.data || {};
      switch (fmt.tooltip) {
        case "box":
          // echarts puts the category's index before a box's five values.
          var v = (d.value || []).slice(-5);
          return '<div class="tt"><div class="tt-head">' + dot(p.color) + esc(p.seriesName) + " · " + head(fmt, p.name) + "</div>" +
            "<div>median <b>" + withUnit(v[2], fmt.y) + "</b></div><div>min–max " + withUnit(v[0], fmt.y) + " – " + withUnit(v[4], fmt.y) + "</div>" +
            extras(d) + "</div>";
        case "lines":
          var g = fmt.groups ? fmt.groups[p.seriesIndex] : p.seriesIndex, rows = [];
          option.series.forEach(function (s, i) {
            if (fmt.groups && fmt.groups[i] !== g) return;
            var it = s.data && s.data[p.dataIndex];
            var val = it && typeof it === "object" ? it.value : it;
            if (typeof val !== "number") return;
            rows.push({ name: s.name, v: val, me: i === p.seriesIndex, color: (s.itemStyle || {}).color });
          });
          rows.sort(function (a, b) { return b.v - a.v; });
          return '<div class="tt"><div class="tt-head">' + head(fmt, p.name) + "</div>" + rows.map(function (r) {
            return '<div class="' + (r.me ? "tt-me" : "") + '">' + dot(r.color) + esc(r.name) + " " + withUnit(r.v, fmt.y) + "</div>";
          }).join("") + extras(d) + "</div>";
        case "dist":
          // The latency the curve is of, as its x axis names it: clat,
          // lat, slat or a block-layer part ("queue (µs)").
          var dv = d.value || [], xa = option.xAxis, xn = ((Array.isArray(xa) ? xa[0] : xa) || {}).name || "clat";
          return '<div class="tt"><div class="tt-head">' + dot(p.color) + esc(p.seriesName) + "</div><div>" + esc(String(xn).replace(/ \(µs\)$/, "")) + " ≈ <b>" + withUnit(dv[0], "us") +
            "</b>: " + withUnit(dv[1], "pct") + " of I/Os</div>" + extras(d) + "</div>";
      }
      var unit = d.unit || fmt.y || (d.extra && d.extra[0] && d.extra[0][2]) || "";
      var val2 = Array.isArray(d.value) ? d.value[1] : (d.value !== undefined ? d.value : p.value);
      return '<div class="tt"><div class="tt-head">' + dot(p.color) + esc(d.name && d.name !== p.name ? d.name : p.seriesName) + (fmt.x_name ? " · " + head(fmt, p.name) : " · " + esc(p.name)) +
        "</div><div><b>" + withUnit(val2, unit) + "</b></div>" + extras(d) + "</div>";
    };
  }

  // prepare turns a chart's option from the server into what echarts
  // draws (chartprep.js: the legend's rows, whiskers, dashes, axis
  // labels) and adds what only a page has: the tooltips.
  // A reader who asked their system for less motion gets the charts
  // drawn at once, without echarts' animations.
  var stillCharts = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function prepare(option, fmt, width) {
    prep.prepare(option, width);
    if (stillCharts) option.animation = false;
    option.tooltip = Object.assign({}, option.tooltip || {}, { confine: true, formatter: tooltipFor(fmt, option) });
    return option;
  }

  var byDiv = new Map();
  window.addEventListener("resize", function () { byDiv.forEach(function (c) { c.chart.resize(); }); });

  // initCharts draws the charts under root (the page, or what the live
  // view fetched again).
  function initCharts(root) {
    root.querySelectorAll(".chart[data-option]").forEach(initChart);
    swatches(root);
  }

  // initChartsLazily draws the charts under root as each comes into
  // view: the live view fetches a run's charts again as each step ends,
  // and drawing a dozen off screen would keep the page from the next
  // step's events on a machine the run keeps busy.
  function initChartsLazily(root) {
    if (!window.IntersectionObserver) return initCharts(root);
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (!e.isIntersecting) return;
        seen.unobserve(e.target);
        initChart(e.target);
      });
    }, { rootMargin: "200px" });
    root.querySelectorAll(".chart[data-option]").forEach(function (div) { seen.observe(div); });
    swatches(root);
  }

  function swatches(root) {
    root.querySelectorAll("i.swatch[data-color]").forEach(function (el) { el.style.background = el.dataset.color; });
  }

  function initChart(div) {
    var svgPage = new URLSearchParams(location.search).get("renderer") === "svg";
    var option, fmt;
    try {
      option = JSON.parse(div.dataset.option);
      fmt = JSON.parse(div.dataset.format || "{}");
    } catch (e) { div.textContent = "bad chart option: " + e; return; }
    prepare(option, fmt, div.clientWidth);
    var chart = echarts.init(div, null, svgPage ? { renderer: "svg" } : undefined);
    chart.setOption(option);
    byDiv.set(div, { chart: chart, json: div.dataset.option, fmt: fmt });
    window.iolabCharts[div.dataset.kind] = chart;
  }

  // exportChart renders a chart as a download: PNG at twice its size on
  // screen, or SVG drawn by echarts' SVG renderer from the same option,
  // with the series the legend hides left hidden.
  iolab.exportChart = function (div, type) {
    var c = byDiv.get(div);
    if (!c) return null;
    var name = (div.dataset.file || "iolab-chart") + "." + type;
    if (type === "png") {
      return { name: name, url: c.chart.getDataURL({ type: "png", pixelRatio: 2, backgroundColor: "#fff" }) };
    }
    var option = prepare(JSON.parse(c.json), c.fmt, div.clientWidth);
    var legend = c.chart.getOption().legend;
    if (legend && legend[0] && legend[0].selected) option.legend = Object.assign({}, option.legend, { selected: legend[0].selected });
    var svg = echarts.init(null, null, { renderer: "svg", ssr: true, width: div.clientWidth, height: div.clientHeight });
    svg.setOption(option);
    var text = svg.renderToSVGString();
    svg.dispose();
    return { name: name, svg: text, url: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text) };
  };

  // disposeCharts lets go of the charts under root before it is replaced.
  function disposeCharts(root) {
    root.querySelectorAll(".chart[data-option]").forEach(function (div) {
      var c = byDiv.get(div);
      if (!c) return;
      c.chart.dispose();
      byDiv.delete(div);
    });
  }

  function downloads(root) {
    root.querySelectorAll("[data-download]").forEach(function (b) {
      b.addEventListener("click", function () {
        var div = b.closest("figure").querySelector(".chart[data-option]");
        var out = div && iolab.exportChart(div, b.dataset.download);
        if (!out) return;
        var a = document.createElement("a");
        a.href = out.url;
        a.download = out.name;
        document.body.appendChild(a);
        a.click();
        a.remove();
      });
    });
  }

  // pickers write what a chart draws into the page's URL, so every view
  // stays a URL a colleague can open, and draw it without a reload: the
  // page at the new URL is fetched and its charts that changed (a
  // picker's parameter may apply to every chart) are put in place of
  // these, the page kept where the reader scrolled it. Without a script
  // the form submits, its hidden inputs keeping the rest of the view.
  function pickers(root) {
    root.querySelectorAll("form.pickers").forEach(function (form) {
      form.addEventListener("submit", function (e) { e.preventDefault(); });
      form.addEventListener("change", function (e) {
        var fs = e.target.closest("fieldset.picker");
        if (!fs) return;
        var param = fs.dataset.param, u = new URL(location.href);
        u.searchParams.delete(param);
        if (e.target.tagName === "SELECT") {
          if (e.target.value) u.searchParams.set(param, e.target.value);
        } else {
          form.querySelectorAll('input[name="' + param + '"]:checked').forEach(function (i) { u.searchParams.append(param, i.value); });
        }
        history.replaceState(history.state, "", u.toString());
        redraw(u.toString(), form.closest("figure"));
      });
    });
  }

  // sources are the charts' figures as the server wrote them, before
  // echarts drew into them: what a redraw compares the fresh ones with.
  var sources = new WeakMap();
  function remember(root) {
    root.querySelectorAll("figure.chart-box[data-kind]").forEach(function (f) { sources.set(f, f.outerHTML); });
  }

  // redraw fetches the page at href and swaps in the charts that differ
  // (and the chart page's table, the job links); the figure the reader
  // picked in stays where it was on screen. A later pick wins over an
  // earlier one still loading; a failed fetch loads the page whole.
  var redrawSeq = 0;
  function redraw(href, anchor) {
    var seq = ++redrawSeq;
    if (anchor) anchor.classList.add("redrawing");
    fetch(href, { headers: { Accept: "text/html" }, credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (html) {
      if (seq !== redrawSeq) return;
      var top = anchor ? anchor.getBoundingClientRect().top : 0, kind = anchor && anchor.dataset.kind;
      var doc = new DOMParser().parseFromString(html, "text/html");
      document.querySelectorAll("figure.chart-box[data-kind]").forEach(function (mine) {
        var fresh = doc.querySelector('figure.chart-box[data-kind="' + mine.dataset.kind + '"]');
        if (!fresh) return;
        if (fresh.outerHTML === sources.get(mine)) { mine.classList.remove("redrawing"); return; }
        disposeCharts(mine);
        mine.replaceWith(fresh);
        remember(fresh.parentNode);
        initCharts(fresh);
        downloads(fresh);
        pickers(fresh);
      });
      ["chart-jobs", "chart-table"].forEach(function (id) {
        var mine = document.getElementById(id), fresh = doc.getElementById(id);
        if (mine && fresh) mine.replaceWith(fresh);
      });
      var now = kind && document.querySelector('figure.chart-box[data-kind="' + kind + '"]');
      if (now) window.scrollBy(0, now.getBoundingClientRect().top - top);
    }).catch(function () { if (seq === redrawSeq) location.assign(href); });
  }

  function fmtSeconds(s) {
    if (s < 0) return "unknown";
    s = Math.round(s);
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + r + "s";
  }

  // liveRates is a progress or step event's IOPS, as the static charts
  // write numbers: each job's when the step runs several (never a
  // writer's added to a reader's), with their total when they are alike.
  function liveRates(d) {
    if (d.jobs && d.jobs.length > 1) {
      return d.jobs.map(function (j) { return j.name + " " + withUnit(j.iops, "iops"); }).join(", ") +
        (d.more ? " (and " + d.more + " more jobs)" : "");
    }
    if (d.jobs && d.jobs.length === 1) return withUnit(d.jobs[0].iops, "iops");
    return withUnit(d.iops, "iops");
  }

  // refresher fetches the run's page again and puts its charts and steps
  // table in place of these: each finished step shows as it finishes.
  // One fetch at a time; a step that ends during one asks for another,
  // and a page that takes over a second to fetch and swap (a run of
  // thousands of steps) is fetched at most once every three times that.
  // after is called once the page is swapped in.
  function refresher(after) {
    var busy = false, again = false, took = 0, last = 0;
    function swap(html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      ["run-charts", "run-steps"].forEach(function (id) {
        var mine = document.getElementById(id), fresh = doc.getElementById(id);
        if (!mine || !fresh) return;
        disposeCharts(mine);
        mine.replaceWith(fresh);
        remember(fresh);
        initChartsLazily(fresh);
        downloads(fresh);
        pickers(fresh);
      });
      after();
    }
    function run() {
      var wait = took > 1000 ? last + 3 * took - Date.now() : 0;
      if (wait > 0) { busy = true; setTimeout(function () { busy = false; run(); }, wait); return; }
      busy = true;
      again = false;
      var start = Date.now();
      fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" }).then(function (r) {
        return r.ok ? r.text() : null;
      }).then(function (html) { if (html) swap(html); }).catch(function () {}).then(function () {
        last = Date.now();
        took = last - start;
        busy = false;
        if (again) run();
      });
    }
    return function () { if (busy) again = true; else run(); };
  }

  function live() {
    var box = document.getElementById("live");
    if (!box || !window.EventSource) return;
    var id = box.dataset.run;
    var chart = echarts.init(document.getElementById("live-chart"));
    // One series per job (or one for the step); the last step's stay
    // drawn until the next step's first point.
    var series = {}, names = [], stale = false, drawn = "";
    function draw() {
      chart.setOption({
        title: { text: "IOPS per interval" + (drawn ? " · " + drawn : "") },
        legend: { show: names.length > 1, data: names.slice(), top: 22 },
        series: names.map(function (n) { return { type: "line", name: n, showSymbol: series[n].length < 8, data: series[n] }; })
      }, { replaceMerge: ["series"] });
    }
    chart.setOption({
      animation: false,
      title: { text: "IOPS per interval", left: "center", textStyle: { fontSize: 13 } },
      tooltip: { trigger: "axis", formatter: function (p) {
        if (!p.length) return "";
        return "t = " + sig(p[0].value[0]) + " s" + p.map(function (q) { return "<br>" + q.marker + esc(q.seriesName) + " <b>" + withUnit(q.value[1], "iops") + "</b>"; }).join("");
      } },
      grid: { top: 50 },
      xAxis: { type: "value", name: "s", min: 0, axisLabel: { formatter: tick } },
      yAxis: { type: "value", name: "IOPS", axisLabel: { formatter: tick } },
      series: []
    });
    window.iolabCharts.live = chart;
    // An agent's step reaches the store apart from its events: a page
    // fetched before it lacks the step the stream said had ended, and is
    // fetched again a second later (three times at most).
    var ended = 0, retries = 0; // the last step whose end the page saw
    var refresh = refresher(function () {
      var table = document.getElementById("run-steps");
      if (!table || Number(table.dataset.steps) >= ended) { retries = 0; return; }
      if (retries++ < 3) setTimeout(function () { refresh(); }, 1000);
    });
    var stepEl = document.getElementById("live-step"), iopsEl = document.getElementById("live-iops"),
        leftEl = document.getElementById("live-left"), queuedEl = document.getElementById("live-queued");
    var es = new EventSource("/api/runs/" + id + "/events");
    // The page says whether it follows the run (an EventSource
    // reconnects by itself after an error).
    es.onopen = function () { box.dataset.stream = "open"; };
    es.onerror = function () { box.dataset.stream = "lost"; };
    es.addEventListener("queued", function (e) {
      var d = JSON.parse(e.data);
      queuedEl.hidden = false;
      queuedEl.textContent = "Queued: " + d.waiting + ".";
    });
    // An agent's run: its agent unreachable (the run goes on there), or
    // back.
    var reachEl = document.getElementById("live-reach"), reachBadge = document.getElementById("run-reach");
    es.addEventListener("agent", function (e) {
      var d = JSON.parse(e.data);
      if (reachEl) { reachEl.hidden = !d.unreachable; reachEl.textContent = d.unreachable ? d.text : ""; }
      if (reachBadge) reachBadge.hidden = !d.unreachable;
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
        stale = true;
        var st = document.getElementById("run-status");
        if (st && st.textContent !== "running") { st.textContent = "running"; st.className = "status s-running"; }
        stepEl.textContent = "step " + d.step + "/" + d.total + " · " + d.label;
        // Steps that ended before the page listened (or while it had
        // lost the stream): the table has fewer than the steps before.
        var table = document.getElementById("run-steps");
        if (table && Math.max(Number(table.dataset.steps), ended) < d.step - 1) refresh();
      } else {
        stepEl.textContent = "step " + d.step + "/" + d.total + " · " + d.label + ": " + d.status +
          (d.jobs && d.jobs.length ? ", " + liveRates(d) : "") + (d.error ? " (" + d.error + ")" : "");
        ended = Math.max(ended, d.step);
        refresh();
      }
    });
    var phaseEl = document.getElementById("live-phase");
    var phaseText = { discard: "discarding the device (blkdiscard) before the step", prepare: "preparing the step (caches, scheduler, files)",
      ramp: "ramp: not measured", measure: "measuring" };
    es.addEventListener("progress", function (e) {
      var d = JSON.parse(e.data);
      if (phaseEl) { phaseEl.textContent = phaseText[d.phase] || ""; phaseEl.className = "phase phase-" + (d.phase || ""); }
      leftEl.textContent = fmtSeconds(d.left_s);
      if (d.phase === "discard" || d.phase === "prepare") {
        // No I/O yet: no rate to show, and the step's time has not begun.
        iopsEl.textContent = "– IOPS";
        return;
      }
      if (stale) { series = {}; names = []; stale = false; }
      drawn = "step " + d.step + "/" + d.total;
      var t = Math.round(d.elapsed_s * 100) / 100;
      var rows = d.jobs && d.jobs.length > 1 ? d.jobs : [{ name: "IOPS", iops: d.iops }];
      rows.forEach(function (j) {
        if (!series[j.name]) { series[j.name] = []; names.push(j.name); }
        series[j.name].push([t, Math.round(j.iops)]);
      });
      draw();
      // The clat p99 since the step's measured window began, from the
      // jobs' own snapshots (the ones --status-interval prints), once
      // enough I/Os completed for it.
      iopsEl.textContent = liveRates(d) + (d.clat_p99_us ? " · clat p99 " + withUnit(d.clat_p99_us, "us") + " so far" : "");
    });
    // A fio server's step: how far it is and its IOPS, as fio's server
    // tells its client each second (every job together), drawn as a
    // local step's.
    es.addEventListener("percent", function (e) {
      var d = JSON.parse(e.data);
      stepEl.textContent = "step " + d.step + "/" + d.total;
      if (phaseEl) { phaseEl.textContent = "fio server " + d.phase + (d.percent >= 0 ? ": " + Math.round(d.percent) + " % of the step" : ""); phaseEl.className = "phase"; }
      if (!d.from_fio || d.phase !== "running") {
        iopsEl.textContent = d.iops ? withUnit(d.iops, "iops") : "– IOPS (fio has not said yet)";
        return;
      }
      if (stale) { series = {}; names = []; stale = false; }
      drawn = "step " + d.step + "/" + d.total;
      if (!series.IOPS) { series.IOPS = []; names.push("IOPS"); }
      series.IOPS.push([Math.round(d.elapsed_s * 100) / 100, Math.round(d.iops)]);
      draw();
      iopsEl.textContent = withUnit(d.iops, "iops") + " (fio's status)";
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

  // The runs list filters as soon as a filter changes.
  function filters() {
    var f = document.getElementById("run-filters");
    if (!f) return;
    // Empty filters stay out of the URL: /runs?label=iommu%3Doff, not a
    // list of every filter.
    var clean = function () { f.querySelectorAll("select, input").forEach(function (el) { if (!el.value) el.disabled = true; }); };
    f.addEventListener("submit", clean);
    f.querySelectorAll("select").forEach(function (s) { s.addEventListener("change", function () { clean(); f.submit(); }); });
  }

  // A group's page follows its runs while one is active, and shows the
  // comparison once they have all ended. It asks again a second after
  // each answer, not every second: a dashboard slow to answer (fifty
  // hosts on a busy machine took 10 s) is never sent polls that pile up.
  function group() {
    var t = document.getElementById("group-runs");
    if (!t || !t.dataset.active) return;
    var again = function () { setTimeout(poll, 1000); };
    var poll = function () {
      fetch("/api/groups/" + t.dataset.group, { headers: { Accept: "application/json" } }).then(function (r) { return r.json(); }).then(function (g) {
        (g.members || []).forEach(function (m) {
          var row = t.querySelector('tr[data-run="' + m.run_id + '"]');
          if (!row) return;
          var st = row.querySelector('[data-col="status"]');
          st.textContent = m.status;
          st.className = "status s-" + m.status;
          row.querySelector('[data-col="steps"]').textContent = m.steps + "/" + m.planned;
          row.querySelector('[data-col="progress"]').textContent = m.progress || "";
          var reach = row.querySelector('[data-col="reach"]');
          if (reach) {
            var away = !!(m.agent && m.agent.unreachable);
            reach.hidden = !away;
            reach.title = away ? m.agent.text : "";
            reach.textContent = "agent unreachable" + (away && m.agent.last_heard ? ", last heard " + new Date(m.agent.last_heard).toLocaleString() : "");
          }
        });
        if (!g.active) { setTimeout(function () { location.reload(); }, 300); return; }
        again();
      }).catch(again);
    };
    again();
  }

  document.addEventListener("DOMContentLoaded", function () {
    group();
    filters();
    remember(document);
    initCharts(document);
    downloads(document);
    pickers(document);
    live();
    presets();
    copyButtons();
  });
})();
