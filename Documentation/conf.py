# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of the smbdirect documentation: `make docs` renders
# it with Debian's python3-sphinx (bookworm: 5.3) and fails on any warning.
# No extension beyond Sphinx itself, nothing fetched from the network.

project = 'smbdirect'
author = 'The smbdirect developers'
copyright = 'The smbdirect developers'

# The version is MODULE_VERSION in kernel/main.c, as dkms.conf reads it.
import os
import re

_main_c = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       '..', 'kernel', 'main.c')
with open(_main_c, encoding='utf-8') as _f:
    _m = re.search(r'^MODULE_VERSION\("([^"]+)"\);$', _f.read(), re.M)
version = release = _m.group(1) if _m else 'unknown'

root_doc = 'index'
source_suffix = '.rst'
# man/ holds the roff pages (library.rst summarises them), licenses/ the
# license texts.
exclude_patterns = ['man', 'licenses', '_build']

# As the kernel's Documentation/conf.py: literal blocks are not highlighted
# unless a block names its language.
highlight_language = 'none'
primary_domain = 'c'

# Debian packages the Read-the-Docs theme (python3-sphinx-rtd-theme, which
# `make deps` installs); without it Sphinx's own default theme is used.
try:
    import sphinx_rtd_theme  # noqa: F401
    html_theme = 'sphinx_rtd_theme'
except ImportError:
    html_theme = 'alabaster'
html_title = 'smbdirect %s documentation' % release
html_show_sourcelink = False
html_copy_source = False
