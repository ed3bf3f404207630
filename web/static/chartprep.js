// iolab chart preparation: what turns a chart's option from the server
// into what echarts draws, shared by the dashboard (app.js) and the
// server's SVG renderer (web/render, for reports), so that a chart in a
// write-up is drawn as the page draws it. Formatters and renderers are
// functions, which JSON cannot carry. No DOM: it runs in goja too.
(function (root) {
  "use strict";

  // Numbers for people: three significant digits, k/M/G above 1000 (as
  // bench/units.Number writes them on the server).
  function sig(v) {
    if (v === 0 || !isFinite(v)) return String(v);
    var r = Number(Math.abs(v).toPrecision(3)), e = Math.floor(Math.log10(r));
    return (v < 0 ? "-" : "") + r.toFixed(Math.max(0, 2 - e));
  }
  function num(v) {
    if (typeof v !== "number" || !isFinite(v)) return String(v);
    var sign = v < 0 ? "-" : "", suf = ["", "k", "M", "G", "T"], i = 0;
    v = Math.abs(v);
    while (Number(v.toPrecision(3)) >= 1000 && i < suf.length - 1) { v /= 1000; i++; }
    return sign + sig(v) + suf[i];
  }

  // tick is an axis label: num without its trailing zeros (4k, 2.5k, 0.1).
  function tick(v) { return num(v).replace(/\.(\d*?)0+(?=[kMGT]?$)/, ".$1").replace(/\.(?=[kMGT]?$)/, ""); }

  // errorBar draws the whiskers of one bar (series with renderItem
  // "errorbar"): [category, low, high, the bar's place, bars per
  // category, and optionally how far right of the bar's middle, in bar
  // widths (beside a label along the bar)], with the bars' gaps the server sets (barGap 20 %,
  // barCategoryGap 30 %).
  function errorBar(params, api) {
    var x = api.value(0), lo = api.value(1), hi = api.value(2), k = api.value(3), n = api.value(4);
    var band = api.size([1, 0])[0], catW = band * 0.7, w = catW / (n + (n - 1) * 0.2);
    var base = api.coord([x, hi]);
    var aside = api.value(5) || 0;
    var cx = base[0] - catW / 2 + k * w * 1.2 + w / 2 + aside * w, yhi = base[1], ylo = api.coord([x, lo])[1];
    var cap = Math.min(w * (aside ? 0.3 : 0.5), 12), style = { stroke: "#222", lineWidth: 1.3 };
    return { type: "group", children: [
      { type: "line", shape: { x1: cx, y1: ylo, x2: cx, y2: yhi }, style: style },
      { type: "line", shape: { x1: cx - cap / 2, y1: ylo, x2: cx + cap / 2, y2: ylo }, style: style },
      { type: "line", shape: { x1: cx - cap / 2, y1: yhi, x2: cx + cap / 2, y2: yhi }, style: style }
    ] };
  }

  // whisker draws the min–max whisker of a point of a line on value or
  // log axes (series with renderItem "whisker"): [x, low, high, the
  // series' place, how many series], the series' whiskers at one x a few
  // pixels apart, in the series' colour.
  function whisker(params, api) {
    var x = api.value(0), k = api.value(3), n = api.value(4);
    var lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
    var cx = lo[0] + (k - (n - 1) / 2) * 5, cap = 4, style = { stroke: api.visual("color"), lineWidth: 1.3 };
    return { type: "group", children: [
      { type: "line", shape: { x1: cx, y1: lo[1], x2: cx, y2: hi[1] }, style: style },
      { type: "line", shape: { x1: cx - cap, y1: lo[1], x2: cx + cap, y2: lo[1] }, style: style },
      { type: "line", shape: { x1: cx - cap, y1: hi[1], x2: cx + cap, y2: hi[1] }, style: style }
    ] };
  }

  // fitLegend lays the legend out in as many rows as its names need at
  // width (no paging: a figure shows every name) and moves the plot up.
  function fitLegend(option, width) {
    if (!option.legend || !width) return;
    var names = [];
    (option.series || []).forEach(function (s) { if (s.name && names.indexOf(s.name) < 0) names.push(s.name); });
    var rows = 1, x = 0, avail = width - 60;
    names.forEach(function (n) {
      var w = 7 * n.length + 45;
      if (x + w > avail && x > 0) { rows++; x = 0; }
      x += w;
    });
    option.legend = Object.assign({}, option.legend, { type: "plain", left: "center", itemGap: 16 });
    var grids = [].concat(option.grid || []);
    var last = grids[grids.length - 1];
    if (last && last.bottom !== undefined) last.bottom = String(parseInt(last.bottom, 10) + 22 * (rows - 1));
  }

  // fitSubtitle breaks the subtitle into lines that fit width (at 12 px,
  // a character is about 7 px wide: echarts' server-side layout guesses
  // narrower, so it would not break a line that runs off a report's
  // 960 px figure) and moves the plots down by the lines it takes, and a
  // little more: in that layout, one line ends where the y axis's name
  // begins. Lines the server broke count too.
  function fitSubtitle(option, width) {
    var t = option.title;
    if (!t || Array.isArray(t) || !t.subtext || !width) return;
    // A line break the server wrote stays one: each of its lines is
    // broken in turn.
    var most = Math.max(20, Math.floor((width - 30) / 7)), lines = [];
    t.subtext.split("\n").forEach(function (para) {
      var line = "";
      para.split(" ").forEach(function (w) {
        if (line && line.length + 1 + w.length > most) { lines.push(line); line = w; } else line = line ? line + " " + w : w;
      });
      lines.push(line);
    });
    t.subtext = lines.join("\n");
    t.subtextStyle = Object.assign({}, t.subtextStyle, { lineHeight: 15 });
    var shift = 14 + 15 * (lines.length - 1);
    [].concat(option.grid || []).forEach(function (g) {
      if (typeof g.top === "string" && /^\d+$/.test(g.top)) g.top = String(parseInt(g.top, 10) + shift);
    });
  }

  // prepare makes option drawable at width: the legend's rows, the
  // subtitle's lines, no toolbox, a white ground, whiskers, dashes,
  // two-line labels and axis labels as a person writes them (10, 2.5,
  // 1k, 1.2M).
  function prepare(option, width) {
    fitLegend(option, width);
    fitSubtitle(option, width);
    delete option.toolbox;
    option.backgroundColor = "#fff";
    option.textStyle = { fontFamily: "system-ui, -apple-system, 'Segoe UI', sans-serif" };
    (option.series || []).forEach(function (s) {
      if (s.type === "custom" && s.renderItem === "errorbar") s.renderItem = errorBar;
      if (s.type === "custom" && s.renderItem === "whisker") s.renderItem = whisker;
      // The dashes echarts has no name for (chart.dashes).
      var dash = { dashDot: [8, 3, 2, 3], longDash: [12, 4] }[(s.lineStyle || {}).type];
      if (dash) s.lineStyle.type = dash;
      // Labels of two lines (p99 and its change) need room.
      (Array.isArray(s.data) ? s.data : []).forEach(function (d) {
        if (d && d.label && d.label.formatter && !d.label.lineHeight) d.label.lineHeight = 14;
      });
    });
    [].concat(option.yAxis || []).forEach(function (a) {
      if (a.name) a.nameTextStyle = Object.assign({ align: "left" }, a.nameTextStyle);
    });
    [].concat(option.yAxis || [], option.xAxis || []).forEach(function (a) {
      if (a.type === "value" || a.type === "log") a.axisLabel = Object.assign({}, a.axisLabel, { formatter: tick });
    });
    return option;
  }

  root.iolabPrep = { sig: sig, num: num, tick: tick, prepare: prepare };
})(typeof window !== "undefined" ? window : this);
