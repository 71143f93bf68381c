/* Live regions: every element with data-live-url is refreshed by polling that URL, which answers
   304 (nothing changed: the ETag still matches) or 200 with the region's new HTML and ETag.
   Fast (every 3 s) while the tab is visible and somebody used it in the last minute; slow (every
   60 s) when it is hidden or idle. Without JavaScript the page is simply static. */
(function () {
  "use strict";
  var FAST = 3000;
  var SLOW = 60000;
  var IDLE_AFTER = 60000;
  var lastActivity = Date.now();
  var regions = [];

  function active() {
    return document.visibilityState === "visible" && Date.now() - lastActivity < IDLE_AFTER;
  }

  function Region(element) {
    this.element = element;
    this.url = element.getAttribute("data-live-url");
    this.etag = element.getAttribute("data-live-etag") || null;
    this.timer = null;
    this.slow = false;
    this.busy = false;
  }

  Region.prototype.schedule = function (delay) {
    clearTimeout(this.timer);
    var wait = delay === undefined ? (active() ? FAST : SLOW) : delay;
    this.slow = wait >= SLOW;
    this.timer = setTimeout(this.poll.bind(this), wait);
  };

  Region.prototype.poll = function () {
    var region = this;
    if (region.busy) return;
    region.busy = true;
    var headers = { "X-Requested-With": "live" };
    if (region.etag) headers["If-None-Match"] = region.etag;
    fetch(region.url, { headers: headers, cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (response.status === 200) {
          region.etag = response.headers.get("ETag");
          return response.text().then(function (html) {
            region.element.innerHTML = html;
            region.element.dispatchEvent(new CustomEvent("live:updated", { bubbles: true }));
          });
        }
        return null; /* 304: unchanged; any error: try again later */
      })
      .catch(function () {})
      .then(function () {
        region.busy = false;
        region.schedule();
      });
  };

  function wake() {
    var wasIdle = !active();
    lastActivity = Date.now();
    if (wasIdle || document.visibilityState === "visible") {
      regions.forEach(function (region) {
        if (region.slow && !region.busy) region.schedule(0);
      });
    }
  }

  ["pointermove", "keydown", "scroll", "touchstart", "click"].forEach(function (name) {
    window.addEventListener(name, wake, { passive: true });
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") wake();
  });

  function start() {
    var elements = document.querySelectorAll("[data-live-url]");
    for (var i = 0; i < elements.length; i++) {
      var region = new Region(elements[i]);
      regions.push(region);
      region.schedule();
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
