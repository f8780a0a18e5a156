import type { ElementHandle, Keyboard, KeyInput, Page } from "puppeteer-core";
import type { Tab } from "./browser-tabs";
import { loadPageScript } from "./page-script";

/** A failed action, worded for the model: it is sent back so the model can try something else. */
export class ActionError extends Error {
  override name = "ActionError";
}

/** The element behind an index of the last observation of this tab. */
export async function resolveElement(tab: Tab, index: number): Promise<ElementHandle<Element>> {
  const ref = tab.elementRefs.get(index);
  if (!ref || ref.frame.detached) {
    throw new ActionError(
      `There is no element with index ${index} on the current page. Use an index shown in the page content.`,
    );
  }
  const handle = (await ref.frame
    .evaluateHandle((id) => {
      const el = (window as unknown as { __basElements?: Map<number, Element> }).__basElements?.get(id);
      return el?.isConnected ? el : null;
    }, ref.id)
    .catch(() => null)) as ElementHandle<Element> | null;
  const element = handle?.asElement() as ElementHandle<Element> | null;
  if (!element) {
    await handle?.dispose().catch(() => undefined);
    throw new ActionError(
      `Element ${index} is no longer on the page (the page changed). Look at the new page content.`,
    );
  }
  return element;
}

export async function clickElement(element: ElementHandle<Element>): Promise<void> {
  try {
    await element.click();
  } catch {
    // Not clickable at a point (zero-size, covered, off-screen in a scroller): dispatch the click on the element.
    await element.evaluate((el) => (el as HTMLElement).click());
  }
}

interface FieldInfo {
  kind: "text" | "contenteditable" | "other";
  tag: string;
  type: string;
}

export async function typeInto(
  page: Page,
  element: ElementHandle<Element>,
  text: string,
  clear: boolean,
  mask: boolean,
): Promise<void> {
  const info = await element.evaluate((el): FieldInfo => {
    const tag = el.tagName.toLowerCase();
    const type = (el as HTMLInputElement).type ?? "";
    const textual =
      tag === "textarea" ||
      (tag === "input" &&
        !["checkbox", "radio", "button", "submit", "file", "image", "reset", "range", "color"].includes(type));
    return { kind: textual ? "text" : (el as HTMLElement).isContentEditable ? "contenteditable" : "other", tag, type };
  });
  if (info.kind === "other") {
    throw new ActionError(
      `Element is a <${info.tag}${info.type ? ` type=${info.type}` : ""}>, not a text field; click it or pick another element.`,
    );
  }
  await element.evaluate(
    (el, clearFirst, maskValue) => {
      const field = el as HTMLInputElement;
      field.focus();
      if (clearFirst) {
        if ("value" in field) {
          // The native setter, so frameworks that track the value (React) notice the change.
          const proto = Object.getPrototypeOf(field);
          Object.getOwnPropertyDescriptor(proto, "value")?.set?.call(field, "");
          field.dispatchEvent(new Event("input", { bubbles: true }));
        } else {
          (el as HTMLElement).textContent = "";
        }
      } else if ("setSelectionRange" in field && typeof field.value === "string") {
        try {
          field.setSelectionRange(field.value.length, field.value.length);
        } catch {}
      }
      if (maskValue) (el as HTMLElement).style.setProperty("-webkit-text-security", "disc");
    },
    clear,
    mask,
  );
  // Real key events for short text (autocompletes listen to them); one insertText (an input event) for longer text,
  // which would otherwise flood the page with events.
  if (text.length <= 16) await typeKeys(page.keyboard, text);
  else await page.keyboard.sendCharacter(text);
  await element.evaluate((el) => el.dispatchEvent(new Event("change", { bubbles: true })));
}

/** Characters puppeteer's US layout has a key for (printable ASCII, Enter, Tab); others are inserted as text. */
const TYPED_AS_KEY = /^[\x20-\x7e\n\r\t]$/;

/**
 * The key events `keyboard.type` would send, without waiting for each: CDP runs a session's commands in order, so
 * the page sees the same sequence, for one round trip instead of two per character.
 */
function typeKeys(keyboard: Keyboard, text: string): Promise<unknown> {
  return Promise.all(
    [...text].flatMap((c) =>
      TYPED_AS_KEY.test(c) ? [keyboard.down(c as KeyInput), keyboard.up(c as KeyInput)] : [keyboard.sendCharacter(c)],
    ),
  );
}

export async function selectOption(element: ElementHandle<Element>, option: string): Promise<string> {
  const result = await element.evaluate((el, wanted) => {
    if (el.tagName !== "SELECT") return { error: `<${el.tagName.toLowerCase()}>` };
    const select = el as HTMLSelectElement;
    const options = Array.from(select.options);
    // No named inner functions here: this runs in the page (see page-script.ts).
    const want = wanted.replace(/\s+/g, " ").trim().toLowerCase();
    const match =
      options.find((o) => o.text.trim() === wanted.trim()) ??
      options.find((o) => o.value === wanted) ??
      options.find((o) => o.text.replace(/\s+/g, " ").trim().toLowerCase() === want) ??
      options.find((o) => o.text.replace(/\s+/g, " ").trim().toLowerCase().includes(want));
    if (!match) return { missing: options.map((o) => o.text.trim()).slice(0, 30) };
    select.value = match.value;
    match.selected = true;
    select.dispatchEvent(new Event("input", { bubbles: true }));
    select.dispatchEvent(new Event("change", { bubbles: true }));
    return { chosen: match.text.trim() };
  }, option);
  if ("error" in result)
    throw new ActionError(`The element is a ${result.error}, not a <select>; click it to open its options instead.`);
  if ("missing" in result)
    throw new ActionError(`No option "${option}". Options are: ${(result.missing ?? []).join(" | ")}`);
  return result.chosen ?? option;
}

const cssSelector = loadPageScript("css-selector-script.js").fn;

/** A CSS selector that finds the element again in a fresh browser (for code mode), through open shadow roots. */
export async function selectorOf(element: ElementHandle<Element>): Promise<string> {
  return element.evaluate(cssSelector as (el: Element) => string);
}

/**
 * Gives a file input the file through the page's own DataTransfer, then tells the page (`input`, `change`) as a pick
 * would. This works wherever the browser runs (a Kubernetes pod, another host): the bytes travel over CDP, where a
 * file path (`DOM.setFileInputFiles`) would have to exist on the browser's machine.
 */
export async function fillFileInput(
  element: ElementHandle<Element>,
  index: number,
  file: { name: string; contentType: string; data: Uint8Array },
): Promise<string> {
  const base64 = Buffer.from(file.data).toString("base64");
  const outcome = await element.evaluate(
    (el, name, type, content) => {
      if (!(el instanceof HTMLInputElement) || el.type !== "file") return "not-file-input";
      if (el.disabled) return "disabled";
      const bytes = Uint8Array.from(atob(content), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], name, { type }));
      el.files = transfer.files;
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return "ok";
    },
    file.name,
    file.contentType,
    base64,
  );
  if (outcome === "not-file-input") {
    throw new ActionError(`Element ${index} is not a file input (<input type=file>); upload_file needs one.`);
  }
  if (outcome === "disabled") throw new ActionError(`The file input ${index} is disabled.`);
  return `Put ${file.name} (${file.data.length} bytes) into the file input ${index}.`;
}
