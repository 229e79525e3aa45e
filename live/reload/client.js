// proofsite watch: reload this page when its output changes; show build
// errors over the page until the next good build. Served in watch mode only.
(() => {
  const me = document.currentScript;
  const path = me.dataset.path;
  let overlay = null;
  const show = (text) => {
    if (!overlay) {
      overlay = document.createElement("pre");
      overlay.id = "proofsite-overlay";
      overlay.setAttribute("role", "alert");
      document.body.appendChild(overlay);
    }
    overlay.textContent = text;
  };
  const hide = () => { if (overlay) { overlay.remove(); overlay = null; } };
  let instance = null;
  const events = new EventSource(me.dataset.events);
  events.addEventListener("hello", (e) => {
    const id = JSON.parse(e.data).instance;
    if (instance !== null && instance !== id) location.reload(); // the server restarted
    instance = id;
  });
  events.addEventListener("problem", (e) => show(JSON.parse(e.data).message));
  events.addEventListener("build", (e) => {
    const d = JSON.parse(e.data);
    hide();
    if (d.paths.includes(path) || d.paths.some((p) => p.startsWith("assets/"))) location.reload();
  });
})();
