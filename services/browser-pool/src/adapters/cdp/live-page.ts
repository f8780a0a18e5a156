/**
 * The live view page: one self-contained HTML document (no external script, style or font), which opens its
 * WebSocket at `<its own path>/ws`. It shows the status (connecting / live / ended), the followed tab's URL, the tab
 * list and the frames scaled to fit; with a control link a person can take over (mouse, wheel, keyboard, paste) and
 * hand back. The script runs under a nonce, so the page's CSP allows no other script.
 */
export function livePage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Live browser</title>
<style>
  :root { color-scheme: dark; --bg: #0f1115; --panel: #181b22; --line: #2a2f3a; --text: #e6e8ee; --dim: #9aa3b2;
    --accent: #4f8cff; --live: #2fbf71; --ended: #e5484d; }
  * { box-sizing: border-box; }
  html, body { margin: 0; height: 100%; background: var(--bg); color: var(--text);
    font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  body { display: flex; flex-direction: column; }
  header { display: flex; align-items: center; gap: 10px; padding: 8px 12px; background: var(--panel);
    border-bottom: 1px solid var(--line); }
  .pill { display: inline-flex; align-items: center; gap: 6px; padding: 2px 10px; border-radius: 999px;
    border: 1px solid var(--line); color: var(--dim); white-space: nowrap; }
  .pill::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--dim); }
  .pill[data-status="live"] { color: var(--live); } .pill[data-status="live"]::before { background: var(--live); }
  .pill[data-status="ended"] { color: var(--ended); } .pill[data-status="ended"]::before { background: var(--ended); }
  #url { flex: 1; min-width: 0; padding: 4px 10px; border-radius: 6px; background: var(--bg);
    border: 1px solid var(--line); color: var(--dim); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  button { font: inherit; color: var(--text); background: #232836; border: 1px solid var(--line); border-radius: 6px;
    padding: 4px 10px; cursor: pointer; white-space: nowrap; }
  button:hover { border-color: var(--accent); }
  button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
  button[hidden] { display: none; }
  nav { display: flex; gap: 4px; padding: 6px 12px; overflow-x: auto; border-bottom: 1px solid var(--line); }
  nav button { max-width: 220px; overflow: hidden; text-overflow: ellipsis; color: var(--dim); }
  nav button[aria-current="true"] { color: var(--text); border-color: var(--accent); }
  main { position: relative; flex: 1; min-height: 0; display: flex; align-items: center; justify-content: center;
    padding: 8px; }
  #screen { max-width: 100%; max-height: 100%; object-fit: contain; background: #000; border-radius: 4px;
    box-shadow: 0 4px 24px rgba(0,0,0,.5); outline: none; user-select: none; -webkit-user-drag: none; }
  #screen[data-control="true"] { box-shadow: 0 0 0 2px var(--accent), 0 4px 24px rgba(0,0,0,.5); cursor: crosshair; }
  #overlay { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
    color: var(--dim); font-size: 15px; text-align: center; padding: 24px; }
  #overlay[hidden] { display: none; }
</style>
</head>
<body>
<header>
  <span class="pill" id="status" data-status="connecting">Connecting</span>
  <span id="url" title="">&nbsp;</span>
  <button id="control" type="button" aria-pressed="false" hidden>Take control</button>
  <button id="share" type="button" hidden>Copy view-only link</button>
</header>
<nav id="tabs" aria-label="Tabs"></nav>
<main>
  <img id="screen" alt="The browser, live" tabindex="0" hidden>
  <div id="overlay">Connecting to the browser…</div>
