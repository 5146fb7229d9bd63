// entry.js's stage for @codemirror/lang-python: one name re-exported (esbuild keeps only what create.js uses).
export {python} from "@codemirror/lang-python";
