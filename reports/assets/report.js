(function () {
  var status = document.getElementById('script-status');
  try {
    var svg = document.getElementById('timeline'), plot = document.getElementById('plot');
    var d = svg.dataset, num = function (v) { return Number(v); };
    var origin = num(d.originUs), dataFrom = num(d.dataFromUs), dataTo = num(d.dataToUs);
    var minSpan = num(d.minSpanUs), px0 = num(d.plotX), pw = num(d.plotWidth), unit = num(d.unitUs);
    var height = num(svg.getAttribute('height')), v0 = num(d.viewFromUs), v1 = num(d.viewToUs);
    var ns = 'http://www.w3.org/2000/svg';
    var labels = Array.prototype.slice.call(document.querySelectorAll('#labels text[data-w]'));
    var ov = document.getElementById('overview'), ovView = document.getElementById('overview-view');
    var ovEnd = ov ? num(ov.dataset.endUs) : 1;
    function px(t) { return px0 + (t - v0) * pw / (v1 - v0); }
    function fmt(us, step) {
      var d = step >= 1e6 ? (step % 1e6 ? 1 : 0) : step >= 1e5 ? 1 : step >= 1e4 ? 2 : step >= 1e3 ? 3 : 4;
      return (us / 1e6).toFixed(d) + ' s';
    }
    function tickStep(span) {
      var raw = Math.max(span, 1) / 10, s = 1;
      while (s * 10 <= raw) s *= 10;
      return s * 5 <= raw ? s * 5 : s * 2 <= raw ? s * 2 : s;
    }
    function el(name, attrs, text) {
      var e = document.createElementNS(ns, name);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      return e;
    }
    function axis() {
      var grid = document.getElementById('grid'), ax = document.getElementById('axis');
      grid.textContent = ''; ax.textContent = '';
      var step = tickStep(v1 - v0);
      for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
        var x = px(t).toFixed(1);
        grid.appendChild(el('line', {x1: x, x2: x, y1: 26, y2: height - 26}));
        ax.appendChild(el('text', {x: x, y: 17}, fmt(t, step)));
        ax.appendChild(el('text', {x: x, y: height - 8}, fmt(t, step)));
      }
    }
    function placeLabels() {
      var rowEnd = {};
      labels.forEach(function (l) {
        if (l.dataset.laneHidden) { l.setAttribute('display', 'none'); return; }
        var a = num(l.dataset.fromUs), b = num(l.dataset.toUs), w = num(l.dataset.w);
        var row = num(l.dataset.row), x0 = px(a), x1 = px(b), x, show;
        if (l.dataset.instant) { x = x0 + 3; show = x0 >= px0 && x0 <= px0 + pw - w; }
        else { x = Math.max(x0, px0) + 3; show = Math.min(x1, px0 + pw) - x >= w - 3; }
        var key = row + ':' + l.getAttribute('y');
        if (show && row > 0 && rowEnd[key] !== undefined && rowEnd[key] > x) show = false;
        if (show && row > 0) rowEnd[key] = x + w;
        l.setAttribute('x', x.toFixed(1));
        if (show) l.removeAttribute('display'); else l.setAttribute('display', 'none');
      });
    }
    function apply() {
      plot.setAttribute('viewBox', ((v0 - origin) / unit) + ' 0 ' + ((v1 - v0) / unit) + ' ' + height);
      axis(); placeLabels();
      if (ovView) {
        var a = px0 + v0 * pw / ovEnd, b = px0 + v1 * pw / ovEnd;
        ovView.setAttribute('x', a.toFixed(1));
        ovView.setAttribute('width', Math.max(2, b - a).toFixed(1));
      }
      var vt = document.getElementById('view-text');
      if (vt) vt.textContent = 'view ' + (v0 / 1e6).toFixed(3) + ' s \u2013 ' + (v1 / 1e6).toFixed(3) + ' s';
    }
    function setView(a, b) {
      var span = Math.max(minSpan, Math.min(b - a, dataTo - dataFrom));
      var mid = (a + b) / 2;
      a = Math.round(mid - span / 2); b = a + Math.round(span);
      if (a < dataFrom) { b += dataFrom - a; a = dataFrom; }
      if (b > dataTo) { a -= b - dataTo; b = dataTo; }
      v0 = Math.max(dataFrom, a); v1 = b;
      apply();
    }
    function zoom(factor, atX) {
      var t = v0 + (atX - px0) / pw * (v1 - v0);
      setView(t - (t - v0) * factor, t + (v1 - t) * factor);
    }
    svg.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = svg.getBoundingClientRect();
      zoom(e.deltaY > 0 ? 1.25 : 0.8, e.clientX - r.left);
    }, {passive: false});
    var drag = null;
    svg.addEventListener('mousedown', function (e) { drag = {x: e.clientX, a: v0, b: v1}; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var dt = (e.clientX - drag.x) * (drag.b - drag.a) / pw;
      setView(drag.a - dt, drag.b - dt);
    });
    document.querySelectorAll('button[data-zoom]').forEach(function (b) {
      b.addEventListener('click', function () { zoom(b.dataset.zoom === 'in' ? 0.5 : 2, px0 + pw / 2); });
    });
    document.querySelectorAll('button[data-view-from-us]').forEach(function (b) {
      b.addEventListener('click', function () {
        setView(num(b.dataset.viewFromUs), num(b.dataset.viewToUs));
        svg.scrollIntoView({behavior: 'smooth', block: 'center'});
      });
    });
    // Moves the view to t (us); where the page keeps no detail, says how to get it.
    function seekTo(t) {
      setView(t - (v1 - v0) / 2, t + (v1 - v0) / 2);
      var far = document.getElementById('no-detail');
      if (far && (t < dataFrom || t > dataTo)) {
        // The page keeps detail for one window; elsewhere only the overview's bins.
        var s = (t / 1e6).toFixed(1);
        far.textContent = 'No detail kept at ' + s + ' s on this page (it shows ' +
          (dataFrom / 1e6).toFixed(1) + ' to ' + (dataTo / 1e6).toFixed(1) +
          ' s); to see it: lockstep report HISTORY --detail-at ' + s;
        far.style.display = 'block';
      } else if (far) {
        far.style.display = 'none';
      }
    }
    function seek(e) {
      var r = e.currentTarget.getBoundingClientRect();
      seekTo((e.clientX - r.left - px0) / pw * ovEnd);
    }
    if (ov) ov.addEventListener('click', seek);
    document.querySelectorAll('svg.chart.seek').forEach(function (c) { c.addEventListener('click', seek); });
    // The lane filter. Every shape keeps the geometry it was written with; a filter maps each
    // y through the hidden lanes (a point inside one moves to where it collapsed, one below
    // moves up by their heights), hides what lay inside them and shrinks what spanned them.
    var fullHeight = height, geo = null;
    var laneBoxes = Array.prototype.map.call(svg.querySelectorAll('g.lane[data-kind="thread"]'), function (g) {
      var bg = g.querySelector('rect.lanebg');
      return {g: g, name: g.dataset.lane, y: num(bg.getAttribute('y')), h: num(bg.getAttribute('height'))};
    });
    function globRe(p) {
      return new RegExp('^' + p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
    }
    function collect() {
      geo = [];
      svg.querySelectorAll('rect, line, text, polygon, polyline, circle').forEach(function (e) {
        if (e.closest('#grid') || e.closest('#axis')) return;
        var g = {e: e, a: {}};
        ['y', 'y1', 'y2', 'height', 'cy'].forEach(function (k) {
          if (e.hasAttribute(k)) g.a[k] = num(e.getAttribute(k));
        });
        if (e.hasAttribute('points')) g.points = e.getAttribute('points');
        g.display = e.getAttribute('display');
        geo.push(g);
      });
    }
    function filterLanes(text) {
      if (!geo) collect();
      var pats = text.split(',').map(function (s) { return s.trim(); }).filter(function (s) { return s; });
      var res = pats.map(globRe);
      var hidden = laneBoxes.filter(function (l) {
        var keep = !res.length || res.some(function (r) { return r.test(l.name); });
        l.g.dataset.filtered = keep ? 'in' : 'out';
        return !keep;
      });
      function mapY(y) {
        var d = 0;
        hidden.forEach(function (l) { d += Math.max(0, Math.min(y - l.y, l.h)); });
        return y - d;
      }
      function within(y) { return hidden.some(function (l) { return y >= l.y && y < l.y + l.h; }); }
      geo.forEach(function (g) {
        var e = g.e, a = g.a, gone = false;
        if (a.height !== undefined && a.y !== undefined) {
          var y0 = mapY(a.y), y1 = mapY(a.y + a.height);
          gone = a.height > 0 && y1 - y0 < 0.5;
          e.setAttribute('y', y0); e.setAttribute('height', Math.max(0, y1 - y0));
        } else if (a.y !== undefined) {
          gone = within(a.y - 1);
          e.setAttribute('y', mapY(a.y));
        }
        if (a.y1 !== undefined) {
          gone = a.y1 !== a.y2 ? mapY(a.y2) - mapY(a.y1) < 0.5 : within(a.y1);
          e.setAttribute('y1', mapY(a.y1)); e.setAttribute('y2', mapY(a.y2));
        }
        if (a.cy !== undefined) { gone = within(a.cy); e.setAttribute('cy', mapY(a.cy)); }
        if (g.points) {
          var pts = g.points.trim().split(/\s+/).map(function (p) {
            var xy = p.split(','); return xy[0] + ',' + mapY(num(xy[1]));
          });
          e.setAttribute('points', pts.join(' '));
        }
        if (e.parentNode && e.parentNode.id === 'labels') {
          if (gone) e.dataset.laneHidden = '1'; else delete e.dataset.laneHidden;
        } else if (gone) {
          e.setAttribute('display', 'none');
        } else if (g.display === null) {
          e.removeAttribute('display');
        } else {
          e.setAttribute('display', g.display);
        }
      });
      height = mapY(fullHeight);
      svg.setAttribute('height', height);
      plot.setAttribute('height', height);
      var count = document.getElementById('lane-count');
      if (count) count.textContent = res.length ? (laneBoxes.length - hidden.length) + ' of ' + laneBoxes.length : '';
      apply();
    }
    var laneInput = document.getElementById('lane-filter');
    if (laneInput) laneInput.addEventListener('input', function () { filterLanes(laneInput.value); });
    apply();
    // A link to a moment and lanes: report.html#t=1800 centres the view on 1,800 s,
    // #view=12.5-14 shows that stretch (seconds of true time), #lanes=c1*,c7.t0 filters the
    // lanes; joined with '&'.
    window.location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var kv = part.split('='), v = decodeURIComponent(kv.slice(1).join('='));
      if (kv[0] === 't' && /^[0-9.]+$/.test(v)) seekTo(Number(v) * 1e6);
      var m = kv[0] === 'view' ? /^([0-9.]+)-([0-9.]+)$/.exec(v) : null;
      if (m) { seekTo((Number(m[1]) + Number(m[2])) / 2 * 1e6); setView(Number(m[1]) * 1e6, Number(m[2]) * 1e6); }
      if (kv[0] === 'lanes' && laneInput) { laneInput.value = v; filterLanes(v); }
    });
    status.dataset.status = 'ok';
    status.textContent = 'lockstep report: wheel to zoom, drag to pan.';
  } catch (e) {
    status.dataset.status = 'error';
    status.textContent = 'script error: ' + e;
    throw e;
  }
})();
