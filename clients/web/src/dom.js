// A tiny element builder: h("div", { className: "x", "data-seat": 2 }, child, "text").
// Text goes in as text nodes, never as markup.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("data-") || k.startsWith("aria-") || k === "role" || k === "for") el.setAttribute(k, String(v));
    else if (k === "style") el.setAttribute("style", v);
    else el[k] = v;
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// Bring the live element `from` to look like the freshly built `to`, keeping every element
// that is still there (matched by tag and by `data-key` or `id`), so that a redraw after each
// event leaves the cards on the table in place: their transitions run, a newly played card
// alone animates in, and the focused button keeps the focus. Handlers (onclick...) are
// properties, copied over from the new element.
export function morph(from, to) {
  if (from.nodeType !== to.nodeType || from.nodeName !== to.nodeName || keyOf(from) !== keyOf(to)) {
    from.replaceWith(to);
    return to;
  }
  if (from.nodeType === Node.TEXT_NODE) {
    if (from.data !== to.data) from.data = to.data;
    return from;
  }
  if (from.nodeType !== Node.ELEMENT_NODE) return from;
  for (const { name } of [...from.attributes]) if (!to.hasAttribute(name)) from.removeAttribute(name);
  for (const { name, value } of [...to.attributes]) if (from.getAttribute(name) !== value) from.setAttribute(name, value);
  for (const prop of PROPS) if (from[prop] !== to[prop]) from[prop] = to[prop];
  if ("value" in to && from.value !== to.value && from !== document.activeElement) from.value = to.value;
  if ("disabled" in to && from.disabled !== to.disabled) from.disabled = to.disabled;
  if ("checked" in to && from.checked !== to.checked) from.checked = to.checked;
  if (from.tagName === "svg" || from.namespaceURI !== "http://www.w3.org/1999/xhtml") {
    if (!from.isEqualNode(to)) from.replaceWith(to);
    return from.isConnected ? from : to;
  }
  morphChildren(from, to);
  return from;
}

const PROPS = ["onclick", "onkeydown", "oninput", "onchange"];
const keyOf = (n) => (n.nodeType === Node.ELEMENT_NODE ? n.getAttribute("data-key") || n.id || "" : "");

function morphChildren(from, to) {
  const keyed = new Map();
  for (const child of from.childNodes) {
    const k = keyOf(child);
    if (k) keyed.set(`${child.nodeName}#${k}`, child);
  }
  const wanted = [...to.childNodes];
  let at = from.firstChild;
  for (const next of wanted) {
    const k = keyOf(next);
    let match = null;
    if (k) {
      match = keyed.get(`${next.nodeName}#${k}`) || null;
      if (match) keyed.delete(`${next.nodeName}#${k}`);
    } else if (at && !keyOf(at) && at.nodeName === next.nodeName) {
      match = at;
    }
    if (match) {
      if (match !== at) from.insertBefore(match, at);
      else at = at.nextSibling;
      morph(match, next);
    } else {
      from.insertBefore(next, at);
    }
  }
  // What follows the last wanted child is gone.
  while (at) {
    const gone = at;
    at = at.nextSibling;
    gone.remove();
  }
}
