// entry.js's stage for @codemirror/language: one name re-exported (esbuild keeps only what create.js uses).
export {syntaxHighlighting} from "@codemirror/language";
