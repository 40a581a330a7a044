// The new-match form, generated from ListGames' JSON Schema of each game's options: an enum
// is a select, an integer a number field with its bounds, a boolean a checkbox, the list of
// rounds a text field of round names (checked against the schema), the first dealer a
// select of the seats or "random"; every default filled in; an error shown next to its field.
// The options of each round type (an object: Fan Tan's openers and voluntary passes, the
// queens' points, the trumps round's trump, each one's multiplier...) are a group of fields of
// their own, sent only where they differ from the default.
import { h } from "./dom.js";

function roundNames(prop) {
  const first = prop.items && prop.items.oneOf && prop.items.oneOf[0];
  return first && first.enum ? first.enum : [];
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
    input = h("input", { id, name, value: (prop.default || []).join(", "), size: 40 });
    input.dataset.kind = "rounds";
    input.dataset.allowed = roundNames(prop).join(",");
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
      const allowed = input.dataset.allowed.split(",");
      const rounds = input.value.split(/[\s,]+/).filter(Boolean);
      const bad = rounds.filter((r) => !allowed.includes(r));
      if (!rounds.length) errors[name] = "name at least one round";
      else if (bad.length) errors[name] = `unknown round ${bad.join(", ")}: one of ${allowed.join(", ")}`;
      else options[name] = rounds;
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
