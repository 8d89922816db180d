// kron rpt --html: the page's script (embedded in every page at build time; no external script).
// The timeline is drawn on a canvas from the JSON in <script id="kron-data"> (html_timeline.cpp writes it):
// lanes per thread grouped by process or rank, nested bars per scope, the threads' states beneath, arrows for
// messages. What is narrower than a pixel is drawn once per pixel column, so a view costs the same whatever
// the recording's length. The table sorts and filters; a check on load marks <html data-ok="1">.
(function () {
  'use strict';

  // ---- Units --------------------------------------------------------------------------------------------
  function human(ns) {
    var a = Math.abs(ns);
    function sig(v, unit) { return v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) + ' ' + unit; }
    if (a === 0) return '0';
    if (a < 1e3) return sig(ns, 'ns');
    if (a < 1e6) return sig(ns / 1e3, 'µs');
    if (a < 1e9) return sig(ns / 1e6, 'ms');
    if (a < 1e12) return sig(ns / 1e9, 's');
    return (ns / 1e9).toFixed(0) + ' s';
  }
  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  var colours = {};  // name * 11 + alpha in tenths -> its CSS colour, made once
  function colour(name, alpha) {
    var a = alpha === undefined ? 10 : Math.round(alpha * 10), key = name * 11 + a;
    if (!(key in colours))
      colours[key] = 'hsla(' + ((name * 137.508) % 360).toFixed(0) + ',55%,' + (name % 2 ? 58 : 66) + '%,' + a / 10 + ')';
    return colours[key];
  }
  var STATES = [['running', '#3c9a5f'], ['runnable (preempted)', '#e0a030'], ['blocked (waiting)', '#c3c9d1']];

  // ---- The table: sort by any column, filter by name or thread -------------------------------------------
  function setupTable() {
    var table = document.getElementById('report');
    if (!table) return;
    var body = table.tBodies[0], heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col], c;
          if (x.hasAttribute('data-v')) c = parseFloat(x.getAttribute('data-v')) - parseFloat(y.getAttribute('data-v'));
          else c = x.textContent.localeCompare(y.textContent);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
    var filter = document.getElementById('filter');
    if (filter) filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (r) {
        var t = (r.cells[0].textContent + ' ' + r.cells[1].textContent).toLowerCase();
        r.hidden = q !== '' && t.indexOf(q) < 0;
      });
    });
  }

  // ---- The timeline -----------------------------------------------------------------------------------------
  var ROW = 15, STATE = 7, GAP = 5, GROUP = 18, AXIS = 22, GUTTER = 190;

  // Rows of one lane and depth (or the lane's states): flat arrays sorted by start, and their longest duration.
  function Rows() { this.start = []; this.dur = []; this.name = []; this.value = []; this.maxDur = 0; }
  Rows.prototype.add = function (s, d, n, v) {
    this.start.push(s); this.dur.push(d); this.name.push(n); this.value.push(v);
    if (d > this.maxDur) this.maxDur = d;
  };
  Rows.prototype.first = function (t) {  // the first index whose start is >= t
    var lo = 0, hi = this.start.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (this.start[mid] < t) lo = mid + 1; else hi = mid; }
    return lo;
  };

  function build(d) {
    var lanes = d.lanes.map(function (l, i) {
      return { i: i, info: l, depths: [], states: null, grid: [], sgrid: null, depthN: 0 };
    });
    var b = d.bars, k, t = 0;  // starts come as steps from the one before
    for (k = 0; k + 5 < b.length; k += 6) {
      var lane = lanes[b[k]], dep = b[k + 1];
      t += b[k + 3];
      while (lane.depths.length <= dep) lane.depths.push(new Rows());
      lane.depths[dep].add(t, b[k + 4], b[k + 2], b[k + 5]);
    }
    var s = d.states;
    for (k = 0, t = 0; k + 4 < s.length; k += 5) {
      var ln = lanes[s[k]];
      t += s[k + 2];
      if (!ln.states) ln.states = new Rows();
      ln.states.add(t, s[k + 3], s[k + 1], s[k + 4]);
    }
    var g = d.grid;
    for (k = 0; k + 4 < g.length; k += 5) {
      var gl = lanes[g[k]];
      while (gl.grid.length <= g[k + 1]) gl.grid.push([]);
      gl.grid[g[k + 1]].push(g[k + 2], g[k + 3], g[k + 4]);
    }
    var sg = d.sgrid;
    for (k = 0; k + 4 < sg.length; k += 5) {
      var sl = lanes[sg[k]];
      if (!sl.sgrid) { sl.sgrid = []; if (!sl.states) sl.states = new Rows(); }
      sl.sgrid.push(sg[k + 1], sg[k + 2], sg[k + 3], sg[k + 4]);
    }
    lanes.forEach(function (l) { l.depthN = Math.max(l.depths.length, l.grid.length); });
    // Lanes grouped by rank, then process, in order of first appearance.
    var groups = [], byKey = {};
    lanes.forEach(function (l) {
      var key = l.info.rank + '/' + l.info.source;
      if (!(key in byKey)) { byKey[key] = groups.length; groups.push({ label: l.info.group, rank: l.info.rank, lanes: [] }); }
      groups[byKey[key]].lanes.push(l);
    });
    groups.sort(function (a, b) { return (a.rank < 0 ? 1e9 : a.rank) - (b.rank < 0 ? 1e9 : b.rank); });
    var y = AXIS;
    groups.forEach(function (gr) {
      gr.y = y; y += GROUP;
      gr.lanes.forEach(function (l) {
        l.y = y;
        l.h = Math.max(1, l.depthN) * ROW + (l.states ? STATE + 2 : 0);
        y += l.h + GAP;
      });
    });
    return { lanes: lanes, groups: groups, height: y + 4 };
  }

  function Timeline(el, d) {
    this.el = el; this.d = d; this.canvas = el.querySelector('canvas'); this.tip = el.querySelector('.tip');
    this.m = build(d);
    this.span = Math.max(1, d.span);
    this.v0 = 0; this.v1 = this.span;
    this.drawn = 0; this.pending = false;
    this.bind();
    this.resize();
  }
  Timeline.prototype.resize = function () {
    var dpr = window.devicePixelRatio || 1, w = Math.max(320, this.el.clientWidth);
    this.w = w; this.h = this.m.height;
    this.canvas.width = Math.round(w * dpr); this.canvas.height = Math.round(this.h * dpr);
    this.canvas.style.height = this.h + 'px';
    this.ctx = this.canvas.getContext('2d');
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.draw();
  };
  Timeline.prototype.x = function (t) { return GUTTER + (t - this.v0) * (this.w - GUTTER) / (this.v1 - this.v0); };
  Timeline.prototype.t = function (x) { return this.v0 + (x - GUTTER) * (this.v1 - this.v0) / (this.w - GUTTER); };
  Timeline.prototype.setView = function (a, b) {
    var min = 1000;  // 1 µs across the whole width at most
    if (b - a < min) { var c = (a + b) / 2; a = c - min / 2; b = c + min / 2; }
    var w = b - a, pad = w * 0.05;
    if (w > this.span + 2 * pad) { a = -pad; b = this.span + pad; }
    if (a < -pad) { b -= a + pad; a = -pad; }
    if (b > this.span + pad) { a -= b - this.span - pad; b = this.span + pad; }
    this.v0 = a; this.v1 = b;
    this.schedule();
  };
  Timeline.prototype.zoom = function (f, atX) {
    var t = this.t(atX === undefined ? (GUTTER + this.w) / 2 : atX);
    this.setView(t - (t - this.v0) * f, t + (this.v1 - t) * f);
  };
  Timeline.prototype.pan = function (f) { var w = this.v1 - this.v0; this.setView(this.v0 + w * f, this.v1 + w * f); };
  // One redraw for any number of changes: at the next frame, or after 100 ms where frames are not running
  // (a background tab, a headless browser).
  Timeline.prototype.schedule = function () {
    var self = this;
    if (this.pending) return;
    this.pending = true;
    var run = function () { if (self.pending) { self.pending = false; self.draw(); } };
    window.requestAnimationFrame(run);
    window.setTimeout(run, 100);
  };

  // Draws rows of bars: wider than a pixel as they are, narrower once per pixel column (the last one wins).
  Timeline.prototype.drawRows = function (rows, y, h, fill) {
    if (!rows || !rows.start.length) return;
    var ctx = this.ctx, i = rows.first(this.v0 - rows.maxDur), n = rows.start.length, lastCol = -1, labels = [];
    var sx = (this.w - GUTTER) / (this.v1 - this.v0);
    for (; i < n && rows.start[i] <= this.v1; i++) {
      var s = rows.start[i], e = s + rows.dur[i];
      if (e < this.v0) continue;
      var x0 = Math.max(GUTTER, GUTTER + (s - this.v0) * sx), x1 = Math.min(this.w, GUTTER + (e - this.v0) * sx);
      if (x1 - x0 < 1) {
        var col = Math.floor(x0);
        if (col === lastCol) continue;
        lastCol = col; x0 = col; x1 = col + 1;
      } else {
        lastCol = Math.floor(x1 - 1);
      }
      ctx.fillStyle = fill(rows.name[i]);
      ctx.fillRect(x0, y, x1 - x0, h);
      this.drawn++;
      if (x1 - x0 > 40 && h >= ROW - 2) labels.push(i, x0, x1);
    }
    return labels;
  };

  // E420: what was left out, summed per column (a column narrower than a pixel: the first of its pixel's).
  Timeline.prototype.drawGrid = function (cells, y, h, col) {
    var ctx = this.ctx, sx = (this.w - GUTTER) / (this.v1 - this.v0), lastCol = -1;
    for (var k = 0; k < cells.length; k += 3) {
      var s = cells[k] * col, e = s + col;
      if (e < this.v0 || s > this.v1) continue;
      var x0 = Math.max(GUTTER, GUTTER + (s - this.v0) * sx), x1 = Math.min(this.w, GUTTER + (e - this.v0) * sx);
      if (Math.floor(x0) === lastCol) continue;
      lastCol = Math.floor(x0);
      ctx.fillStyle = colour(cells[k + 2], Math.min(1, 0.25 + 0.75 * cells[k + 1] / col));
      ctx.fillRect(x0, y + 1, Math.max(1, x1 - x0), h - 2);
      this.drawn++;
    }
  };

  Timeline.prototype.drawStateGrid = function (cells, y, col) {
    var ctx = this.ctx, sx = (this.w - GUTTER) / (this.v1 - this.v0);
    for (var k = 0; k < cells.length; k += 4) {
      var s = cells[k] * col, e = s + col;
      if (e < this.v0 || s > this.v1) continue;
      var x0 = Math.max(GUTTER, GUTTER + (s - this.v0) * sx), x1 = Math.min(this.w, GUTTER + (e - this.v0) * sx);
      var best = 0;
      for (var q = 1; q < 3; q++) if (cells[k + 1 + q] > cells[k + 1 + best]) best = q;
      ctx.fillStyle = STATES[best][1];
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), STATE);
      this.drawn++;
    }
  };

  Timeline.prototype.drawAxis = function () {
    var ctx = this.ctx, step = niceStep((this.v1 - this.v0) / Math.max(1, (this.w - GUTTER) / 120));
    ctx.fillStyle = '#66707c'; ctx.strokeStyle = '#e6e9ed'; ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    for (var t = Math.ceil(this.v0 / step) * step; t <= this.v1; t += step) {
      var x = Math.round(this.x(t)) + 0.5;
      if (x < GUTTER) continue;
      ctx.beginPath(); ctx.moveTo(x, AXIS - 4); ctx.lineTo(x, this.h); ctx.stroke();
      ctx.fillText(human(t), x, 13);
    }
    ctx.textAlign = 'left';
  };

  Timeline.prototype.laneMid = function (l) { return l.y + Math.min(l.h, ROW) / 2; };

  Timeline.prototype.drawArrows = function () {
    var a = this.d.arrows, ctx = this.ctx, lanes = this.m.lanes;
    ctx.lineWidth = 1.2;
    for (var k = 0; k + 6 < a.length; k += 7) {
      if (a[k + 3] < this.v0 || a[k + 1] > this.v1) continue;
      var x0 = this.x(a[k + 1]), y0 = this.laneMid(lanes[a[k]]), x1 = this.x(a[k + 3]), y1 = this.laneMid(lanes[a[k + 2]]);
      ctx.strokeStyle = ctx.fillStyle = a[k + 6] ? 'rgba(60,60,60,.8)' : 'rgba(138,58,185,.85)';
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
      var ang = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath(); ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 7 * Math.cos(ang - 0.4), y1 - 7 * Math.sin(ang - 0.4));
      ctx.lineTo(x1 - 7 * Math.cos(ang + 0.4), y1 - 7 * Math.sin(ang + 0.4));
      ctx.fill();
      this.drawn++;
    }
    ctx.lineWidth = 1;
  };

  Timeline.prototype.drawLane = function (l) {
    var ctx = this.ctx, col = this.d.col, names = this.d.names;
    ctx.fillStyle = '#fafbfc'; ctx.fillRect(GUTTER, l.y, this.w - GUTTER, l.h);
    for (var g = 0; g < l.grid.length; g++) this.drawGrid(l.grid[g], l.y + g * ROW, ROW, col);
    for (var dep = 0; dep < l.depths.length; dep++) {
      var y = l.y + dep * ROW, labels = this.drawRows(l.depths[dep], y + 1, ROW - 2, function (n) { return colour(n); });
      ctx.fillStyle = '#1d232b'; ctx.font = '10px system-ui, sans-serif';
      for (var k = 0; labels && k < labels.length; k += 3) {
        var rows = l.depths[dep], i = labels[k], x0 = labels[k + 1], x1 = labels[k + 2];
        ctx.save(); ctx.beginPath(); ctx.rect(x0, y, x1 - x0 - 2, ROW); ctx.clip();
        ctx.fillText(names[rows.name[i]][0] + ' ' + human(rows.dur[i]), x0 + 3, y + ROW - 4);
        ctx.restore();
      }
    }
    if (l.states) {
      var sy = l.y + Math.max(1, l.depthN) * ROW + 2;
      if (l.sgrid) this.drawStateGrid(l.sgrid, sy, col);
      this.drawRows(l.states, sy, STATE, function (s) { return STATES[s][1]; });
    }
    ctx.fillStyle = '#1d232b'; ctx.font = '12px system-ui, sans-serif';
    ctx.save(); ctx.beginPath(); ctx.rect(0, l.y, GUTTER - 6, l.h); ctx.clip();
    ctx.fillText(l.info.label, 14, l.y + 11);
    ctx.restore();
  };

  Timeline.prototype.draw = function () {
    var ctx = this.ctx, self = this;
    this.drawn = 0;
    ctx.clearRect(0, 0, this.w, this.h);
    this.drawAxis();
    this.m.groups.forEach(function (g) {
      ctx.fillStyle = '#eef1f4'; ctx.fillRect(0, g.y, self.w, GROUP - 2);
      ctx.fillStyle = '#1d232b'; ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(g.label, 4, g.y + 12);
      g.lanes.forEach(function (l) { self.drawLane(l); });
    });
    this.drawArrows();
    this.el.setAttribute('data-shapes', String(this.drawn));
    this.el.setAttribute('data-view', Math.round(this.v0) + ' ' + Math.round(this.v1));
  };

  // What is under the pointer: a bar, a state stretch, a grid column, or nothing.
  Timeline.prototype.hit = function (x, y) {
    var t = this.t(x), tol = 2 * (this.v1 - this.v0) / (this.w - GUTTER), lanes = this.m.lanes, names = this.d.names;
    for (var li = 0; li < lanes.length; li++) {
      var l = lanes[li];
      if (y < l.y || y >= l.y + l.h) continue;
      var dep = Math.floor((y - l.y) / ROW), rows = dep < l.depthN ? l.depths[dep] : null, head = l.info.label + '\n';
      if (dep >= l.depthN && l.states) rows = l.states;
      if (rows) {
        var i = rows.first(t + tol) - 1;
        for (; i >= 0 && rows.start[i] + rows.maxDur >= t - tol; i--) {
          if (rows.start[i] + rows.dur[i] < t - tol) continue;
          if (rows === l.states)
            return head + STATES[rows.name[i]][0] + ' ' + human(rows.dur[i]) + (rows.name[i] === 0 ? ' on CPU ' + rows.value[i] : '') +
              '\nat ' + human(rows.start[i]);
          var nm = names[rows.name[i]];
          return head + nm[0] + '  ' + human(rows.dur[i]) + '\nat ' + human(rows.start[i]) +
            (rows.value[i] ? '\nvalue ' + rows.value[i] : '') + (nm[1] ? '\n' + nm[1] : '');
        }
      }
      var cells = l.grid[dep], col = this.d.col, c = Math.floor(t / col);
      for (var k = 0; cells && k < cells.length; k += 3)
        if (cells[k] === c)
          return head + 'left out at this zoom (' + human(col) + ' column): scopes cover ' +
            (100 * cells[k + 1] / col).toFixed(0) + '%, mostly ' + names[cells[k + 2]][0];
      return null;
    }
    return null;
  };

  Timeline.prototype.bind = function () {
    var self = this, el = this.el, drag = null;
    el.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = el.getBoundingClientRect();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) self.pan((e.deltaX || e.deltaY) / 800);
      else self.zoom(Math.pow(1.0015, e.deltaY), e.clientX - r.left);
    }, { passive: false });
    el.addEventListener('mousedown', function (e) { drag = { x: e.clientX, v0: self.v0, v1: self.v1 }; el.style.cursor = 'grabbing'; });
    window.addEventListener('mouseup', function () { drag = null; el.style.cursor = ''; });
    el.addEventListener('mousemove', function (e) {
      var r = el.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      if (drag) {
        var dt = (e.clientX - drag.x) * (drag.v1 - drag.v0) / (self.w - GUTTER);
        self.setView(drag.v0 - dt, drag.v1 - dt);
        self.tip.hidden = true;
        return;
      }
      var text = x > GUTTER ? self.hit(x, y) : null;
      self.tip.hidden = !text;
      if (text) {
        self.tip.textContent = text;
        self.tip.style.left = Math.min(x + 12, self.w - 300) + 'px';
        self.tip.style.top = (y + 14) + 'px';
      }
    });
    el.addEventListener('mouseleave', function () { self.tip.hidden = true; });
    el.addEventListener('keydown', function (e) {
      var k = e.key.toLowerCase(), done = true;
      if (k === 'w' || k === '+' || k === '=') self.zoom(0.7);
      else if (k === 's' || k === '-') self.zoom(1 / 0.7);
      else if (k === 'a' || k === 'arrowleft') self.pan(-0.2);
      else if (k === 'd' || k === 'arrowright') self.pan(0.2);
      else if (k === '0' || k === 'home') self.setView(0, self.span);
      else done = false;
      if (done) e.preventDefault();
    });
    window.addEventListener('resize', function () { self.resize(); });
  };

  function legend(d) {
    var el = document.getElementById('legend');
    if (!el) return;
    var count = {}, b = d.bars, k;
    for (k = 0; k + 5 < b.length; k += 6) count[b[k + 2]] = (count[b[k + 2]] || 0) + 1;
    var top = Object.keys(count).sort(function (x, y) { return count[y] - count[x]; }).slice(0, 12);
    function item(c, text) {
      var i = document.createElement('i'); i.style.background = c; el.appendChild(i);
      el.appendChild(document.createTextNode(text));
    }
    top.forEach(function (n) { item(colour(+n), d.names[n][0]); });
    if (d.states.length || d.sgrid.length) STATES.forEach(function (s) { item(s[1], s[0]); });
    if (d.arrows.length) item('rgba(138,58,185,.85)', 'message');
    var dr = d.dropped, notes = [];
    if (dr.bars) notes.push(dr.bars + ' shorter scopes summed per column');
    if (dr.states) notes.push(dr.states + ' shorter state stretches summed per column');
    if (dr.arrows) notes.push(dr.arrows + ' messages not drawn');
    if (dr.deeper) notes.push(dr.deeper + ' scopes nested too deep to draw');
    el.appendChild(document.createTextNode('  ·  wheel or W/S: zoom, drag or A/D: pan, 0: whole recording' +
      (notes.length ? '  ·  ' + notes.join('; ') : '')));
  }

  // ---- On load: draw, then check that everything that should show does ------------------------------------
  function check(tl) {
    var svgs = document.querySelectorAll('svg.hist'), ok = svgs.length === KRON_CHARTS;
    svgs.forEach(function (s) {
      var b = s.getBoundingClientRect();
      if (s.querySelectorAll('rect.bar').length === 0 || b.width <= 0 || b.height <= 0) ok = false;
    });
    if (tl && (tl.d.bars.length || tl.d.states.length || tl.d.grid.length) && tl.drawn === 0) ok = false;
    document.documentElement.setAttribute('data-charts', String(svgs.length));
    document.documentElement.setAttribute('data-ok', ok ? '1' : '0');
  }

  window.addEventListener('load', function () {
    setupTable();
    var node = document.getElementById('kron-data'), d = node ? JSON.parse(node.textContent) : null, tl = null;
    var el = document.getElementById('timeline');
    if (d && el) {
      tl = new Timeline(el, d);
      legend(d);
      window.kronTimeline = tl;
    }
    document.documentElement.setAttribute('data-open-ms', performance.now().toFixed(0));
    check(tl);
  });
})();
