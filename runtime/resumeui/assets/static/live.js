// Keeps a run's page live: asks the server for the page's changing part
// every data-poll milliseconds while the run can still change, and
// replaces it when it differs. The server renders (and escapes) it; no
// value is built here. A form being edited is never replaced.
(function () {
  var live = document.getElementById("live");
  if (!live) return;
  var every = parseInt(live.dataset.poll, 10) || 1000;
  // The part as the server last sent it: graph.js changes the DOM (it
  // draws the graph), so the DOM is not what to compare with.
  var last = live.innerHTML;
  var url = location.pathname + location.search + (location.search ? "&" : "?") + "part=live";
  function editing() {
    var a = document.activeElement;
    return a && live.contains(a) && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA");
  }
  function tick() {
    fetch(url, {credentials: "same-origin", cache: "no-store"}).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html === null) { setTimeout(tick, every); return; }
      var t = document.createElement("template");
      t.innerHTML = html; // parsed, not run: serialized as live.innerHTML was
      html = t.innerHTML;
      if (html !== last && !editing()) {
        last = html;
        live.innerHTML = html;
        live.dataset.updated = String(Date.now());
        live.dispatchEvent(new Event("live-updated"));
      }
      setTimeout(tick, every);
    }, function () { setTimeout(tick, every * 4); });
  }
  setTimeout(tick, every);
})();
