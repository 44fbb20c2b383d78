// The profile editor: each plugin the target registers at an extension point gets an "Add"
// button that appends it to that point's enabled box (without the script, the list is text
// to copy from).
(function () {
  "use strict";
  document.querySelectorAll("ul.plugin-list[data-plugin-target]").forEach(function (list) {
    var box = document.getElementById(list.dataset.pluginTarget);
    if (!box) { return; }
    list.querySelectorAll("li").forEach(function (item) {
      var name = item.querySelector("code").textContent;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "secondary";
      button.textContent = "Add";
      button.setAttribute("aria-label", "Add " + name + " to " + box.labels[0].textContent);
      button.addEventListener("click", function () {
        var lines = box.value.split("\n").map(function (l) { return l.trim(); });
        if (lines.some(function (l) { return l.split(/\s+/)[0] === name; })) { box.focus(); return; }
        box.value = (box.value.trim() ? box.value.replace(/\s*$/, "") + "\n" : "") + name;
        box.focus();
      });
      item.appendChild(button);
    });
  });
})();
