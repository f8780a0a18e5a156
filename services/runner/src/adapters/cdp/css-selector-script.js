/**
 * A CSS selector that finds an element again in a fresh browser (code mode). Shadow roots are crossed with
 * puppeteer's `>>>` combinator. Plain JavaScript evaluated in the page (see observe-page-script.js for why).
 */
(target) => {
  const esc = (s) => CSS.escape(s);
  const unique = (root, sel) => root.querySelectorAll(sel).length === 1;
  const part = (el) => {
    const root = el.getRootNode();
    if (el.id && unique(root, `#${esc(el.id)}`)) return `#${esc(el.id)}`;
    for (const attr of ["data-testid", "data-test", "name", "aria-label", "placeholder"]) {
      const value = el.getAttribute(attr);
      if (!value) continue;
      const sel = `${el.tagName.toLowerCase()}[${attr}=${JSON.stringify(value)}]`;
      if (unique(root, sel)) return sel;
    }
    const steps = [];
    let node = el;
    while (node && node.parentNode !== root && node.parentElement) {
      if (node.id && unique(root, `#${esc(node.id)}`)) {
        steps.unshift(`#${esc(node.id)}`);
        return steps.join(" > ");
      }
      const tag = node.tagName;
      const siblings = Array.from(node.parentElement.children).filter((c) => c.tagName === tag);
      const name = tag.toLowerCase();
      steps.unshift(siblings.length > 1 ? `${name}:nth-of-type(${siblings.indexOf(node) + 1})` : name);
      node = node.parentElement;
    }
    if (node) steps.unshift(node.tagName.toLowerCase());
    return steps.join(" > ");
  };
  const parts = [];
  let el = target;
  while (el) {
    parts.unshift(part(el));
    const root = el.getRootNode();
    el = root instanceof ShadowRoot ? root.host : null;
  }
  return parts.join(" >>> ");
};
