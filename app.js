// After Settings -> Language, gradio 6.31 re-translates labels in place but leaves the
// buttons of tabs not on screen and its own upload-box words in the old language until
// they are clicked. svelte-i18n writes the language into <html lang>; when it changes,
// this puts those few texts right. __BORDE_TABLE__ is filled in by app.py.
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
  const retranslate = () => {
    const lang = (document.documentElement.lang || "en").slice(0, 2) === "es" ? "es" : "en";
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
  new MutationObserver(retranslate).observe(document.documentElement,
    { attributes: true, attributeFilter: ["lang"] });
})();
