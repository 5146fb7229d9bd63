// Typeset the math that pymdownx.arithmatex marks (generic mode) with the KaTeX copy the site serves itself.
// Material's instant navigation swaps page bodies without a reload, so typeset on every `document$` emission.
document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
});
