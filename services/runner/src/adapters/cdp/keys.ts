/** One key press with modifiers, or plain text to type. */
export interface KeyCombo {
  key: string;
  modifiers: string[];
  text?: string;
}

const ALIASES: Record<string, string> = {
  enter: "Enter",
  return: "Enter",
  esc: "Escape",
  escape: "Escape",
  tab: "Tab",
  space: "Space",
  backspace: "Backspace",
  delete: "Delete",
  del: "Delete",
  up: "ArrowUp",
  down: "ArrowDown",
  left: "ArrowLeft",
  right: "ArrowRight",
  arrowup: "ArrowUp",
  arrowdown: "ArrowDown",
  arrowleft: "ArrowLeft",
  arrowright: "ArrowRight",
  pageup: "PageUp",
  pagedown: "PageDown",
  home: "Home",
  end: "End",
  ctrl: "Control",
  control: "Control",
  shift: "Shift",
  alt: "Alt",
  option: "Alt",
  meta: "Meta",
  cmd: "Meta",
  command: "Meta",
};

const MODIFIERS = new Set(["Control", "Shift", "Alt", "Meta"]);

function keyName(raw: string): string {
  const alias = ALIASES[raw.toLowerCase()];
  if (alias) return alias;
  if (/^f\d{1,2}$/i.test(raw)) return raw.toUpperCase();
  return raw;
}

/**
 * Parses what the model wrote ("Enter", "Control+a", "Tab Tab Enter") into presses. A word that is no key name is
 * typed as text.
 */
export function normalizeKeys(keys: string): KeyCombo[] {
  return keys
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((token) => {
      const parts = token.length > 1 ? token.split("+").filter(Boolean) : [token];
      const names = parts.map(keyName);
      const key = names.at(-1) ?? token;
      const modifiers = names.slice(0, -1);
      const known =
        key.length === 1 || ALIASES[key.toLowerCase()] !== undefined || /^F\d{1,2}$/.test(key) || MODIFIERS.has(key);
      if (!known && modifiers.length === 0) return { key, modifiers, text: token };
      return { key, modifiers };
    });
}
