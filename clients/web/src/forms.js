// The new-match form, generated from ListGames' JSON Schema of each game's options: an enum
// is a select, an integer a number field with its bounds, a boolean a checkbox, the list of
// rounds a text field of round names (checked against the schema), the first dealer a
// select of the seats or "random"; every default filled in; an error shown next to its field.
import { h } from "./dom.js";

function roundNames(prop) {
  const first = prop.items && prop.items.oneOf && prop.items.oneOf[0];
  return first && first.enum ? first.enum : [];
}

function field(name, prop, players) {
  const id = `opt-${name}`;
  const label = name.replace(/_/g, " ");
  let input;
  if (prop.type === "array" && name === "rounds") {
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
  } else {
    return null; // per-round overrides: the defaults stand
  }
  input.dataset.option = name;
  return h("div", { className: "field" },
    h("label", { for: id }, label), input,
    prop.description ? h("small", { className: "hint" }, prop.description) : null,
    input.dataset.allowed ? h("small", { className: "hint" }, `one of ${input.dataset.allowed.split(",").join(", ")}`) : null,
    h("span", { className: "field-error", id: `${id}-error`, role: "alert" }));
}

// The option fields of `game` for `players` seats.
export function optionFields(game, players) {
  const props = (game.optionsSchema && game.optionsSchema.properties) || {};
  return Object.entries(props).map(([name, prop]) => field(name, prop, players)).filter(Boolean);
}

// The options object the fields say, or the errors by option name.
export function readOptions(container) {
  const options = {}, errors = {};
  for (const input of container.querySelectorAll("[data-option]")) {
    const name = input.dataset.option;
    const kind = input.dataset.kind;
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
    else options[name] = input.value;
  }
  return { options, errors };
}

// Show errors next to their fields; an error the server named by option goes there too.
export function showErrors(container, errors) {
  for (const el of container.querySelectorAll(".field-error")) el.textContent = "";
  for (const [name, text] of Object.entries(errors)) {
    const el = container.querySelector(`#opt-${CSS.escape(name)}-error`);
    if (el) el.textContent = text;
  }
}
