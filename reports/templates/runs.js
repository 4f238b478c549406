/* The per-run table: rows from the page's JSON (`view.run_rows`), filtered by phase, verdict
   and checker with selects. No library, nothing fetched. */
(function () {
  var data = JSON.parse(document.getElementById("run-data").textContent);
  var table = document.getElementById("run-table");
  var form = document.getElementById("run-filters");
  var count = document.getElementById("run-count");
  var fields = data.fields, values = data.values, filtered = ["phase", "verdict", "checker", "scenario"];
  var esc = function (v) {
    return String(v === null ? "" : v).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  };
  var cell = function (row, i) {
    var f = fields[i];
    return values[f] ? values[f][row[i]] : row[i];
  };
  table.tHead.innerHTML = "<tr>" + fields.map(function (f) { return "<th>" + esc(f) + "</th>"; }).join("") + "</tr>";
  var selects = {};
  filtered.forEach(function (f) {
    var label = document.createElement("label");
    var select = document.createElement("select");
    select.name = f;
    select.innerHTML = '<option value="">all</option>' + values[f].map(function (v, i) {
      return '<option value="' + i + '">' + esc(v || "(none)") + "</option>";
    }).join("");
    select.addEventListener("change", draw);
    label.append(f + " ", select);
    form.append(label);
    selects[f] = select;
  });
  form.hidden = false;
  function draw() {
    var shown = data.rows.filter(function (row) {
      return filtered.every(function (f) {
        var chosen = selects[f].value;
        return chosen === "" || row[fields.indexOf(f)] === Number(chosen);
      });
    });
    table.tBodies[0].innerHTML = shown.map(function (row) {
      return '<tr class="verdict-' + esc(cell(row, 3)) + '">' + row.map(function (v, i) {
        return "<td>" + esc(cell(row, i)) + "</td>";
      }).join("") + "</tr>";
    }).join("");
    count.textContent = shown.length + " of " + data.rows.length + " runs";
  }
  draw();
})();
