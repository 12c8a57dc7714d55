"""MkDocs hook: the module docstrings are written for Sphinx-style readers (``:func:`name```, ``Example::``);
this renders those two idioms plainly on the API pages, without editing the modules.

- a role before inline code (``:func:<code>x</code>``) keeps only the code;
- a paragraph ending in ``::`` (reStructuredText's "literal block follows") ends in ``:``.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|obj|exc):(<code>)")
LITERAL_INTRO = re.compile(r"::(</p>)")


def on_page_content(html: str, **kwargs) -> str:
    return LITERAL_INTRO.sub(r":\1", ROLE.sub(r"\1", html))
