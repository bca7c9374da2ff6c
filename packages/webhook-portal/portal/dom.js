// @ts-check
/**
 * Building the page: elements from tag, attributes and children, and the live-region announcer.
 * Text always goes in as text nodes, never as markup.
 *
 * @typedef {Node | string | null | undefined | false} Child
 * @typedef {string | number | boolean | null | undefined | ((event: Event) => void)} AttrValue
 */

/**
 * Creates an element. Keys starting with `on` add listeners; `true` sets a boolean attribute;
 * `false`, `null` and `undefined` leave the attribute out. Children are nodes or text.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, AttrValue>} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      el.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} parent
 * @param {(Child | Child[])[]} children
 */
export function append(parent, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`The page shell lacks #${id}.`);
  return el;
}

/** @param {string} message */
export function announce(message) {
  const announcer = byId('announcer');
  // Clearing first makes screen readers repeat an identical message.
  announcer.textContent = '';
  window.setTimeout(() => {
    announcer.textContent = message;
  }, 50);
}

/**
 * A setting the server wrote into the shell as `<meta name="..." content="...">` (the page takes
 * no inline script): `holdfast-api-base`, `holdfast-portal-base`.
 * @param {string} name
 * @returns {string}
 */
export function pageSetting(name) {
  const meta = document.querySelector(`meta[name="${name}"]`);
  return meta instanceof HTMLMetaElement ? meta.content : '';
}
