/* Live regions: every element with data-live-url is refreshed by polling that URL, which answers
   304 (nothing changed: the ETag still matches) or 200 with the region's new HTML and ETag.
   Fast (every 3 s) while the tab is visible and somebody used it in the last minute; slow (every
   60 s) when it is hidden or idle. In display mode (html.display, a board on a projector) every
   2 s, always: nobody touches a projector. Rows that moved in an update (their rank or score
   changed, or they are new) get the class "moved" for a moment (the CSS makes it glow, or a
   steady mark under prefers-reduced-motion). Without JavaScript the page is simply static. */
(function () {
  "use strict";
  var FAST = 3000;
  var SLOW = 60000;
  var DISPLAY = 2000;
  var IDLE_AFTER = 60000;
  var MOVED_FOR = 4000;
  var lastActivity = Date.now();
  var regions = [];

  function displayMode() {
    return document.documentElement.classList.contains("display");
  }

  function active() {
    return document.visibilityState === "visible" && Date.now() - lastActivity < IDLE_AFTER;
  }

  function interval() {
    if (displayMode()) return DISPLAY;
    return active() ? FAST : SLOW;
  }

  /* What each keyed row shows: "rank|score", by its data-key. */
  function snapshot(element) {
    var seen = {};
    var rows = element.querySelectorAll("tr[data-key]");
    for (var i = 0; i < rows.length; i++) {
      seen[rows[i].getAttribute("data-key")] =
        rows[i].getAttribute("data-rank") + "|" + rows[i].getAttribute("data-score");
    }
    return seen;
  }

  function markMoved(element, before) {
    var rows = element.querySelectorAll("tr[data-key]");
    var moved = [];
    for (var i = 0; i < rows.length; i++) {
      var key = rows[i].getAttribute("data-key");
      var now = rows[i].getAttribute("data-rank") + "|" + rows[i].getAttribute("data-score");
      if (before[key] !== now) moved.push(rows[i]);
    }
    moved.forEach(function (row) { row.classList.add("moved"); });
    setTimeout(function () {
      moved.forEach(function (row) { row.classList.remove("moved"); });
    }, MOVED_FOR);
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
    var wait = delay === undefined ? interval() : delay;
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
            var before = snapshot(region.element);
            region.element.innerHTML = html;
            markMoved(region.element, before);
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
