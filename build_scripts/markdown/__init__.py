"""Python-Markdown extensions for the lessons: the authoring side of sandboxes, figures and quizzes."""
