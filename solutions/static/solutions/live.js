/* Live regions: every element with data-live-url is refreshed by polling that URL, which answers
   304 (nothing changed: the ETag still matches) or 200 with the region's new HTML and ETag.
   Every 3 s while the tab is visible, whether or not anybody touches it (a scoreboard on a wall
   is never touched); every 60 s while it is hidden (Page Visibility API), and at once when it
   is shown again. In display mode (html.display, a board on a projector) every 2 s. Rows whose
   score changed in an update, or that came onto the page by a solve (an arrival from below), get
   the class "moved" for a moment (the CSS makes it glow, or a steady mark under prefers-reduced-motion);
   rows that only changed place show their old rank in the rank cell instead (see changedRows).
   Without JavaScript the page is simply static. */
(function () {
  "use strict";
  var FAST = 3000;
  var SLOW = 60000;
  var DISPLAY = 2000;
  var MOVED_FOR = 4000;
  var regions = [];

  function displayMode() {
    return document.documentElement.classList.contains("display");
  }

  function visible() {
    return document.visibilityState === "visible";
  }

  function interval() {
    if (displayMode()) return DISPLAY;
    return visible() ? FAST : SLOW;
  }

  /* What each keyed row shows, by its data-key: its rank and score. */
  function snapshot(element) {
    var seen = {};
    var rows = element.querySelectorAll("tr[data-key]");
    for (var i = 0; i < rows.length; i++) {
      seen[rows[i].getAttribute("data-key")] = {
        rank: rows[i].getAttribute("data-rank"),
        score: rows[i].getAttribute("data-score")
      };
    }
    return seen;
  }

  /* Which rows an update changed. A row glows ("moved") when its own score changed: that is who
     solved. A row new to the page glows when it arrived by a solve: when no row left the page
     (it is new on the board), or when it now stands above a row that stayed on the page (it
     overtook somebody, from below: rank 98 to 1) unless it may have been pushed in from the
     page before (on a later page, above every row that stayed). A row that only changed place
     says so in its rank cell (data-was, "was 3", which the CSS shows instead of the row's
     since-yesterday arrow: one marker a row), without a glow. */
  function changedRows(element, before) {
    var rows = element.querySelectorAll("tr[data-key]");
    var firstPage = element.querySelector("table[data-first-page]") !== null;
    var firstKept = -1;
    var lastKept = -1;
    for (var i = 0; i < rows.length; i++) {
      if (!before[rows[i].getAttribute("data-key")]) continue;
      if (firstKept < 0) firstKept = i;
      lastKept = i;
    }
    var kept = 0;
    for (var k = 0; k < rows.length; k++) if (before[rows[k].getAttribute("data-key")]) kept++;
    var someLeft = kept < Object.keys(before).length;
    var marks = [];
    for (var j = 0; j < rows.length; j++) {
      var row = rows[j];
      var old = before[row.getAttribute("data-key")];
      var cell = row.querySelector("td.rank");
      var arrived = !old && (!someLeft || (j < lastKept && (firstPage || j > firstKept)));
      if (old ? old.score !== row.getAttribute("data-score") : arrived) {
        marks.push({ element: row, className: "moved" });
      } else if (old && old.rank !== row.getAttribute("data-rank") && cell) {
        marks.push({ element: cell, attribute: "data-was", value: old.rank });
      }
    }
    return marks;
  }

  function markChanged(element, before) {
    var marks = changedRows(element, before);
    marks.forEach(function (mark) {
      if (mark.className) mark.element.classList.add(mark.className);
      if (mark.attribute) mark.element.setAttribute(mark.attribute, mark.value);
    });
    setTimeout(function () {
      marks.forEach(function (mark) {
        if (mark.className) mark.element.classList.remove(mark.className);
        if (mark.attribute) mark.element.removeAttribute(mark.attribute);
      });
    }, MOVED_FOR);
  }

  /* Boxes that scroll sideways (the standings on a phone) keep their place across an update. */
  function scrollPlaces(element) {
    var boxes = element.querySelectorAll("[data-scroll-cue]");
    return Array.prototype.map.call(boxes, function (box) { return box.scrollLeft; });
  }

  function restoreScrollPlaces(element, places) {
    var boxes = element.querySelectorAll("[data-scroll-cue]");
    for (var i = 0; i < boxes.length && i < places.length; i++) boxes[i].scrollLeft = places[i];
  }

  function Region(element) {
    this.element = element;
    this.url = element.getAttribute("data-live-url");
    this.etag = element.getAttribute("data-live-etag") || null;
    this.timer = null;
    this.busy = false;
  }

  Region.prototype.schedule = function (delay) {
    clearTimeout(this.timer);
    var wait = delay === undefined ? interval() : delay;
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
            var places = scrollPlaces(region.element);
            region.element.innerHTML = html;
            restoreScrollPlaces(region.element, places);
            markChanged(region.element, before);
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

  /* Shown again: poll at once rather than at the end of a slow wait. */
  function shown() {
    if (!visible()) return;
    regions.forEach(function (region) {
      if (!region.busy) region.schedule(0);
    });
  }

  document.addEventListener("visibilitychange", shown);

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
