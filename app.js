// After Settings -> Language, gradio 6.31 re-translates labels in place but leaves the
// buttons of tabs not on screen and its own upload-box words in the old language until
// they are clicked. svelte-i18n writes the language into <html lang>; when it changes,
// this puts those few texts right and clicks the hidden #borde-relang button, so each tab
// writes what is on screen (an answer, a status line) again in the new language.
// Some of gradio's own words are English in its code, not in its language tables (the
// queue's "processing |", an upload's "Invalid file type", the size limit's words, the icon
// buttons' labels): they are rewritten as they appear. __BORDE_TABLE__ is filled in by app.py.
(() => {
  const table = __BORDE_TABLE__;
  const gradio = {
    drop_file: ["Drop File Here", "Coloque el archivo aquí"],
    drop_image: ["Drop Image Here", "Coloque la imagen aquí"],
    click: ["Click to Upload", "Haga clic para cargar"],
    or: ["- or -", "- o -"],
    or_word: ["or", "o"],
  };
  for (const [key, [en, es]] of Object.entries(gradio)) {
    table.en["gradio_" + key] = en;
    table.es["gradio_" + key] = es;
  }
  const keyOf = {};
  for (const lang of Object.keys(table)) {
    for (const [key, text] of Object.entries(table[lang])) keyOf[text] = key;
  }
  const pageLang = () => ((document.documentElement.lang || "en").slice(0, 2) === "es" ? "es" : "en");

  // gradio's English, written in its code: [pattern, the Spanish with $1.. for the parts].
  const kinds = { "image/*": "imágenes", "image": "imágenes", ".pdf": "PDF", ".csv": "CSV",
                  ".safetensors": ".safetensors" };
  const spanish = [
    [/^processing \|$/, () => "procesando |"],
    [/^queue: (\d+)\/(\d*) \|$/, (m) => `en cola: ${m[1]}/${m[2]} |`],
    [/^Invalid file types?: (.*)\. Only (.*) allowed\.$/, (m) => {
      const allowed = m[2].split(", ").map((k) => kinds[k] || k).join(", ");
      return `Este archivo no se puede usar aquí: ${m[1]}. Solo se admiten: ${allowed}.`;
    }],
    [/^(?:Error: )?File\(s\) exceed the maximum allowed size of ([\d.]+ \w+): (.*)$/,
      (m) => `Archivo demasiado grande (el máximo es ${m[1]}): ${m[2]}`],
  ];
  const toSpanish = (node) => {
    const text = node.nodeValue.trim();
    if (!text || text.length > 400) return;
    for (const [pattern, words] of spanish) {
      const m = text.match(pattern);
      if (m) { node.nodeValue = node.nodeValue.replace(text, words(m)); return; }
    }
  };
  // gradio's icon buttons carry English in aria-label and title, not in its language tables
  const icons = { "Remove Image": "Eliminar imagen", "Clear": "Limpiar", "Download": "Descargar",
                  "Fullscreen": "Pantalla completa", "Exit fullscreen mode": "Salir de pantalla completa",
                  "Share": "Compartir", "Remove": "Eliminar", "Undo": "Deshacer" };
  const iconsToSpanish = (root) => {
    for (const el of [root, ...root.querySelectorAll("[aria-label], [title]")]) {
      for (const attr of ["aria-label", "title"]) {
        const words = icons[el.getAttribute?.(attr)];
        if (words) el.setAttribute(attr, words);
      }
    }
  };
  const spanishBelow = (root) => {
    if (root.nodeType === Node.TEXT_NODE) { toSpanish(root); return; }
    if (root.nodeType !== Node.ELEMENT_NODE) return;
    iconsToSpanish(root);
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) toSpanish(node);
  };
  new MutationObserver((changes) => {
    if (pageLang() !== "es") return;
    for (const change of changes) {
      if (change.type === "characterData") toSpanish(change.target);
      for (const added of change.addedNodes) spanishBelow(added);
    }
  }).observe(document.documentElement, { childList: true, subtree: true, characterData: true });

  const retranslate = () => {
    const lang = pageLang();
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      const text = node.nodeValue.trim();
      const key = keyOf[text];
      if (!key || table[lang][key] === text) continue;
      // "or" alone only inside an upload box, never in page text
      if (key === "gradio_or_word" && !node.parentElement?.closest("button, .wrap")) continue;
      node.nodeValue = node.nodeValue.replace(text, table[lang][key]);
    }
  };
  // The language the page was drawn in: no re-say for that one. gradio runs this script
  // after the page's load, when svelte-i18n has usually set <html lang> already.
  let shown = document.documentElement.lang ? pageLang() : null;
  new MutationObserver(() => {
    retranslate();
    const lang = pageLang();
    if (shown === null) { shown = lang; return; }
    if (lang === shown) return;
    shown = lang;
    document.querySelector("#borde-relang")?.click();
  }).observe(document.documentElement, { attributes: true, attributeFilter: ["lang"] });
  // A page whose language was already set when this ran sees no first change.
  window.addEventListener("load", () => setTimeout(() => { shown ??= pageLang(); }, 2000));
})();
