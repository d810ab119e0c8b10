// privnoise console: a little progressive enhancement; every page works without it.
"use strict";
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", function () {
  // A chooser (dataset, query kind) reloads its form when it changes: no "Choose" button to press.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // The Ask button a dry run disabled is for the query it checked: once the query changes, it may be asked
  // again (the server still refuses what the budget cannot pay). A querier with no budget at all stays disabled.
  document.querySelectorAll("form[data-compose]").forEach(function (form) {
    var changed = function () {
      var ask = form.querySelector("button[data-ask]");
      if (!ask || !ask.disabled || ask.hasAttribute("data-exhausted")) { return; }
      ask.disabled = false;
      ask.removeAttribute("aria-describedby");
      var why = form.querySelector("[data-ask-why]");
      if (why) { why.textContent = "The query changed: check its cost again before asking."; why.className = "muted"; }
      var preview = form.querySelector("[data-preview]");
      if (preview) { preview.setAttribute("data-stale", ""); }
    };
    form.addEventListener("change", changed);
    form.addEventListener("input", changed);
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
