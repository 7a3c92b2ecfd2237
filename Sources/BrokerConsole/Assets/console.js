// Data4Help console: the only script. It uploads a file from "My data" with a progress bar; every other
// page works without JavaScript. Served from /console.js (the Content-Security-Policy forbids inline code).
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("upload-form");
  if (!form) return;
  var progress = document.getElementById("upload-progress");
  var result = document.getElementById("upload-result");
  var button = document.getElementById("upload-submit");
  // The page's words, in its language: the form's `data-say-*` attributes (from the catalog), each `{name}`
  // filled from `values`.
  function say(name, values) {
    var text = form.getAttribute("data-say-" + name) || "";
    Object.keys(values || {}).forEach(function (key) { text = text.split("{" + key + "}").join(String(values[key])); });
    return text;
  }
  function samples(count) { return say(count === 1 ? "stored-one" : "stored-other", { count: count }); }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = document.getElementById("upload-file").files[0];
    if (!file) { result.textContent = say("choose"); return; }
    var kind = document.getElementById("upload-kind").value;
    var request = new XMLHttpRequest();
    request.open("POST", "/data/upload?kind=" + encodeURIComponent(kind));
    request.setRequestHeader("X-CSRF-Token", form.dataset.csrf);
    request.setRequestHeader("Content-Type", kind === "csv" ? "text/csv" : kind === "apple-health-zip" ? "application/zip" : "application/xml");
    progress.hidden = false;
    progress.value = 0;
    button.disabled = true;
    result.textContent = say("uploading", { name: file.name });
    request.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        progress.value = Math.round((e.loaded / e.total) * 100);
        progress.textContent = progress.value + " %";
      }
    });
    request.upload.addEventListener("load", function () {
      progress.value = 100;
      result.textContent = say("storing");
    });
    request.addEventListener("load", function () {
      button.disabled = false;
      var body = {};
      var type = request.getResponseHeader("Content-Type") || "";
      if (type.indexOf("json") >= 0) {
        try { body = JSON.parse(request.responseText); } catch (e) { /* unreadable: use the status below */ }
      }
      if (request.status === 202 && body.location) {
        // A large Apple Health export is imported in the background: its page shows the progress.
        result.textContent = say("background");
        window.location.assign(body.location);
        return;
      }
      if (request.status === 200 && typeof body.stored === "number") {
        var skipped = (body.skipped || []).reduce(function (sum, s) { return sum + s.count; }, 0);
        var invalid = body.invalid || { count: 0, examples: [] };
        var text = samples(body.stored) +
          (body.alreadyThere ? "; " + say("already", { count: body.alreadyThere }) : "") +
          (body.repeatedInFile ? "; " + say("repeated", { count: body.repeatedInFile }) : "") +
          (skipped ? "; " + say("skipped-kinds", { count: skipped }) : "") +
          (invalid.count ? "; " + say("invalid", { count: invalid.count }) + " (" + invalid.examples.map(function (e) {
            return say("line", { line: e.line }) + ": " + e.reason;
          }).join("; ") + ")" : "") +
          ". " + say("reload");
        result.textContent = text;
        result.className = "ok";
      } else if (request.status === 200 && typeof body.accepted === "number") {
        result.textContent = samples(body.accepted) +
          (body.duplicates ? " (" + say("duplicates", { count: body.duplicates }) + ")" : "") +
          (body.skipped ? "; " + say("skipped", { count: body.skipped }) : "") +
          ". " + say("reload");
        result.className = "ok";
      } else {
        var detail = request.status === 401 ? say("session-ended")
          : body.detail || say("failed", { status: request.status });
        if (body.errors && body.errors.length) {
          detail += " " + body.errors.slice(0, 5).map(function (e) { return e.field + ": " + e.message; }).join("; ");
        }
        result.textContent = detail;
        result.className = "field-error";
      }
    });
    request.addEventListener("error", function () {
      button.disabled = false;
      result.textContent = say("connection");
      result.className = "field-error";
    });
    request.send(file);
  });
});

// A live run's page: each `positions` event (server-sent, /v1/runs/{id}/live/events) moves the runners'
// markers, adds those who appear and removes those who are no longer shown (a runner who stopped sharing
// disappears at once). Markers are placed with the projection the server drew the path with.
document.addEventListener("DOMContentLoaded", function () {
  var figure = document.getElementById("run-figure");
  var map = document.getElementById("run-map");
  if (!figure || !map || !figure.dataset.feed || typeof EventSource === "undefined") return;
  var svg = "http://www.w3.org/2000/svg";
  var layer = document.getElementById("runners");
  var count = document.getElementById("live-count");
  var p = {
    north: parseFloat(map.dataset.north), west: parseFloat(map.dataset.west),
    kx: parseFloat(map.dataset.kx), ky: parseFloat(map.dataset.ky), padding: parseFloat(map.dataset.padding)
  };
  function place(marker, runner) {
    var x = (runner.longitude - p.west) * p.kx + p.padding;
    var y = (p.north - runner.latitude) * p.ky + p.padding;
    marker.setAttribute("transform", "translate(" + x.toFixed(1) + " " + y.toFixed(1) + ")");
    marker.classList.toggle("finished", !!runner.finished);
  }
  function marker(runner) {
    var group = document.createElementNS(svg, "g");
    group.setAttribute("class", "runner");
    group.dataset.bib = String(runner.bib);
    var dot = document.createElementNS(svg, "circle");
    dot.setAttribute("r", "6");
    var label = document.createElementNS(svg, "text");
    label.setAttribute("x", "9");
    label.setAttribute("y", "4");
    label.textContent = runner.name;  // text, never markup
    group.appendChild(dot);
    group.appendChild(label);
    layer.appendChild(group);
    return group;
  }
  var source = new EventSource(figure.dataset.feed);
  source.addEventListener("positions", function (event) {
    var live = JSON.parse(event.data);
    var seen = {};
    live.runners.forEach(function (runner) {
      seen[runner.bib] = true;
      var existing = layer.querySelector('g.runner[data-bib="' + runner.bib + '"]');
      place(existing || marker(runner), runner);
    });
    Array.prototype.slice.call(layer.querySelectorAll("g.runner")).forEach(function (group) {
      if (!seen[group.dataset.bib]) layer.removeChild(group);
    });
    if (count) count.textContent = String(live.runners.length);
    var state = document.getElementById("run-state");
    state.textContent = state.getAttribute("data-say-" + live.state) || live.state;
    if (live.state !== "live") source.close();
  });
});
