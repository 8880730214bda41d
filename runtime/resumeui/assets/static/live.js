// Keeps a run's page live: asks the server for the page's changing part
// every data-poll milliseconds while the run can still change, and
// replaces it when it differs. The server renders (and escapes) it; no
// value is built here. A form being edited is never replaced.
(function () {
  var live = document.getElementById("live");
  if (!live) return;
  var every = parseInt(live.dataset.poll, 10) || 1000;
  var url = location.pathname + location.search + (location.search ? "&" : "?") + "part=live";
  function editing() {
    var a = document.activeElement;
    return a && live.contains(a) && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA");
  }
  function tick() {
    fetch(url, {credentials: "same-origin", cache: "no-store"}).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html !== null && html !== live.innerHTML && !editing()) {
        live.innerHTML = html;
        live.dataset.updated = String(Date.now());
      }
      setTimeout(tick, every);
    }, function () { setTimeout(tick, every * 4); });
  }
  setTimeout(tick, every);
})();
