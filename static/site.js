/* Small enhancements of the site's own pages (the CSP allows no inline script). Each works on
   markup the server rendered; without JavaScript the pages work the same, less the polish. */
(function () {
  "use strict";

  var NARROW = "(max-width: 40rem)"; /* the phone layout of static/site.css */

  /* A country select shows the chosen country's flag beside it (see solutions.forms.FlagSelect). */
  function flagSelects() {
    var selects = document.querySelectorAll("select[data-flag-select]");
    Array.prototype.forEach.call(selects, function (select) {
      var flag = select.parentNode.querySelector("img.flag");
      if (!flag) return;
      select.addEventListener("change", function () {
        var code = (select.value || "__").toLowerCase();
        flag.src = flag.getAttribute("data-flag-pattern").replace("{code}", code);
      });
    });
  }

  /* Times: the server writes UTC ({% time %} in solutions/templatetags/times.py); show them in
     the viewer's own time zone, named. The title keeps the UTC time. */
  var LOCAL_STYLES = {
    datetime: { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" },
    date: { day: "numeric", month: "short", year: "numeric" },
    time: { hour: "2-digit", minute: "2-digit" },
    seconds: { hour: "2-digit", minute: "2-digit", second: "2-digit" }
  };

  function localTimes(root) {
    var times = root.querySelectorAll("time[data-local]");
    Array.prototype.forEach.call(times, function (element) {
      var moment = new Date(element.getAttribute("datetime"));
      var style = LOCAL_STYLES[element.getAttribute("data-local")];
      if (isNaN(moment.getTime()) || !style) return;
      var options = { hourCycle: "h23" };
      for (var name in style) options[name] = style[name];
      if (style.hour) options.timeZoneName = "short";
      element.textContent = new Intl.DateTimeFormat(undefined, options).format(moment);
    });
  }

  /* Clocks ({% clock start end %}): tick every second in the format the server wrote,
     "1:05:09" or "2 days 3:04:05", measured against the server's clock (data-now). Once the
     competition starts or ends under the viewer's eyes, the clock offers a reload (the page
     shows the problems, or stops taking answers, only when it is asked again). */
  function durationText(ms) {
    var seconds = Math.max(Math.floor(ms / 1000), 0);
    var days = Math.floor(seconds / 86400);
    var hours = Math.floor((seconds % 86400) / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var rest = seconds % 60;
    var clock = hours + ":" + (minutes < 10 ? "0" : "") + minutes + ":" + (rest < 10 ? "0" : "") + rest;
    return days ? days + (days === 1 ? " day " : " days ") + clock : clock;
  }

  function span(className, text) {
    var element = document.createElement("span");
    element.className = className;
    element.textContent = text;
    return element;
  }

  function duration(className, ms) {
    var element = document.createElement("time");
    if (className) element.className = className;
    element.setAttribute("datetime", "PT" + Math.max(Math.floor(ms / 1000), 0) + "S");
    element.textContent = durationText(ms);
    return element;
  }

  function reloadLink() {
    var link = document.createElement("a");
    link.href = window.location.href;
    link.textContent = "Reload the page";
    return link;
  }

  /* The state of a clock at `now`, and the spans its <time> elements show, in order. */
  function clockState(start, end, now) {
    if (now < start) return { name: "upcoming", spans: [start - now] };
    if (now < end) return { name: "running", spans: [end - now, now - start] };
    return { name: "ended", spans: [] };
  }

  function clockChildren(state) {
    if (state.name === "upcoming") {
      return [span("clock-label", "Starts in"), " ", duration("clock-left", state.spans[0])];
    }
    if (state.name === "running") {
      var elapsed = span("clock-elapsed", "· elapsed ");
      elapsed.appendChild(duration("", state.spans[1]));
      return [span("clock-label", "Time left"), " ", duration("clock-left", state.spans[0]), " ", elapsed];
    }
    return [span("clock-label", "Ended")];
  }

  /* Each tick rewrites only the times; the clock is rebuilt when its state changes, so a focused
     reload link stays focused. */
  function clockTick(item) {
    var state = clockState(item.start, item.end, Date.now() + item.skew);
    if (state.name !== item.state) {
      var children = clockChildren(state);
      if (state.name !== item.served) children.push(" · ", reloadLink());
      item.element.className = "clock " + state.name;
      item.element.replaceChildren.apply(item.element, children);
      item.state = state.name;
      return;
    }
    var times = item.element.querySelectorAll("time");
    state.spans.forEach(function (ms, index) {
      times[index].setAttribute("datetime", "PT" + Math.max(Math.floor(ms / 1000), 0) + "S");
      times[index].textContent = durationText(ms);
    });
  }

  function clocks() {
    var elements = document.querySelectorAll("[data-clock]");
    if (!elements.length) return;
    var items = Array.prototype.map.call(elements, function (element) {
      var served = ["upcoming", "running", "ended"].filter(function (name) {
        return element.classList.contains(name);
      })[0];
      return {
        element: element,
        served: served,
        state: served,
        start: Date.parse(element.getAttribute("data-start")),
        end: Date.parse(element.getAttribute("data-end")),
        skew: Date.parse(element.getAttribute("data-now")) - Date.now()
      };
    });
    function tick() {
      items.forEach(clockTick);
      setTimeout(tick, 1000 - (Date.now() % 1000));
    }
    tick();
  }

  /* The board's filters fold into one "Filters" control on a phone, open on a wide screen. */
  function foldFilters() {
    var details = document.querySelectorAll("details[data-fold-narrow]");
    if (!details.length || !window.matchMedia) return;
    var narrow = window.matchMedia(NARROW);
    function apply() {
      Array.prototype.forEach.call(details, function (element) { element.open = !narrow.matches; });
    }
    apply();
    narrow.addEventListener("change", apply);
  }

  /* Tables that scroll sideways: their hint shows only when the table does not fit. */
  function scrollCue(box) {
    var overflow = box.scrollWidth - box.clientWidth;
    var hint = box.previousElementSibling;
    if (hint && hint.classList.contains("scroll-hint")) {
      hint.classList.toggle("needed", overflow > 1);
      hint.classList.toggle("fits", overflow <= 1);
    }
  }

  function scrollCues(root) {
    Array.prototype.forEach.call(root.querySelectorAll("[data-scroll-cue]"), scrollCue);
  }

  window.addEventListener("resize", function () { scrollCues(document); });

  /* A "Copy" button (data-copy="<id of a text field>") copies the field's text and says so;
     where the clipboard is refused, the text is selected for the reader to copy. */
  function copyButtons() {
    Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
      button.addEventListener("click", function () {
        var field = document.getElementById(button.getAttribute("data-copy"));
        if (!field) return;
        field.select();
        var said = function () { button.textContent = "Copied"; };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(field.value).then(said, function () {});
        }
      });
    });
  }

  function start() {
    flagSelects();
    copyButtons();
    localTimes(document);
    clocks();
    foldFilters();
    scrollCues(document);
  }

  /* Live regions (solutions/static/solutions/live.js) replace their HTML: enhance the new one. */
  document.addEventListener("live:updated", function (event) {
    localTimes(event.target);
    scrollCues(event.target);
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
