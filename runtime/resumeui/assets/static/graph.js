// Draws a run's step graph: the server renders the Mermaid source, marked
// with the run's position, as text in <pre id="graph">; this draws it with
// the vendored Mermaid into #graph-svg and hides the text. When Mermaid is
// missing or the drawing fails, the text stays. Redrawn after live.js
// replaces the page's changing part.
(function () {
  var drawn = 0;
  function draw() {
    var pre = document.getElementById("graph"), box = document.getElementById("graph-svg");
    if (!pre || !box || typeof mermaid === "undefined") return;
    var n = ++drawn;
    mermaid.render("graph-drawing-" + n, pre.textContent).then(function (out) {
      if (n !== drawn || !document.body.contains(box)) return;
      box.innerHTML = out.svg;
      box.hidden = false;
      pre.hidden = true;
      box.dataset.drawn = "1";
    }, function (err) {
      box.dataset.error = String(err && err.message || err);
    });
  }
  if (typeof mermaid !== "undefined") {
    mermaid.initialize({startOnLoad: false, securityLevel: "strict", theme: "neutral", flowchart: {htmlLabels: false, useMaxWidth: false}});
  }
  draw();
  var live = document.getElementById("live");
  if (live) live.addEventListener("live-updated", draw);
})();
