// The reviewer's desk: keyboard shortcuts. Served from the package (no CDN); the page's
// Content-Security-Policy runs this file and nothing else.
(function () {
  "use strict";
  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "INPUT" && t.type === "text" || t.tagName === "TEXTAREA" || t.isContentEditable);
  }
  function submit(id) {
    var form = document.getElementById(id);
    if (form) { form.requestSubmit ? form.requestSubmit() : form.submit(); }
  }
  function init() {
    var page = document.body.getAttribute("data-page");
    if (page === "index") {
      document.addEventListener("keydown", function (e) {
        if (e.key === "Enter" && !typing(e) && !e.ctrlKey && !e.metaKey && !e.altKey) {
          e.preventDefault();
          var next = document.getElementById("next");
          if (next) { next.form.requestSubmit ? next.form.requestSubmit() : next.form.submit(); }
        }
      });
      return;
    }
    if (page !== "item") { return; }
    var questions = Array.prototype.slice.call(document.querySelectorAll("fieldset.question:not([disabled])"));
    if (!questions.length) { return; }
    var current = 0;
    function focus(i) {
      current = Math.max(0, Math.min(questions.length - 1, i));
      questions.forEach(function (q, j) { q.classList.toggle("current", j === current); });
      questions[current].scrollIntoView({block: "nearest"});
    }
    function pick(value) {
      var q = questions[current];
      var input = q.querySelector('input[type="radio"][value="' + CSS.escape(value) + '"]');
      if (!input) { return false; }
      input.checked = true;
      if (current < questions.length - 1) { focus(current + 1); }
      return true;
    }
    questions.forEach(function (q, j) {
      q.addEventListener("click", function () { focus(j); });
    });
    focus(0);
    document.addEventListener("keydown", function (e) {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) { return; }
      var q = questions[current];
      var kind = q.getAttribute("data-kind");
      var k = e.key;
      var done = false;
      if (k === "j" || k === "ArrowDown") { focus(current + 1); done = true; }
      else if (k === "k" || k === "ArrowUp") { focus(current - 1); done = true; }
      else if (k === "Enter") { submit("labels"); done = true; }
      else if (k === "s") { submit("skip-form"); done = true; }
      else if (k === "r") { submit("release-form"); done = true; }
      else if (kind === "noul" && (k === "y" || k === "n")) { done = pick(k === "y" ? "true" : "false"); }
      else if (kind === "score" && /^[0-9]$/.test(k)) { done = pick(k); }
      else if (kind === "choice" && /^[1-9]$/.test(k)) {
        var label = q.querySelector('label.option[data-key="' + k + '"] input');
        if (label) { done = pick(label.value); }
      }
      if (done) { e.preventDefault(); }
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
