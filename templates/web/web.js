// A game's page works without this file: the slider is a form and the steps are links.
// With it: moving the slider shows that version at once, and the arrow keys step through the history.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var slider = document.querySelector("form.slider input[type=range]");
  if (slider) {
    var number = document.querySelector("form.slider input.number");
    slider.addEventListener("input", function () { if (number) { number.value = slider.value; } });
    slider.addEventListener("change", function () {
      window.location.href = "?v=" + encodeURIComponent(slider.value) + "#history";
    });
    if (number) { number.addEventListener("change", function () { slider.value = number.value; }); }
  }
  var zoom = document.getElementById("zoom");
  var pan = document.getElementById("pan");
  if (zoom && pan) {
    zoom.hidden = false;
    zoom.addEventListener("click", function () {
      var on = pan.classList.toggle("zoomed");
      zoom.textContent = on ? "Zoom out" : "Zoom in";
    });
    var dragging = null;
    pan.addEventListener("mousedown", function (e) {
      if (pan.classList.contains("zoomed")) { dragging = [e.clientX, e.clientY]; e.preventDefault(); }
    });
    document.addEventListener("mouseup", function () { dragging = null; });
    document.addEventListener("mousemove", function (e) {
      if (!dragging) { return; }
      pan.scrollLeft -= e.clientX - dragging[0];
      pan.scrollTop -= e.clientY - dragging[1];
      dragging = [e.clientX, e.clientY];
    });
  }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT")) { return; }
    var link = null;
    if (event.key === "ArrowLeft") { link = document.getElementById("step-back"); }
    if (event.key === "ArrowRight") { link = document.getElementById("step-on"); }
    if (link) { event.preventDefault(); window.location.href = link.href; }
  });
});
