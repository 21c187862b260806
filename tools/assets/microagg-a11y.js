// microagg book: accessibility glue for the explorers (microagg.views.explorer, static form).
// The widget manager draws the explorers after the page has loaded, switching frames with its
// own code; this script only adds what its markup lacks, once each explorer exists:
//  * each control (a slider's handle, a dropdown's <select>) is named by the visible label
//    beside it (aria-labelledby): the manager renders the two unconnected;
//  * the box holding the shown frame's text becomes a polite live region, so a screen reader
//    reads the new numbers when a control changes the frame.
(function () {
  "use strict";
  var count = 0;
  function mark() {
    document.querySelectorAll(".ma-control").forEach(function (row) {
      var label = row.querySelector(".ma-label");
      var control = row.querySelector(".noUi-handle, select");
      if (!label || !control || control.hasAttribute("aria-labelledby")) return;
      if (!label.id) label.id = "ma-label-" + (++count);
      control.setAttribute("aria-labelledby", label.id);
    });
    document.querySelectorAll(".ma-live:not([aria-live])").forEach(function (box) {
      box.setAttribute("role", "status");
      box.setAttribute("aria-live", "polite");
      box.setAttribute("aria-atomic", "true");
    });
  }
  new MutationObserver(mark).observe(document.documentElement, {childList: true, subtree: true});
})();
