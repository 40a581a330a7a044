// Page-wide bits: the error line, the readiness flags tests and tools wait on.
import { errorText } from "./rpc.js";

export const view = () => document.getElementById("view");
export function showError(error) {
  document.getElementById("error").textContent = error ? errorText(error) : "";
}
export function ready() { document.body.dataset.ready = "true"; }
export function flag(name, value) { document.body.dataset[name] = String(value); }
export const STATUS = ["unspecified", "waiting", "running", "ended"];
