// Data4Help console: the only script. It uploads a file from "My data" with a progress bar; every other
// page works without JavaScript. Served from /console.js (the Content-Security-Policy forbids inline code).
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("upload-form");
  if (!form) return;
  var progress = document.getElementById("upload-progress");
  var result = document.getElementById("upload-result");
  var button = document.getElementById("upload-submit");

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = document.getElementById("upload-file").files[0];
    if (!file) { result.textContent = "Choose a file first."; return; }
    var kind = document.getElementById("upload-kind").value;
    var request = new XMLHttpRequest();
    request.open("POST", "/data/upload?kind=" + encodeURIComponent(kind));
    request.setRequestHeader("X-CSRF-Token", form.dataset.csrf);
    request.setRequestHeader("Content-Type", kind === "csv" ? "text/csv" : kind === "apple-health-zip" ? "application/zip" : "application/xml");
    progress.hidden = false;
    progress.value = 0;
    button.disabled = true;
    result.textContent = "Uploading " + file.name + "…";
    request.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        progress.value = Math.round((e.loaded / e.total) * 100);
        progress.textContent = progress.value + " %";
      }
    });
    request.upload.addEventListener("load", function () {
      progress.value = 100;
      result.textContent = "Uploaded; storing your data…";
    });
    request.addEventListener("load", function () {
      button.disabled = false;
      var body = {};
      var type = request.getResponseHeader("Content-Type") || "";
      if (type.indexOf("json") >= 0) {
        try { body = JSON.parse(request.responseText); } catch (e) { /* unreadable: use the status below */ }
      }
      if (request.status === 200 && typeof body.accepted === "number") {
        result.textContent = "Stored " + body.accepted + " new sample" + (body.accepted === 1 ? "" : "s") +
          (body.duplicates ? " (" + body.duplicates + " you had already uploaded)" : "") +
          (body.skipped ? "; " + body.skipped + " records were skipped (kinds Data4Help does not keep, or values out of range)" : "") +
          ". Reload the page to see them in the charts.";
        result.className = "ok";
      } else {
        var detail = request.status === 401 ? "Your session has ended: sign in again, then upload the file once more."
          : body.detail || ("The upload failed (HTTP " + request.status + ").");
        if (body.errors && body.errors.length) {
          detail += " " + body.errors.slice(0, 5).map(function (e) { return e.field + ": " + e.message; }).join("; ");
        }
        result.textContent = detail;
        result.className = "field-error";
      }
    });
    request.addEventListener("error", function () {
      button.disabled = false;
      result.textContent = "The connection failed; nothing was stored. Try again.";
      result.className = "field-error";
    });
    request.send(file);
  });
});
