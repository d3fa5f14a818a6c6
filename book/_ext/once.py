"""A Sphinx extension for this book: every script a page loads, loaded once.

sphinx-thebe registers its configuration script at each ``env-before-read-docs``, which the
Jupyter Book build fires twice, so pages declared ``const THEBE_JS_URL`` twice (a JavaScript
error in every browser). Duplicate entries are dropped from each page's script list."""


def _once(app, pagename, templatename, context, doctree):
    kept = []
    for script in context.get("script_files", []):
        if script not in kept:
            kept.append(script)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", _once, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