</main>
<script nonce="${nonce}">
(() => {
  const $ = (id) => document.getElementById(id);
  const screen = $("screen"), overlay = $("overlay"), status = $("status"), urlBar = $("url");
  const controlButton = $("control"), shareButton = $("share"), tabsNav = $("tabs");
  let socket, size = { width: 1, height: 1 }, controlling = false, viewUrl = null, ended = false;

  function setStatus(value, text) {
    status.dataset.status = value;
    status.textContent = text;
  }
  function showOverlay(text) {
    overlay.textContent = text;
    overlay.hidden = false;
  }
  function setControl(on) {
    controlling = on;
    controlButton.setAttribute("aria-pressed", String(on));
    controlButton.textContent = on ? "Hand back" : "Take control";
    screen.dataset.control = String(on);
    if (on) screen.focus();
  }
  function send(message) {
    if (controlling && socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }
  /** Where on the page a point of the image is, in the page's CSS pixels (the image is scaled to fit). */
  function pagePoint(event) {
    const box = screen.getBoundingClientRect();
    const scale = Math.min(box.width / screen.naturalWidth, box.height / screen.naturalHeight);
    const shownWidth = screen.naturalWidth * scale, shownHeight = screen.naturalHeight * scale;
    const left = box.left + (box.width - shownWidth) / 2, top = box.top + (box.height - shownHeight) / 2;
    const x = ((event.clientX - left) / shownWidth) * size.width;
    const y = ((event.clientY - top) / shownHeight) * size.height;
    return { x: Math.max(0, Math.round(x)), y: Math.max(0, Math.round(y)) };
  }
  const modifiers = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  const buttons = ["left", "middle", "right"];

  screen.addEventListener("mousedown", (e) => {
    if (!controlling) return;
    e.preventDefault();
    screen.focus();
    send({ type: "mouse", action: "down", ...pagePoint(e), button: buttons[e.button] || "left", clickCount: e.detail || 1, modifiers: modifiers(e) });
  });
  screen.addEventListener("mouseup", (e) => {
    if (!controlling) return;
    send({ type: "mouse", action: "up", ...pagePoint(e), button: buttons[e.button] || "left", clickCount: e.detail || 1, modifiers: modifiers(e) });
  });
  let lastMove = 0;
  screen.addEventListener("mousemove", (e) => {
    if (!controlling || performance.now() - lastMove < 30) return;
    lastMove = performance.now();
    send({ type: "mouse", action: "move", ...pagePoint(e), modifiers: modifiers(e) });
  });
  screen.addEventListener("wheel", (e) => {
    if (!controlling) return;
    e.preventDefault();
    send({ type: "wheel", ...pagePoint(e), deltaX: e.deltaX, deltaY: e.deltaY, modifiers: modifiers(e) });
  }, { passive: false });
  screen.addEventListener("contextmenu", (e) => controlling && e.preventDefault());
  screen.addEventListener("keydown", (e) => {
    if (!controlling) return;
    e.preventDefault();
    const text = e.key === "Enter" ? "\\r" : e.key.length === 1 && !e.ctrlKey && !e.metaKey ? e.key : undefined;
    send({ type: "key", action: "down", key: e.key, code: e.code, keyCode: e.keyCode, ...(text ? { text } : {}), modifiers: modifiers(e) });
  });
  screen.addEventListener("keyup", (e) => {
    if (!controlling) return;
    e.preventDefault();
    send({ type: "key", action: "up", key: e.key, code: e.code, keyCode: e.keyCode, modifiers: modifiers(e) });
  });
  screen.addEventListener("paste", (e) => {
    const text = e.clipboardData && e.clipboardData.getData("text");
    if (controlling && text) send({ type: "text", text });
  });
  controlButton.addEventListener("click", () => setControl(!controlling));
  shareButton.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(viewUrl);
      shareButton.textContent = "Copied";
    } catch {
      window.prompt("View-only link", viewUrl);
    }
    setTimeout(() => (shareButton.textContent = "Copy view-only link"), 1500);
  });

  function renderTabs(message) {
    tabsNav.replaceChildren(...message.tabs.map((tab) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = tab.title || tab.url || "New tab";
      button.title = tab.url;
      button.setAttribute("aria-current", String(tab.id === message.activeId));
      button.addEventListener("click", () => {
        if (socket && socket.readyState === WebSocket.OPEN && controlling) socket.send(JSON.stringify({ type: "tab", targetId: tab.id }));
      });
      return button;
    }));
    const current = message.tabs.find((tab) => tab.id === message.activeId);
    urlBar.textContent = current ? current.url : "";
    urlBar.title = current ? current.url : "";
  }

  function end(reason) {
    if (ended) return;
    ended = true;
    setStatus("ended", "Ended");
    setControl(false);
    controlButton.hidden = true;
    shareButton.hidden = true;
    showOverlay(reason || "This browser has ended.");
    screen.style.opacity = "0.35";
  }

  socket = new WebSocket(location.href.split(/[?#]/)[0].replace(/^http/, "ws").replace(/\\/$/, "") + "/ws");
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "hello") {
      controlButton.hidden = message.mode !== "control";
      viewUrl = message.viewUrl || null;
      shareButton.hidden = !viewUrl;
      document.body.dataset.mode = message.mode;
    } else if (message.type === "frame") {
      size = { width: message.width, height: message.height };
      screen.src = "data:image/jpeg;base64," + message.data;
      if (screen.hidden) {
        screen.hidden = false;
        overlay.hidden = true;
        setStatus("live", "Live");
      }
    } else if (message.type === "tabs") {
      renderTabs(message);
    } else if (message.type === "ended") {
      end("This browser has ended.");
    }
  });
  socket.addEventListener("close", () => end(ended ? undefined : "The connection to the browser closed."));
})();
</script>
</body>
</html>`;
}
