const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page that says where a live view stands, looking again every second while the browser is on its way. */
export function waitingPage(text: string, refresh: boolean): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Live browser</title>
${refresh ? '<meta http-equiv="refresh" content="1">' : ""}
<style>html,body{margin:0;height:100%;background:#0f1115;color:#9aa3b2;font:15px/1.4 system-ui,sans-serif}
body{display:flex;align-items:center;justify-content:center;text-align:center;padding:24px}</style></head>
<body><p>${escapeHtml(text)}</p></body></html>`;
}
