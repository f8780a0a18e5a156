/**
 * Serializes one frame's document for the model in a single evaluation (no per-element CDP round-trips).
 * Kept as plain JavaScript and loaded as text: it runs inside the page, so it must not depend on helpers a
 * TypeScript transpiler might inject. Called as `(source)(options)`; returns a plain JSON-able object.
 *
 * - Interactive elements get a number of this document's stored on the element itself, so an element keeps it across
 *   observations; the caller maps the numbers of a tab's frames to the indices the model sees.
 * - Lines come in document (reading) order; text under an interactive element becomes that element's label.
 * - Open shadow roots are walked in place (slots resolved); iframes become placeholders the caller fills in.
 * - On huge pages only a window of lines around the viewport is returned, within `maxChars`.
 */
(options) => {
  const maxChars = options.maxChars;
  const doc = document;
  const win = window;
  const fresh = win.__basNextId === undefined;
  let nextId = win.__basNextId ?? 1;
  const registry = new Map();
  const scrollX = win.scrollX;
  const scrollY = win.scrollY;

  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "OPTION"]);
  const INLINE = new Set([
    "A",
    "ABBR",
    "B",
    "BDI",
    "BDO",
    "CITE",
    "CODE",
    "DATA",
    "DFN",
    "EM",
    "I",
    "KBD",
    "LABEL",
    "MARK",
    "Q",
    "S",
    "SAMP",
    "SMALL",
    "SPAN",
    "STRONG",
    "SUB",
    "SUP",
    "TIME",
    "U",
    "VAR",
    "FONT",
    "IMG",
    "SLOT",
  ]);
  const ROLES = new Set([
    "button",
    "link",
    "checkbox",
    "radio",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "switch",
    "combobox",
    "textbox",
    "searchbox",
    "slider",
    "spinbutton",
    "treeitem",
    "gridcell",
  ]);
  const visibilityOptions = {
    checkVisibilityCSS: true,
    visibilityProperty: true,
    checkOpacity: false,
    contentVisibilityAuto: true,
  };

  const clip = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  const squash = (s) => s.replace(/\s+/g, " ").trim();
  const quote = (s, n = 80) => JSON.stringify(clip(squash(String(s)), n));

  function isVisible(el) {
    if (typeof el.checkVisibility === "function") return el.checkVisibility(visibilityOptions);
    const r = el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  }

  function isInteractive(el, tag) {
    switch (tag) {
      case "A":
        return el.hasAttribute("href");
      case "BUTTON":
      case "SELECT":
      case "TEXTAREA":
      case "SUMMARY":
        return true;
      case "INPUT":
        return el.type !== "hidden";
    }
    const role = el.getAttribute("role");
    if (role && ROLES.has(role)) return true;
    if (el.isContentEditable && !el.parentElement?.isContentEditable) return true;
    if (typeof el.onclick === "function" || el.hasAttribute("onclick") || el.__basClick) return true;
    const tabindex = el.getAttribute("tabindex");
    if (tabindex !== null && Number(tabindex) >= 0) return true;
    // Elements that only show a pointer cursor are clickable widgets of frameworks that delegate their listeners.
    if (getComputedStyle(el).cursor === "pointer") {
      const parent = el.parentElement;
      return !parent || getComputedStyle(parent).cursor !== "pointer";
    }
    return false;
  }

  function labelOf(el) {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = labelledBy
        .split(/\s+/)
        .map((id) => el.getRootNode().getElementById?.(id)?.textContent ?? "")
        .join(" ");
      if (squash(text)) return text;
    }
    if (el.labels && el.labels.length > 0) return el.labels[0].textContent || "";
    return "";
  }

  function attrs(el, tag) {
    const out = [];
    const add = (name, value, n) => {
      if (value !== null && value !== undefined && value !== "") out.push(`${name}=${quote(value, n)}`);
    };
    const role = el.getAttribute("role");
    if (role) out.push(`role=${role}`);
    if (tag === "INPUT") {
      const type = el.type;
      if (type !== "text") out.push(`type=${type}`);
      add("label", labelOf(el));
      add("placeholder", el.placeholder);
      if (!labelOf(el) && !el.placeholder) add("name", el.name, 40);
      if (type === "checkbox" || type === "radio") {
        out.push(el.checked ? "checked" : "unchecked");
        if (type === "radio") add("value", el.value, 40);
      } else if (type === "password") {
        if (el.value) out.push('value="••••••"');
      } else if (type !== "file" && type !== "submit" && type !== "button") {
        out.push(`value=${quote(el.value, 200)}`);
      } else if (type === "submit" || type === "button") {
        add("value", el.value);
      }
      if (el.required) out.push("required");
      if (el.readOnly) out.push("readonly");
    } else if (tag === "TEXTAREA") {
      add("label", labelOf(el));
      add("placeholder", el.placeholder);
      out.push(`value=${quote(el.value, 300)}`);
    } else if (tag === "SELECT") {
      add("label", labelOf(el));
      const selected = el.selectedOptions[0];
      out.push(`selected=${quote(selected ? selected.text : "")}`);
      const options = Array.from(el.options);
      const names = options.slice(0, 20).map((o) => clip(squash(o.text), 40));
      if (options.length > 20) names.push(`…${options.length - 20} more`);
      out.push(`options=${quote(names.join(" | "), 600)}`);
    } else {
      add("aria-label", el.getAttribute("aria-label"));
      if (tag === "A") {
        const href = el.getAttribute("href") ?? "";
        add("href", href.startsWith(location.origin) ? href.slice(location.origin.length) || "/" : href, 100);
      }
    }
    add("title", el.getAttribute("title"));
    for (const state of ["aria-expanded", "aria-checked", "aria-selected", "aria-pressed"]) {
      const value = el.getAttribute(state);
      if (value !== null) out.push(`${state.slice(5)}=${value}`);
    }
    if (el.disabled || el.getAttribute("aria-disabled") === "true") out.push("disabled");
    return out;
  }

  const lines = [];
  let openText = null;
  const breakText = () => {
    openText = null;
  };

  function addText(text, ctx, el) {
    if (ctx) {
      if (ctx.label.length < 120) ctx.label += (ctx.label ? " " : "") + text;
      return;
    }
    if (!openText) {
      openText = { k: "t", y: el.getBoundingClientRect().top + scrollY, s: text };
      lines.push(openText);
    } else if (openText.s.length < 2000) {
      openText.s += ` ${text}`;
    }
  }

  function walkChildren(node, ctx) {
    for (let child = node.firstChild; child; child = child.nextSibling) walk(child, ctx);
  }

  function walk(node, ctx) {
    if (node.nodeType === 3) {
      const text = squash(node.data);
      if (text && node.parentElement) addText(text, ctx, node.parentElement);
      return;
    }
    if (node.nodeType !== 1) {
      if (node.nodeType === 11) walkChildren(node, ctx);
      return;
    }
    const el = node;
    const tag = el.tagName;
    if (SKIP.has(tag)) return;
    if (tag === "SLOT") {
      const assigned = el.assignedNodes({ flatten: true });
      if (assigned.length === 0) walkChildren(el, ctx);
      else for (const n of assigned) walk(n, ctx);
      return;
    }
    if (tag === "BR") {
      if (!ctx) breakText();
      return;
    }
    if (!isVisible(el)) {
      // display:contents has no box of its own, but its children do.
      if (getComputedStyle(el).display === "contents") walkChildren(el.shadowRoot ?? el, ctx);
      return;
    }
    if (tag === "IFRAME" || tag === "FRAME") {
      if (el.__basFrame === undefined) el.__basFrame = `f${Math.random().toString(36).slice(2, 10)}`;
      breakText();
      lines.push({ k: "f", y: el.getBoundingClientRect().top + scrollY, id: el.__basFrame });
      return;
    }
    const block = !INLINE.has(tag);
    if (block && !ctx) breakText();
    if (tag === "IMG") {
      const alt = el.getAttribute("alt");
      if (alt && squash(alt)) addText(`[image: ${clip(squash(alt), 80)}]`, ctx, el);
      return;
    }
    if (!ctx && isInteractive(el, tag)) {
      const rect = el.getBoundingClientRect();
      if (rect.width > 0 || rect.height > 0) {
        if (el.__basId === undefined) el.__basId = nextId++;
        registry.set(el.__basId, el);
        breakText();
        const entry = { k: "e", y: rect.top + scrollY, id: el.__basId, tag: tag.toLowerCase(), el, label: "" };
        lines.push(entry);
        if (tag !== "SELECT" && tag !== "TEXTAREA" && tag !== "INPUT") walkChildren(el.shadowRoot ?? el, entry);
        breakText();
        return;
      }
    }
    walkChildren(el.shadowRoot ?? el, ctx);
    if (block && !ctx) breakText();
  }

  walkChildren(doc.body ?? doc.documentElement, null);

  // Keep a window of lines around the viewport when the page is too big to send whole.
  // Element lines are sized by estimate: they are only finished (attributes, labels) when kept.
  const size = (line) => (line.k === "e" ? 48 + Math.min(line.label.length, 120) : (line.s?.length ?? 12));
  let total = 0;
  for (const line of lines) total += size(line) + 8;
  let first = 0;
  let last = lines.length;
  if (total > maxChars) {
    let anchor = lines.findIndex((line) => line.y >= scrollY);
    if (anchor < 0) anchor = Math.max(0, lines.length - 1);
    let used = 0;
    first = anchor;
    // A fifth of the budget for what is just above the viewport, the rest from the viewport down.
    while (first > 0 && used + size(lines[first - 1]) + 8 <= maxChars / 5) used += size(lines[--first]) + 8;
    last = anchor;
    while (last < lines.length && used + size(lines[last]) + 8 <= maxChars) used += size(lines[last++]) + 8;
    while (first > 0 && used + size(lines[first - 1]) + 8 <= maxChars) used += size(lines[--first]) + 8;
  }
  const kept = lines.slice(first, last);

  // Finish element lines: attributes, state and a label that falls back to aria-label/title/alt.
  for (const line of kept) {
    if (line.k !== "e") continue;
    const el = line.el;
    const tagName = el.tagName;
    let label = squash(line.label);
    if (!label && tagName !== "INPUT" && tagName !== "SELECT" && tagName !== "TEXTAREA") {
      label = squash(
        el.getAttribute("aria-label") ||
          el.getAttribute("title") ||
          el.querySelector?.("img[alt]")?.getAttribute("alt") ||
          el.value ||
          "",
      );
    }
    const summaryLabel =
      label || squash(labelOf(el)) || el.getAttribute("placeholder") || el.getAttribute("name") || "";
    const attributes = attrs(el, tagName);
    const open = `<${line.tag}${attributes.length ? ` ${attributes.join(" ")}` : ""}>`;
    const voidTag = tagName === "INPUT" || tagName === "SELECT" || tagName === "TEXTAREA";
    line.s = voidTag ? open : `${open}${clip(label, 120)}</${line.tag}>`;
    line.l = clip(summaryLabel, 60);
    delete line.el;
    delete line.label;
  }

  win.__basNextId = nextId;
  win.__basElements = registry;
  const root = doc.scrollingElement ?? doc.documentElement;
  return {
    url: location.href,
    title: doc.title,
    fresh,
    lines: kept,
    omittedAbove: first,
    omittedBelow: lines.length - last,
    elementCount: registry.size,
    scroll: {
      x: Math.round(scrollX),
      y: Math.round(scrollY),
      viewportWidth: win.innerWidth,
      viewportHeight: win.innerHeight,
      pageWidth: root ? root.scrollWidth : 0,
      pageHeight: root ? root.scrollHeight : 0,
    },
  };
};
