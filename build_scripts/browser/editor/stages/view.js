// entry.js's stage for @codemirror/view: one name re-exported (esbuild keeps only what create.js uses).
export {EditorView} from "@codemirror/view";
