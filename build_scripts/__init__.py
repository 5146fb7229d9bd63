"""Build-time code: MkDocs integration, Markdown extensions, wheel and runtime files, figure rendering."""
