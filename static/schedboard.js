// schedboard's own small script (progressive enhancement: every page works without it).
// - forms marked data-autosubmit submit when a select changes;
// - forms marked data-partial-form="ID" and links marked data-partial inside #ID refresh
//   only that element: the page is fetched with the header "X-Partial: nodes" and the
//   server answers with the fragment; the address bar follows;
// - an element marked data-poll="SECONDS" (an unfinished job's status: a sync job, a what-if
//   comparison) re-fetches itself from the same page with "X-Partial: status" until the
//   fragment's [data-job-status] is neither queued nor running, then the page reloads to show
//   the outcome (without the script, the page offers a reload link);
// - a form marked data-busy="TEXT" (work that can take seconds: evaluating on a large cluster,
//   starting a what-if) disables its submit button on submit and shows TEXT on it, so a second
//   click does not send the work again and the person sees it is under way (a submit button's
//   own data-busy text wins).
// - a resource map's rows ([data-resource-rows], the policy editors) get add and remove
//   buttons and a picker that puts a known resource in an empty (or new) row; without the
//   script the server offers blank rows, and a cleared row is no entry.
// - a button marked data-copy="ID" (hidden without the script) copies that field's value to
//   the clipboard (the new API token's key); the field stays selectable either way.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function refresh(target, url) {
    target.setAttribute("aria-busy", "true");
    return fetch(url, { headers: { "X-Partial": "nodes" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error(response.status); }
        return response.text();
      })
      .then(function (html) {
        target.innerHTML = html;
        history.replaceState(null, "", url);
      })
      .catch(function () { window.location.href = url; })
      .finally(function () { target.removeAttribute("aria-busy"); });
  }

  function formUrl(form) {
    var url = new URL(form.action, window.location.href);
    url.search = new URLSearchParams(new FormData(form)).toString();
    url.hash = "";
    return url.toString();
  }

  var POLL_LIMIT = 300; // polls before giving up (the reload link stays)

  function poll(region) {
    var seconds = Math.max(Number(region.dataset.poll) || 2, 1);
    var count = 0;
    function tick() {
      count += 1;
      fetch(window.location.href, { headers: { "X-Partial": "status" }, credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) { throw new Error(response.status); }
          return response.text();
        })
        .then(function (html) {
          var holder = document.createElement("div");
          holder.innerHTML = html;
          var status = holder.querySelector("[data-job-status]");
          var state = status ? status.dataset.jobStatus : "";
          if (state !== "queued" && state !== "running") {
            window.location.reload();
            return;
          }
          // Only a change is announced (the region is aria-live).
          if (holder.textContent.trim() !== region.textContent.trim()) { region.innerHTML = html; }
          if (count < POLL_LIMIT) { setTimeout(tick, seconds * 1000); }
        })
        .catch(function () { /* leave the page as it is: its reload link still works */ });
    }
    setTimeout(tick, seconds * 1000);
  }

  // Rows of a resource map: one resource and its number per row.
  function resourceRows(box) {
    var list = box.querySelector(".resource-list");
    var pick = box.querySelector(".resource-pick");
    if (!list) { return; }

    function rows() { return Array.prototype.slice.call(list.querySelectorAll(".resource-row")); }
    function inputs(row) { return row.querySelectorAll("input"); }
    function isBlank(row) {
      var fields = inputs(row);
      return !fields[0].value.trim() && !fields[1].value.trim();
    }
    function renumber() {
      rows().forEach(function (row, i) {
        var fields = inputs(row);
        fields[0].setAttribute("aria-label", "Resource, row " + (i + 1));
        fields[1].setAttribute("aria-label", fields[1].getAttribute("aria-label").replace(/row \d+$/, "row " + (i + 1)));
        row.querySelector(".remove-row").setAttribute("aria-label", "Remove row " + (i + 1));
      });
      if (pick) {
        var used = rows().map(function (row) { return inputs(row)[0].value.trim(); });
        Array.prototype.forEach.call(pick.options, function (option) {
          option.disabled = option.value !== "" && used.indexOf(option.value) >= 0;
        });
      }
    }
    function addRow() {
      var last = rows()[rows().length - 1];
      var row = last.cloneNode(true);
      var n = Date.now().toString(36) + rows().length;
      row.classList.remove("has-error");
      row.querySelectorAll(".field-errors, .field-warning").forEach(function (el) { el.remove(); });
      Array.prototype.forEach.call(inputs(row), function (input) {
        input.value = "";
        input.removeAttribute("aria-invalid");
        input.removeAttribute("aria-describedby");
        input.id = input.id.replace(/_[^_]+_(resource|value)$/, "_n" + n + "_$1");
      });
      list.appendChild(row);
      renumber();
      return row;
    }
    function blankRow() {
      var free = rows().filter(isBlank)[0];
      return free || addRow();
    }

    rows().forEach(function (row) { row.querySelector(".remove-row").hidden = false; });
    box.querySelector(".resource-add").hidden = false;
    renumber();

    list.addEventListener("click", function (event) {
      var button = event.target.closest(".remove-row");
      if (!button) { return; }
      var row = button.closest(".resource-row");
      var all = rows();
      var next = all[all.indexOf(row) + 1] || all[all.indexOf(row) - 1];
      if (all.length > 1) {
        row.remove();
      } else {
        Array.prototype.forEach.call(inputs(row), function (input) { input.value = ""; });
      }
      renumber();
      (next && next.isConnected ? inputs(next)[0] : inputs(rows()[0])[0]).focus();
    });
    list.addEventListener("change", renumber);
    box.querySelector(".add-row").addEventListener("click", function () {
      inputs(addRow())[0].focus();
    });
    if (pick) {
      pick.addEventListener("change", function () {
        if (!pick.value) { return; }
        var row = blankRow();
        inputs(row)[0].value = pick.value;
        pick.value = "";
        renumber();
        inputs(row)[1].focus();
      });
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-poll]").forEach(poll);
    document.querySelectorAll("[data-resource-rows]").forEach(resourceRows);

    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      var field = document.getElementById(button.dataset.copy);
      if (!field) { return; }
      button.hidden = false;
      button.addEventListener("click", function () {
        field.select();
        var done = function () { button.textContent = "Copied"; };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
        } else {
          document.execCommand("copy");
          done();
        }
      });
    });

    document.querySelectorAll("form[data-busy]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        var button = event.submitter || form.querySelector("button[type=submit], button:not([type])");
        form.setAttribute("aria-busy", "true");
        if (button) {
          // Disabled after the event, so the button's own name/value is still submitted.
          setTimeout(function () {
            button.disabled = true;
            button.classList.add("busy");
            button.textContent = button.dataset.busy || form.dataset.busy;
          }, 0);
        }
      });
    });

    document.querySelectorAll("form[data-autosubmit] select").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });

    // A select that decides what the rest of the form offers reloads the page for its value.
    document.querySelectorAll("select[data-reload]").forEach(function (select) {
      select.addEventListener("change", function () {
        var url = new URL(window.location.href);
        url.search = "";
        url.searchParams.set(select.dataset.reload, select.value);
        window.location.href = url.toString();
      });
    });

    document.querySelectorAll("form[data-partial-form]").forEach(function (form) {
      var target = document.getElementById(form.dataset.partialForm);
      if (!target) { return; }
      var timer = null;
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        refresh(target, formUrl(form));
      });
      form.querySelectorAll("select").forEach(function (select) {
        select.addEventListener("change", function () { refresh(target, formUrl(form)); });
      });
      form.querySelectorAll("input[type=search]").forEach(function (input) {
        input.addEventListener("input", function () {
          clearTimeout(timer);
          timer = setTimeout(function () { refresh(target, formUrl(form)); }, 300);
        });
      });
      target.addEventListener("click", function (event) {
        var link = event.target.closest("a[data-partial]");
        if (!link || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
        event.preventDefault();
        var url = new URL(link.href, window.location.href);
        url.hash = "";
        var sort = url.searchParams.get("sort");
        if (sort !== null && form.elements.sort) { form.elements.sort.value = sort; }
        refresh(target, url.toString()).then(function () {
          var heading = document.getElementById("nodes-heading");
          if (heading) { heading.scrollIntoView({ block: "start" }); }
        });
      });
    });
  });
})();

