"""A Sphinx extension for this book: every script a page loads, loaded once.

sphinx-thebe and sphinx-togglebutton register their inline configuration scripts at events
that the Jupyter Book build fires twice (the second time with an empty file name instead of
None), so pages declared ``const THEBE_JS_URL`` twice: a JavaScript error in every browser.
Entries equal but for that are dropped from each page's script list."""


def _key(script):
    attributes = getattr(script, "attributes", {})
    return (getattr(script, "filename", script) or "", tuple(sorted(attributes.items())))


def _once(app, pagename, templatename, context, doctree):
    kept, seen = [], set()
    for script in context.get("script_files", []):
        if _key(script) not in seen:
            seen.add(_key(script))
            kept.append(script)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", _once, priority=100)  # before any handler that
    # returns a template name: Sphinx stops calling handlers at the first result
    return {"parallel_read_safe": True, "parallel_write_safe": True}
