/* Suggestions as you type in a board's search: an input with data-suggest-url (the API's
   GET /api/v1/programmers) asks it for the handles starting with what is typed and fills the
   input's <datalist> with them, each labelled with its rank and score on the board day the page
   shows (the form's hidden date, country and org). Picking one submits the form, which shows
   that programmer with their neighbours. Without JavaScript the form submits ?q= as typed, and
   the page lists the matches itself. */
(function () {
  "use strict";
  var WAIT = 150; /* ms after the last key press: one request per pause, not per letter */
  var HANDLE_START = /^[A-Za-z0-9_-]{1,32}$/; /* solutions.rules: what a handle may hold */

  function label(entry) {
    if (entry.rank === null) return "not on this board";
    return "rank " + entry.rank + " · score " + entry.score;
  }

  function fill(list, answer) {
    var options = answer.entries.map(function (entry) {
      var option = document.createElement("option");
      option.value = entry.handle;
      option.label = label(entry);
      return option;
    });
    list.replaceChildren.apply(list, options);
  }

  function suggest(input) {
    var list = document.getElementById(input.getAttribute("list"));
    var form = input.form;
    var timer = null;
    var pending = null;
    var answers = {}; /* by URL: typing back over a prefix asks nothing again */

    function url(prefix) {
      var params = new URLSearchParams({ prefix: prefix, board: input.getAttribute("data-board") });
      ["date", "country", "org"].forEach(function (name) {
        var field = form && form.elements.namedItem(name);
        if (field && field.value) params.set(name, field.value);
      });
      return input.getAttribute("data-suggest-url") + "?" + params.toString();
    }

    function ask() {
      var prefix = input.value.trim();
      if (!HANDLE_START.test(prefix)) {
        list.replaceChildren();
        return;
      }
      var address = url(prefix);
      if (answers[address]) {
        fill(list, answers[address]);
        return;
      }
      if (pending) pending.abort();
      pending = new AbortController();
      fetch(address, { signal: pending.signal, headers: { Accept: "application/json" } })
        .then(function (response) {
          return response.ok ? response.json() : null;
        })
        .then(function (answer) {
          if (!answer) return;
          answers[address] = answer;
          if (input.value.trim() === prefix) fill(list, answer);
        })
        .catch(function () {
          /* aborted by a newer key press, or offline: the form still works */
        });
    }

    input.addEventListener("input", function (event) {
      /* A suggestion picked from the list: show that programmer. */
      if (event.inputType === "insertReplacementText" || event.inputType === undefined) {
        var picked = Array.prototype.some.call(list.options, function (option) {
          return option.value === input.value;
        });
        if (picked && form) {
          form.requestSubmit ? form.requestSubmit() : form.submit();
          return;
        }
      }
      clearTimeout(timer);
      timer = setTimeout(ask, WAIT);
    });
  }

  /* The organization picker: the board day's leading organizations (the API's groups ranked),
     asked once, when the picker is first used, so a page that nobody filters reads none. */
  function organizations(input) {
    var list = document.getElementById(input.getAttribute("list"));
    input.addEventListener(
      "focus",
      function () {
        fetch(input.getAttribute("data-groups-url"), { headers: { Accept: "application/json" } })
          .then(function (response) {
            return response.ok ? response.json() : null;
          })
          .then(function (answer) {
            if (!answer) return;
            list.replaceChildren.apply(
              list,
              answer.entries.map(function (group) {
                var option = document.createElement("option");
                option.value = group.group;
                return option;
              })
            );
          })
          .catch(function () {
            /* offline: the picker takes any name typed */
          });
      },
      { once: true }
    );
  }

  function start() {
    var inputs = document.querySelectorAll("input[data-suggest-url][list]");
    Array.prototype.forEach.call(inputs, suggest);
    var pickers = document.querySelectorAll("input[data-groups-url][list]");
    Array.prototype.forEach.call(pickers, organizations);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
