// microagg book: accessibility glue for the explorers (microagg.views.explorer, static form).
// The widget manager draws the explorers after the page has loaded, switching frames with its
// own code; this script only adds what its markup lacks, once each explorer exists:
//  * each control (a slider's handle, a dropdown's <select>) is named by the visible label
//    beside it (aria-labelledby): the manager renders the two unconnected;
//  * the box holding the shown frame's text becomes a polite live region, so a screen reader
//    reads the new numbers when a control changes the frame;
//  * a slider says its value, not its position: the manager sets aria-valuenow to the index
//    of the value (k = 3 read as "1"), so aria-valuetext repeats the readout beside it; the
//    readout itself is made read-only and left out of the Tab order and the accessibility
//    tree (the manager makes it an unnamed editable box that ignores what is typed).
// Theme controls:
//  * a solution's toggle button is named by its visible hint and its title ("Click to show:
//    Solution to Exercise 2.1 (...)"), not "Toggle hidden content" (WCAG 2.5.3);
//  * the colour-mode button keeps the focus when pressed and says which mode is on.
// And for every page: a box that scrolls sideways (a wide table, code block or equation at a
// phone's width) can be reached with Tab, so keyboard users can scroll it (the theme does this
// for some boxes, not for all), even one holding links: tabbing through them scrolls only as
// far as the last link. It is named ("Table (scrolls sideways)", or its caption), as a
// region unless it is a table itself.
(function () {
  "use strict";
  var count = 0;
  function mark() {
    document.querySelectorAll(".ma-control").forEach(function (row) {
      var label = row.querySelector(".ma-label");
      var control = row.querySelector(".noUi-handle, select");
      if (!label || !control) return;
      if (!label.id) label.id = "ma-label-" + (++count);
      set(control, "aria-labelledby", label.id);
      var readout = row.querySelector(".widget-readout");
      if (!readout) return;  // (a dropdown says its value itself)
      set(control, "aria-valuetext", readout.textContent.trim());
      set(readout, "contenteditable", "false");
      set(readout, "tabindex", "-1");
      set(readout, "aria-hidden", "true");
    });
    document.querySelectorAll(".ma-live:not([aria-live])").forEach(function (box) {
      box.setAttribute("role", "status");
      box.setAttribute("aria-live", "polite");
      box.setAttribute("aria-atomic", "true");
    });
    document.querySelectorAll(".admonition-title > button.toggle-button").forEach(function (b) {
      var title = Array.prototype.filter.call(b.parentNode.childNodes, function (node) {
        return node !== b;
      }).map(function (node) { return node.textContent; }).join("").replace(/\s+/g, " ").trim();
      var hint = (b.getAttribute("data-toggle-hint") || "").trim();
      set(b, "aria-label", hint ? hint + ": " + title : title);
    });
    var mode = document.documentElement.getAttribute("data-mode");
    document.querySelectorAll(".theme-switch-button").forEach(function (b) {
      if (mode) set(b, "aria-label", "Color mode: " + (mode === "auto" ? "auto (as the system)"
                                                                     : mode));
    });
  }
  // (an attribute set only when it differs: the observer below sees every change)
  function set(el, name, value) {
    if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  }
  // The theme's colour-mode button drops the focus to <body> when pressed from the keyboard:
  // give it back, so that pressing again cycles on.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".theme-switch-button");
    if (!button) return;
    setTimeout(function () {
      if (document.activeElement === document.body || !document.activeElement) button.focus();
    }, 0);
  });
  function scrollers() {
    document.querySelectorAll("article *").forEach(function (el) {
      var style = getComputedStyle(el);
      var scrolls = (style.overflowX === "auto" || style.overflowX === "scroll")
        && el.scrollWidth > el.clientWidth + 1;
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.classList.add("ma-scroll-tab");
        name(el);
      } else if (!scrolls && el.classList.contains("ma-scroll-tab")) {
        el.removeAttribute("tabindex");
        el.classList.remove("ma-scroll-tab");
        if (el.hasAttribute("data-ma-named")) {
          el.removeAttribute("aria-label");
          if (el.getAttribute("data-ma-named") === "region") el.removeAttribute("role");
          el.removeAttribute("data-ma-named");
        }
      }
    });
  }
  // (an equation keeps what MathJax says of it; a table is named by its caption if it has one)
  function name(el) {
    var tag = el.tagName.toLowerCase();
    if (tag.indexOf("mjx-") === 0 || el.hasAttribute("aria-label")
        || el.hasAttribute("aria-labelledby")) return;
    var table = tag === "table" ? el : el.querySelector("table");
    var caption = table && table.querySelector("caption");
    if (tag === "table" && caption) return;
    var what = caption ? caption.textContent.replace(/\s+/g, " ").trim()
      : table ? "Table" : (tag === "pre" || el.querySelector("pre")) ? "Code" : "Content";
    el.setAttribute("aria-label", what + " (scrolls sideways)");
    if (tag !== "table" && !el.hasAttribute("role")) {
      el.setAttribute("role", "region");
      el.setAttribute("data-ma-named", "region");
    } else {
      el.setAttribute("data-ma-named", "label");
    }
  }
  var pending = null;
  function later() {
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () { pending = null; scrollers(); }, 150);
  }
  // (classes such as ma-control may be added after a widget is attached: watch them too)
  new MutationObserver(function () { mark(); later(); })
    .observe(document.documentElement, {childList: true, subtree: true, attributes: true,
                                        characterData: true,
                                        attributeFilter: ["class", "contenteditable",
                                                          "data-toggle-hint", "data-mode",
                                                          "aria-valuetext"]});
  window.addEventListener("resize", later);
  window.addEventListener("load", function () {
    // fonts and MathJax change widths after load without touching the DOM's structure
    later();
    [600, 1500, 3000].forEach(function (ms) { setTimeout(function () { mark(); scrollers(); }, ms); });
    if (document.fonts) document.fonts.ready.then(later);
  });
})();
