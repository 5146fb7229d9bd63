// entry.js's stage for @codemirror/state: one name re-exported (esbuild keeps only what create.js uses).
export {EditorState} from "@codemirror/state";
