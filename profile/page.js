// The page is drawn already (SVG): the script adds the timeline's tooltip
// and says, in <body data-rendered>, that it ran: "ok", or "error" with the
// message shown at the top of the page.
(function () {
  "use strict";
  var body = document.body;
  function fail(msg) {
    body.setAttribute("data-rendered", "error");
    var e = document.getElementById("script-error");
    e.textContent = "The page's script failed: " + msg;
    e.hidden = false;
  }
  window.onerror = function (msg, src, line) { fail(msg + " (line " + line + ")"); };

  function fmtSize(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    var i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    if (i === 0) return n + " B";
    return (n < 10 ? n.toFixed(1) : n.toFixed(0)) + " " + units[i];
  }
  // As the page's own figures: "6.31 ms", "2.50 s".
  function fmtTime(s) {
    var v = s, unit = "s";
    if (s < 1e-3) { v = s * 1e6; unit = "µs"; } else if (s < 1) { v = s * 1e3; unit = "ms"; }
    return v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) + " " + unit;
  }
  function row(parent, cls, left, right, colour) {
    var r = document.createElement("div");
    r.className = "row";
    var l = document.createElement("span");
    l.className = cls;
    if (colour) {
      var sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = colour;
      sw.style.marginRight = "6px";
      l.appendChild(sw);
    }
    l.appendChild(document.createTextNode(left));
    var v = document.createElement("span");
    v.textContent = right;
    r.appendChild(l);
    r.appendChild(v);
    parent.appendChild(r);
  }

  try {
    var P = PROFILE;
    var svg = document.getElementById("timeline");
    var hover = document.getElementById("hover");
    var cross = document.getElementById("crosshair");
    var tip = document.getElementById("tooltip");
    var box = svg.parentNode;

    // The last point at or before t: each point's level holds until the next.
    function at(t) {
      var lo = 0, hi = P.t.length - 1;
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (P.t[mid] > t) hi = mid - 1; else lo = mid;
      }
      return lo;
    }
    function show(ev) {
      var rect = svg.getBoundingClientRect();
      var x = (ev.clientX - rect.left) * P.width / rect.width;
      var t = Math.max(0, Math.min(P.end, (x - P.x0) / (P.x1 - P.x0) * P.end));
      var i = at(t);
      cross.setAttribute("x1", x);
      cross.setAttribute("x2", x);
      cross.setAttribute("visibility", "visible");
      while (tip.firstChild) tip.removeChild(tip.firstChild);
      var head = document.createElement("div");
      head.className = "head";
      head.textContent = fmtTime(t);
      tip.appendChild(head);
      var live = P.live[i], total = 0, order = [];
      for (var k = 0; k < live.length; k++) {
        total += live[k];
        if (live[k] > 0) order.push(k);
      }
      order.sort(function (a, b) { return live[b] - live[a]; });
      row(tip, "", "live", fmtSize(total));
      row(tip, "", "reserved", fmtSize(P.reserved[i]));
      for (var j = 0; j < order.length && j < 8; j++) {
        row(tip, "site", P.bands[order[j]], fmtSize(live[order[j]]), P.colours[order[j]]);
      }
      tip.hidden = false;
      var bx = box.getBoundingClientRect();
      var left = ev.clientX - bx.left + 16;
      if (left + tip.offsetWidth > bx.width) left = ev.clientX - bx.left - tip.offsetWidth - 16;
      tip.style.left = left + "px";
      tip.style.top = Math.max(0, ev.clientY - bx.top - tip.offsetHeight / 2) + "px";
    }
    hover.addEventListener("mousemove", show);
    hover.addEventListener("mouseleave", function () {
      tip.hidden = true;
      cross.setAttribute("visibility", "hidden");
    });

    // What the browser laid out, for a test to read from the DOM.
    var bands = svg.querySelectorAll("#bands path").length;
    var pieces = document.querySelectorAll("svg.segments rect.piece").length;
    var width = Math.round(document.getElementById("bands").getBBox().width);
    body.setAttribute("data-bands", bands);
    body.setAttribute("data-pieces", pieces);
    body.setAttribute("data-timeline-width", width);
    if (body.getAttribute("data-rendered") === "pending") body.setAttribute("data-rendered", "ok");
  } catch (err) {
    fail(String(err && err.stack || err));
  }
})();
