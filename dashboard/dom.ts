/**
 * Building the page's elements. Everything the page shows comes from the cluster (names, labels,
 * states, times, explanations — and a log may hold whatever an older server let in), so it goes
 * in as text nodes and attribute values, never as markup: nothing a value holds is read as HTML.
 */

export type Child = Node | string | number | null | undefined | false;

/** Attributes by name; `--name` sets that CSS custom property, `true` an empty attribute, `false` or undefined none. */
export type Attributes = Record<string, string | number | boolean | undefined>;

/** `<tag attributes>children</tag>`: strings and numbers become text nodes; null, undefined and false are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes?: Attributes | null, ...children: Array<Child | Child[]>): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === false) continue;
    // Through the style object, not a style attribute: a Content-Security-Policy allows it.
    if (name.startsWith('--')) element.style.setProperty(name, String(value));
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false || child === '') continue;
    element.append(typeof child === 'number' ? String(child) : child);
  }
  return element;
}
