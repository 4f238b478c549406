/* The per-run table: rows from the page's JSON (`view.run_rows`: one column per field, small
   numbers as base-36 digits, seconds in hundredths), filtered by phase, verdict, checker and
   scenario with selects. No library, nothing fetched. */
(function () {
  var data = JSON.parse(document.getElementById("run-data").textContent);
  var table = document.getElementById("run-table");
  var form = document.getElementById("run-filters");
  var count = document.getElementById("run-count");
  var fields = data.fields, values = data.values, columns = data.columns;
  var filtered = ["phase", "verdict", "checker", "scenario"];
  var total = columns.run.length;
  var esc = function (v) {
    return String(v === null ? "" : v).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  };
  var raw = function (f, i) {  /* a place in values[f], a count, or a run id */
    var col = columns[f];
    return typeof col === "string" ? parseInt(col.charAt(i), 36) : col[i];
  };
  var shown = function (f, i) {
    var v = raw(f, i);
    if (values[f]) return values[f][v];
    if (f === "seconds") return v === null ? "" : (v / 100).toFixed(2);
    return v;
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
    var rows = [];
    for (var i = 0; i < total; i++) {
      var keep = filtered.every(function (f) {
        var chosen = selects[f].value;
        return chosen === "" || raw(f, i) === Number(chosen);
      });
      if (!keep) continue;
      rows.push('<tr class="verdict-' + esc(shown("verdict", i)) + '">' + fields.map(function (f) {
        return "<td>" + esc(shown(f, i)) + "</td>";
      }).join("") + "</tr>");
    }
    table.tBodies[0].innerHTML = rows.join("");
    count.textContent = rows.length + " of " + total + " runs";
  }
  draw();
})();
