"""The production storage of static files: hashed, compressed names that may be cached forever.

The page scripts are ES modules that import each other (`import ... from
"../ragplatform/helpers.js"`); without import aggregation the hashed `chat.<hash>.js` would
still import the unhashed helpers, which a browser may then cache across a release.
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True
