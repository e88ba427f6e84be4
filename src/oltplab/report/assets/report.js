// Draws every figure of the report: each <script type="application/json" class="figure-data">
// holds one plotly figure for the element named by its data-target attribute.
(function () {
  "use strict";
  var blocks = document.querySelectorAll("script.figure-data");
  var pending = [];
  blocks.forEach(function (block) {
    var target = document.getElementById(block.getAttribute("data-target"));
    if (!target) { return; }
    try {
      var fig = JSON.parse(block.textContent);
      pending.push(Promise.resolve(Plotly.newPlot(target, fig.data, fig.layout,
        {responsive: true, displaylogo: false})).catch(function (e) {
          target.textContent = "This chart could not be drawn: " + e;
          target.classList.add("failed");
        }));
    } catch (e) {
      target.textContent = "This chart could not be drawn: " + e;
      target.classList.add("failed");
    }
  });
  Promise.all(pending).then(function () {
    document.body.setAttribute("data-charts-drawn", String(blocks.length));
  });
})();
