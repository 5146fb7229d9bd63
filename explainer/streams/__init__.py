"""Streams: long computations the browser runs a chunk at a time (see explainer.live). A stream called `name` lives in
the module explainer.streams.<name>, declared with `@explainer.live.stream("name")`; it is imported on first use."""
