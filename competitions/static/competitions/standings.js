// Keep the standings fresh by polling their fragment: every 10 s while the tab is visible, every
// 60 s while it is hidden. The server answers 304 (ETag) when nothing changed.
(function () {
  "use strict";
  var box = document.getElementById("standings");
  if (!box || !box.dataset.pollUrl) return;
  var etag = null;
  var timer = null;

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(poll, document.hidden ? 60000 : 10000);
  }

  function poll() {
    var headers = etag ? { "If-None-Match": etag } : {};
    fetch(box.dataset.pollUrl, { headers: headers, credentials: "same-origin" })
      .then(function (response) {
        if (response.status !== 200) return null;
        etag = response.headers.get("ETag");
        return response.text();
      })
      .then(function (html) {
        if (html !== null) box.innerHTML = html;
      })
      .catch(function () {})
      .then(schedule);
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) poll();
  });
  schedule();
})();
