// The new-match form, generated from ListGames' JSON Schema of each game's options: an enum
// is a select, an integer a number field with its bounds, a boolean a checkbox, the list of
// rounds a text field of round names (checked against the schema), the first dealer a
// select of the seats or "random"; every default filled in; an error shown next to its field.
// The options of each round type (an object: Fan Tan's openers and voluntary passes, the
// queens' points, the trumps round's trump, each one's multiplier...) are a group of fields of
// their own, sent only where they differ from the default; one round's own options go in
// brackets after its name in the list of rounds, "queens(multiplier=2)", checked against the
// schema's items.
import { h } from "./dom.js";

function roundNames(prop) {
  const first = prop.items && prop.items.oneOf && prop.items.oneOf[0];
  return first && first.enum ? first.enum : [];
}

// Per round type, the options one round of it may set (the schema's object items).
function roundItemOptions(prop) {
  const out = {};
  for (const alt of (prop.items && prop.items.oneOf) || []) {
    const props = alt.properties || {};
    if (props.type && "const" in props.type) {
      out[props.type.const] = Object.fromEntries(Object.entries(props).filter(([k]) => k !== "type"));
    }
  }
  return out;
}

// A round as the list shows it: its name, then its own options in brackets.
function roundText(item) {
  if (typeof item === "string") return item;
  const { type, ...rest } = item;
  return `${type}(${Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "object" ? words(v) : v}`).join(", ")})`;
}

// One round's option from its text, as its schema says (integer, boolean or enum), or why not.
function roundOption(type, key, text, props) {
  const prop = props[key];
  if (!prop) return { error: `${type} has no option ${key}: one of ${Object.keys(props).sort().join(", ")}` };
  if (prop.type === "integer") {
    const value = Number(text);
    const min = prop.minimum ?? -Infinity, max = prop.maximum ?? Infinity;
    if (text === "" || !Number.isInteger(value)) return { error: `${type}(${key}=…): a whole number` };
    if (value < min || value > max) return { error: `${type}(${key}=…): between ${min} and ${max}` };
    return { value };
  }
  if (prop.type === "boolean") {
    if (text !== "true" && text !== "false") return { error: `${type}(${key}=…): true or false` };
    return { value: text === "true" };
  }
  if (prop.enum) {
    const value = prop.enum.find((v) => String(v) === text);
    if (value === undefined) return { error: `${type}(${key}=…): one of ${prop.enum.join(", ")}` };
    return { value };
  }
  const choices = prop.oneOf && objectChoices(prop);
  if (choices) { // the trumps round's trump: "random", "fixed S"
    const value = choices.find((c) => words(c) === text);
    if (value === undefined) return { error: `${type}(${key}=…): one of ${choices.map(words).join(", ")}` };
    return { value };
  }
  return { error: `${type}(${key}=…): set it in the ${type} group below` };
}

// The list of rounds from its text ("pass, clubs, queens(multiplier=2)"), or why not.
export function parseRounds(text, allowed, itemOptions) {
  const rounds = [];
  let rest = text.trim();
  const item = /^([A-Za-z_]\w*)\s*(?:\(([^()]*)\))?\s*(?:,\s*|\s+|$)/;
  while (rest) {
    const m = item.exec(rest);
    if (!m) return { error: `cannot read "${rest}": round names, each with its options in brackets` };
    rest = rest.slice(m[0].length);
    const [, type, args] = m;
    if (!allowed.includes(type)) return { error: `unknown round ${type}: one of ${allowed.join(", ")}` };
    if (args === undefined || !args.trim()) { rounds.push(type); continue; }
    const round = { type };
    for (const pair of args.split(",")) {
      const [key, ...value] = pair.split("=");
      const got = roundOption(type, key.trim(), value.join("=").trim(), itemOptions[type] || {});
      if (got.error) return got;
      round[key.trim()] = got.value;
    }
    rounds.push(round);
  }
  return rounds.length ? { rounds } : { error: "name at least one round" };
}

// The choices of a oneOf of objects (the trumps round's `trump`): an alternative whose
// properties are constants is one choice; one with an enum besides, a choice per value.
function objectChoices(prop) {
  const out = [];
  for (const alt of prop.oneOf) {
    const props = alt.properties || {};
    const fixed = Object.fromEntries(Object.entries(props).filter(([, p]) => "const" in p).map(([k, p]) => [k, p.const]));
    const open = Object.entries(props).filter(([, p]) => !("const" in p));
    if (!open.length) out.push(fixed);
    else if (open.length === 1 && open[0][1].enum) {
      for (const v of open[0][1].enum) out.push({ ...fixed, [open[0][0]]: v });
    } else return null;
  }
  return out;
}

const words = (value) => Object.values(value).join(" ");
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// A round type's options: a group of fields named `type.option`.
function roundType(name, prop, players) {
  const inner = Object.entries(prop.properties).map(([k, p]) => field(`${name}.${k}`, p, players)).filter(Boolean);
  if (!inner.length) return null;
  return h("fieldset", { className: "round-options", id: `opt-${name}`, "data-round-type": name },
    h("legend", {}, name.replace(/_/g, " "), prop.description ? h("small", { className: "hint" }, ` — ${prop.description}`) : null),
    h("div", { className: "fields" }, ...inner),
    h("span", { className: "field-error", id: `opt-${name}-error`, role: "alert" }));
}

function field(name, prop, players) {
  const id = `opt-${name}`;
  const label = name.split(".").pop().replace(/_/g, " ");
  let input;
  if (prop.type === "object" && prop.properties && !name.includes(".")) {
    return roundType(name, prop, players);
  } else if (prop.type === "array" && name === "rounds") {
    input = h("input", { id, name, value: (prop.default || []).map(roundText).join(", "), size: 40 });
    input.dataset.kind = "rounds";
    input.dataset.allowed = roundNames(prop).join(",");
    const items = roundItemOptions(prop);
    input.dataset.items = JSON.stringify(items);
    const typed = Object.entries(items).find(([, p]) => Object.keys(p).length);
    if (typed) input.dataset.example = `${typed[0]}(${Object.keys(typed[1]).includes("multiplier") ? "multiplier" : Object.keys(typed[1])[0]}=2)`;
  } else if (prop.enum) {
    input = h("select", { id, name }, ...prop.enum.map((v) => h("option", { value: String(v), selected: v === prop.default }, String(v))));
    input.dataset.kind = typeof prop.enum[0] === "number" ? "integer" : "string";
  } else if (prop.oneOf && name === "first_dealer") {
    input = h("select", { id, name },
      ...Array.from({ length: players }, (_, s) => h("option", { value: String(s), selected: prop.default === s }, `seat ${s}`)),
      h("option", { value: "random", selected: prop.default === "random" }, "random"));
    input.dataset.kind = "dealer";
  } else if (prop.type === "integer") {
    input = h("input", { id, name, type: "number", value: String(prop.default ?? ""), min: prop.minimum ?? "", max: prop.maximum ?? "", step: 1 });
    input.dataset.kind = "integer";
  } else if (prop.type === "boolean") {
    input = h("input", { id, name, type: "checkbox", checked: Boolean(prop.default) });
    input.dataset.kind = "boolean";
  } else if (prop.oneOf && objectChoices(prop)) {
    const choices = objectChoices(prop);
    input = h("select", { id, name }, ...choices.map((c) => h("option", { value: JSON.stringify(c), selected: same(c, prop.default) }, words(c))));
    input.dataset.kind = "json";
  } else {
    return null; // a shape this form does not know: its default stands
  }
  input.dataset.option = name;
  if (name.includes(".")) input.dataset.default = JSON.stringify(prop.default ?? null);
  return h("div", { className: "field" },
    h("label", { for: id }, label), input,
    prop.description ? h("small", { className: "hint" }, prop.description) : null,
    input.dataset.allowed ? h("small", { className: "hint" }, `one of ${input.dataset.allowed.split(",").join(", ")}`) : null,
    input.dataset.example ? h("small", { className: "hint" }, `a round's own options in brackets, e.g. ${input.dataset.example}`) : null,
    h("span", { className: "field-error", id: `${id}-error`, role: "alert" }));
}

