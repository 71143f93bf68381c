/* Small enhancements of the site's own pages (the CSP allows no inline script). Each works on
   markup the server rendered; without JavaScript the pages work the same, less the polish. */
(function () {
  "use strict";

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

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", flagSelects);
  } else {
    flagSelects();
  }
})();
