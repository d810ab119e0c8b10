// privnoise console: a little progressive enhancement; every page works without it.
"use strict";
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", function () {
  // A chooser (dataset, query kind) reloads its form when it changes: no "Choose" button to press.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // Copy a new key to the clipboard.
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field) { return; }
      field.select();
      if (navigator.clipboard) {
        navigator.clipboard.writeText(field.value).then(function () { button.textContent = "Copied"; });
      }
    });
  });
});
