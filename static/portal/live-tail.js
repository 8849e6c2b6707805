/* Logs' live tail: rows of new requests arrive over a WebSocket (/portal/ws/logs/) and go on top of the list.
   With a filter set or on an older page, rows are not inserted (they may not match); a notice counts them. */
(function () {
  "use strict";
  var body = document.getElementById("log-rows");
  if (!body || !("WebSocket" in window)) { return; }
  var insert = body.dataset.liveMode === "insert";
  var status = document.getElementById("live-status");
  var notice = document.getElementById("live-notice");
  var missed = 0;
  var delay = 1000;

  function show(text, state) {
    if (status) { status.textContent = text; status.dataset.state = state; }
  }

  function add(rows) {
    var template = document.createElement("template");
    for (var i = rows.length - 1; i >= 0; i--) {
      template.innerHTML = rows[i].trim();
      var row = template.content.firstElementChild;
      if (!row || body.querySelector('tr[data-request-id="' + row.dataset.requestId + '"]')) { continue; }
      var empty = body.querySelector("tr.empty");
      if (empty) { empty.remove(); }
      row.classList.add("fresh");
      body.insertBefore(row, body.firstElementChild);
    }
  }

  function count(rows) {
    missed += rows.length;
    if (notice) {
      notice.hidden = false;
      notice.querySelector("span").textContent = missed + (missed === 1 ? " new request" : " new requests");
    }
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + body.dataset.liveUrl);
    socket.onopen = function () { delay = 1000; show("Live", "open"); };
    socket.onmessage = function (event) {
      var rows = JSON.parse(event.data).rows || [];
      if (insert) { add(rows); } else { count(rows); }
    };
    socket.onclose = function (event) {
      if (event.code === 4401 || event.code === 4403) { show("Live tail unavailable", "closed"); return; }
      show("Reconnecting…", "closed");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
