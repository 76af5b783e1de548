// booktr's web app script. Every page works without it; it adds copy buttons beside secrets
// shown once, opens the reader's chapter list on a wide screen, and two things more:
// 1. Live progress: a page showing a book that is being worked on (data-live-book, also while
//    a pause waits for its chapters in progress: data-pausing) asks /dashboard/books/{id}/live
//    every 3 seconds, a library with such books (data-live-list) asks /dashboard/live once for
//    all of them, and they update the status (in the interface's words, the state itself kept
//    in data-status), progress and note in place; when the book settles the book's page
//    reloads once, so the actions and downloads match the new state. These polls count in the
//    pages' live budget, never against the plan's API limits. Polling rather than Server-Sent
//    Events: the API Gateway in front of the Lambdas cannot hold a response open, and a
//    3-second poll of one small JSON document is cheap on both backends.
// 2. Uploads straight to storage: the upload form asks POST /api/uploads for a form, posts the
//    file there (S3 on AWS, this server otherwise), confirms, and opens the new book's page, so
//    books up to 50 MB go through even where the page's own form (through a Lambda) stops at 4 MB.
//    Dropping a file on the form picks it.
// 3. The owner's reader as the editor: a passage's editor form is posted in the background
//    (X-Booktr-Fragment: editor) and answered with the editor alone, which takes the place of
//    the one shown, so a save, an undo or a reset reloads nothing; Ctrl+Enter (Cmd+Enter)
//    saves; the preview follows the typing (built as elements, never as HTML). An answer that
//    is not an editor (a form expired, a page gone) is shown by posting the form plainly.
"use strict";
(function () {
  var MOVING = ["UPLOADED", "EXTRACTING", "TRANSLATING", "GENERATING", "TRANSLATED"];

  // The words of the interface for each state (the page's data-status-words); the state
  // itself stays in data-status.
  var WORDS = {};
  var holder = document.querySelector("[data-status-words]");
  try { if (holder) WORDS = JSON.parse(holder.getAttribute("data-status-words")); } catch (e) {}

  function setField(root, name, value) {
    var el = root.querySelector('[data-field="' + name + '"]');
    if (!el) return;
    if (el.tagName === "PROGRESS") el.value = value;
    else if (name === "status") {
      el.setAttribute("data-status", value);
      el.textContent = WORDS[value] || value;
    } else el.textContent = value;
  }

  function stateOf(root) {
    var el = root.querySelector('[data-field="status"]');
    return el ? el.getAttribute("data-status") : null;
  }

  function show(root, book) {
    setField(root, "status", book.status);
    setField(root, "progress", book.progress);
    setField(root, "percent", book.progress + "%");
  }

  function every3s(url, answer) {
    var timer = setInterval(function () {
      fetch(url, { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) { if (body && !answer(body)) clearInterval(timer); })
        .catch(function () {});
    }, 3000);
  }

  function moving(root) {
    return MOVING.indexOf(stateOf(root)) >= 0;
  }

  var book = document.querySelector("[data-live-book]");
  if (book && (moving(book) || book.hasAttribute("data-pausing"))) {
    var id = book.getAttribute("data-live-book");
    every3s("/dashboard/books/" + encodeURIComponent(id) + "/live", function (b) {
      show(book, b);
      if (b.note) setField(book, "note", b.note);
      (b.chapters || []).forEach(function (c) {
        var row = document.querySelector('[data-chapter="' + c.number + '"]');
        if (row) {
          setField(row, "status", c.status);
          setField(row, "passes", c.passesDone + "/3");
        }
      });
      if (MOVING.indexOf(b.status) < 0 && !b.pausing) {
        window.location.reload();
        return false;
      }
      return true;
    });
  }
  var rows = Array.prototype.filter.call(
    document.querySelectorAll("[data-live-list] tr[data-book]"), moving);
  if (rows.length) {
    every3s("/dashboard/live", function (answer) {
      var still = false;
      answer.books.forEach(function (b) {
        var row = document.querySelector('[data-live-list] tr[data-book="' + b.id + '"]');
        if (!row) return;
        show(row, b);
        if (MOVING.indexOf(b.status) >= 0) still = true;
      });
      return still;
    });
  }

  // The reader's chapter list: a menu on a phone, open beside the text on a wide screen (and
  // again when the window turns from one to the other).
  if (window.matchMedia) {
    var wide = window.matchMedia("(min-width: 50.01rem)");
    var fit = function () {
      document.querySelectorAll("details[data-wide-open]").forEach(function (d) { d.open = wide.matches; });
    };
    fit();
    if (wide.addEventListener) wide.addEventListener("change", fit);
  }

  // A form's error summary (the page's address already leads to it) takes the focus, so that
  // a screen reader reads it and Tab goes on to the fields.
  var summary = document.querySelector("[data-error-summary]");
  if (summary) summary.focus();

  // Copy buttons beside a secret shown once.
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var text = document.getElementById(button.getAttribute("data-copy")).textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(text);
    });
  });

  // The passage editor's preview: the markup's marks as the elements the book shows, a link's
  // text without its address, a number mark as its number (set apart at the text's end, as a
  // verse line's number); markup that is not well-formed is shown as typed.
  var MARKS = { i: "em", b: "strong", sup: "sup", sub: "sub", code: "code", keep: "span", a: "span", span: "span" };
  function unescapeText(t) {
    return t.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
  }
  function preview(text, into) {
    var root = document.createDocumentFragment();
    var open = [root], names = [], at = 0, ok = true, m;
    var tag = /<(\/?)([a-z]+)((?:\s+[a-z]+="[^"]*")*)\s*(\/?)>/g;
    var top = function () { return open[open.length - 1]; };
    while (ok && (m = tag.exec(text))) {
      if (m.index > at) top().appendChild(document.createTextNode(unescapeText(text.slice(at, m.index))));
      at = tag.lastIndex;
      var name = m[2];
      if (m[4]) {
        var number = /\stext="([^"]*)"/.exec(m[3]);
        if (name === "br") top().appendChild(document.createElement("br"));
        else if (name === "num" && number) {
          var value = document.createTextNode(unescapeText(number[1]));
          if (text.slice(at).trim()) top().appendChild(value);
          else {
            var lnum = document.createElement("span");
            lnum.className = "lnum";
            lnum.appendChild(value);
            top().appendChild(lnum);
          }
        } else if (name === "ref") {
          var sup = document.createElement("sup");
          sup.className = "ref";
          sup.textContent = "*";
          top().appendChild(sup);
        } else ok = false;
      } else if (m[1]) {
        if (names.pop() === name) open.pop(); else ok = false;
      } else if (MARKS.hasOwnProperty(name)) {
        var el = document.createElement(MARKS[name]);
        if (name === "keep") el.setAttribute("translate", "no");
        if (name === "a") el.className = "link";
        top().appendChild(el);
        open.push(el);
        names.push(name);
      } else ok = false;
    }
    if (ok && at < text.length) top().appendChild(document.createTextNode(unescapeText(text.slice(at))));
    into.textContent = "";
    if (ok && !names.length) into.appendChild(root); else into.textContent = text;
  }

  var live = document.querySelector("[data-editor-live]");
  function wireEditor(holder) {
    var form = holder.querySelector("form[data-editor]");
    if (!form || !window.fetch || !window.URLSearchParams) return;
    var field = form.querySelector("textarea");
    var shown = holder.querySelector("[data-preview]");
    var hint = holder.querySelector("[data-shortcut]");
    if (hint) hint.hidden = false;
    // The preview follows the typing: its button is for pages without the script.
    var plain = form.querySelector("[data-without-script]");
    if (plain) plain.hidden = true;
    field.addEventListener("input", function () { preview(field.value, shown); });
    field.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        send("save");
      }
    });
    form.addEventListener("submit", function (e) {
      var button = e.submitter;
      if (!button || button.value === "preview") return;
      e.preventDefault();
      send(button.value);
    });
    function plainly(action) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = "action";
      input.value = action;
      form.appendChild(input);
      form.submit();
    }
    var busy = false;
    function send(action) {
      if (busy) return;
      busy = true;
      var data = new URLSearchParams(new FormData(form));
      data.set("action", action);
      // Not form.action: the buttons named "action" shadow it.
      fetch(form.getAttribute("action"), {
        method: "POST", credentials: "same-origin",
        headers: { "X-Booktr-Fragment": "editor" }, body: data
      })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var box = document.createElement("div");
          box.innerHTML = html;
          var fresh = box.querySelector("[data-editor-for]");
          if (!fresh) return plainly(action);
          holder.parentNode.replaceChild(fresh, holder);
          var row = fresh.parentNode;
          if (row && row.classList) row.classList.toggle("flagged", fresh.getAttribute("data-flagged") === "true");
          wireEditor(fresh);
          // What is still open in the book, as the reader's count says it.
          var count = document.querySelector("strong[data-open-flagged]");
          if (count && fresh.hasAttribute("data-open-flagged")) count.textContent = fresh.getAttribute("data-open-flagged");
          var said = fresh.querySelector("[data-said]");
          if (live) live.textContent = said ? said.textContent : "";
          fresh.querySelector("textarea").focus();
        })
        .catch(function () { plainly(action); });
    }
  }
  document.querySelectorAll("[data-editor-for]").forEach(wireEditor);
  // A page opened at an editor (its address ends in #p-N) gives its field the focus once the
  // browser has gone to the anchor, which moves the focus to the page and so skips autofocus.
  // Without the script, Tab from the anchor reaches the field first.
  var opened = document.querySelector("[data-editor-for] textarea");
  if (opened) {
    window.addEventListener("load", function () {
      setTimeout(function () {
        if (document.activeElement === document.body) opened.focus({ preventScroll: true });
      }, 0);
    });
  }

  // A re-translation's page while its job runs looks again every 3 seconds (without the
  // script, its "Look again" link does).
  if (document.querySelector("[data-proposal-pending]")) {
    setTimeout(function () { window.location.reload(); }, 3000);
  }

  var form = document.querySelector("form[data-upload]");
  if (!form) return;
  var input = form.querySelector('input[type="file"]');
  var problem = form.querySelector("[data-upload-error]");
  form.addEventListener("dragover", function (e) { e.preventDefault(); form.classList.add("dragging"); });
  form.addEventListener("dragleave", function () { form.classList.remove("dragging"); });
  form.addEventListener("drop", function (e) {
    e.preventDefault();
    form.classList.remove("dragging");
    if (e.dataTransfer && e.dataTransfer.files.length) input.files = e.dataTransfer.files;
  });

  function fail(message) {
    problem.textContent = message;
    problem.hidden = false;
    form.querySelector('button[type="submit"]').disabled = false;
  }

  // The language field takes a language's name (in English, in Spanish or in the language
  // itself, whatever the case and accents) or a code, as the page's own form does: the list's
  // options carry each language's names and code. Null for something that is neither.
  function fold(text) {
    return text.trim().toLowerCase().normalize("NFD").replace(/[\u0300-\u036f]/g, "");
  }
  function languageCode(typed) {
    var wanted = fold(typed);
    var options = document.querySelectorAll("#languages option[data-code]");
    for (var i = 0; i < options.length; i++) {
      var names = options[i].getAttribute("data-names").split("|").map(fold);
      if (names.indexOf(wanted) >= 0) return options[i].getAttribute("data-code");
    }
    return /^[a-z]{2,3}([-_][a-z0-9]{2,8})*$/i.test(typed.trim()) ? typed.trim() : null;
  }

  function answer(r) {
    return r.json().then(function (body) {
      if (!r.ok) throw new Error(body.message || r.statusText);
      return body;
    });
  }

  form.addEventListener("submit", function (e) {
    var file = input.files && input.files[0];
    if (!file || !window.fetch || !window.FormData) return; // the plain form does the job
    var langField = form.querySelector('[name="targetLang"]');
    var lang = langField.value.trim();
    e.preventDefault();
    // A name the list does not hold ("Klingon") is said at once, as the page's form would.
    if (lang && !languageCode(lang)) {
      fail(langField.getAttribute("data-unknown").replace("{typed}", lang));
      langField.focus();
      return;
    }
    problem.hidden = true;
    form.querySelector('button[type="submit"]').disabled = true;
    var wanted = { fileName: file.name, size: file.size };
    var title = form.querySelector('[name="title"]').value.trim();
    if (title) wanted.title = title;
    if (lang) wanted.targetLang = languageCode(lang);
    var offer;
    fetch("/api/uploads", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(wanted)
    })
      .then(answer)
      .then(function (o) {
        offer = o;
        var data = new FormData();
        o.fields.forEach(function (f) { data.append(f.name, f.value); });
        data.append(o.fileField, file, file.name);
        return fetch(o.url, { method: o.method, body: data });
      })
      .then(function (r) {
        if (!r.ok) return r.text().then(function (t) { throw new Error(t || r.statusText); });
        return fetch(offer.confirmPath, { method: "POST", credentials: "same-origin" });
      })
      .then(answer)
      .then(function (done) {
        // The book's page quotes the model and glossary chosen with the file.
        var choice = ["model", "glossaryId"].map(function (name) {
          var field = form.querySelector('[name="' + name + '"]');
          return field && field.value ? name + "=" + encodeURIComponent(field.value) : null;
        }).filter(Boolean).join("&");
        window.location.assign("/dashboard/books/" + done.book.id + (choice ? "?" + choice : ""));
      })
      .catch(function (err) { fail(err.message); });
  });
})();
