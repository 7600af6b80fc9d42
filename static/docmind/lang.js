// Submits the language switch as soon as a language is picked (no inline handlers: the CSP forbids them).
document.querySelectorAll("form[data-lang-switch] select").forEach((select) => {
  select.addEventListener("change", () => select.form.submit());
});