// The option fields of `game` for `players` seats; the round types' groups folded away below
// the others.
export function optionFields(game, players) {
  const props = (game.optionsSchema && game.optionsSchema.properties) || {};
  const all = Object.entries(props).map(([name, prop]) => field(name, prop, players)).filter(Boolean);
  const groups = all.filter((el) => el.tagName === "FIELDSET");
  const plain = all.filter((el) => el.tagName !== "FIELDSET");
  if (!groups.length) return plain;
  return [...plain, h("details", { id: "round-options", className: "round-types" },
    h("summary", {}, "Options of each round type"), ...groups)];
}

// The options object the fields say, or the errors by option name. A round type's option
// (`fan_tan.voluntary_pass`) goes into that type's object, and only when not its default.
export function readOptions(container) {
  const top = {}, errors = {};
  for (const input of container.querySelectorAll("[data-option]")) {
    const name = input.dataset.option;
    const kind = input.dataset.kind;
    const options = {};
    if (kind === "rounds") {
      const read = parseRounds(input.value, input.dataset.allowed.split(","), JSON.parse(input.dataset.items));
      if (read.error) errors[name] = read.error;
      else options[name] = read.rounds;
    } else if (kind === "integer") {
      const value = Number(input.value);
      const min = input.min === "" ? -Infinity : Number(input.min), max = input.max === "" ? Infinity : Number(input.max);
      if (!Number.isInteger(value)) errors[name] = "a whole number";
      else if (value < min || value > max) errors[name] = `between ${input.min || "-∞"} and ${input.max || "∞"}`;
      else options[name] = value;
    } else if (kind === "boolean") options[name] = input.checked;
    else if (kind === "dealer") options[name] = input.value === "random" ? "random" : Number(input.value);
    else if (kind === "json") options[name] = JSON.parse(input.value);
    else options[name] = input.value;
    if (!(name in options)) continue;
    const dot = name.indexOf(".");
    if (dot < 0) top[name] = options[name];
    else if (!same(options[name], JSON.parse(input.dataset.default))) {
      const type = name.slice(0, dot);
      top[type] = { ...(top[type] || {}), [name.slice(dot + 1)]: options[name] };
    }
  }
  return { options: top, errors };
}

// The option a server's refusal names ("option fan_tan.multiplier: ..."), if the form has it.
export function namedOption(container, text) {
  const named = /option ([\w.]+)/.exec(text);
  if (!named) return null;
  const parts = named[1].split(".");
  for (let n = parts.length; n > 0; n -= 1) {
    const path = parts.slice(0, n).join(".");
    if (container.querySelector(`#opt-${CSS.escape(path)}-error`)) return path;
  }
  return null;
}

// Show errors next to their fields; an error the server named by option goes there too.
export function showErrors(container, errors) {
  for (const el of container.querySelectorAll(".field-error")) el.textContent = "";
  for (const [name, text] of Object.entries(errors)) {
    const el = container.querySelector(`#opt-${CSS.escape(name)}-error`);
    if (el) el.textContent = text;
    const folded = el && el.closest("details");
    if (folded) folded.open = true; // a round type's option: show where it is
  }
}
