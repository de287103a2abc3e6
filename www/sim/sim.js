// sim mode of the console (to be built): `mount(element, { connection })`.
export function mount(element) {
  element.textContent = "sim mode";
}
