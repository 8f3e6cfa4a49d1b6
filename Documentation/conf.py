# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of ksft_perfmon's documentation; scripts/docs.sh
# builds it (make docs) with the kernel's kernel-doc extension and script
# from the kernel source in $KPM_KSRC, warnings being errors.

import os
import sys

ksrc = os.environ["KPM_KSRC"]
sys.path.insert(0, os.path.join(ksrc, "Documentation", "sphinx"))

project = "ksft_perfmon"
author = "ksft_perfmon developers"
copyright = "ksft_perfmon developers"   # noqa: A001 (Sphinx's name)
extensions = ["kerneldoc"]
kerneldoc_bin = os.path.join(ksrc, "scripts", "kernel-doc")
kerneldoc_srctree = os.environ["KPM_TREE"]
root_doc = master_doc = "index"
exclude_patterns = ["conf.py"]
highlight_language = "none"
html_theme = "alabaster"
html_static_path = []

man_pages = [
    ("man/ksft-perfmon-nl", "ksft-perfmon-nl",
     "drive the ksft_perfmon module, print KTAP metric lines", [author], 8),
    ("man/ksft-perfmon-report", "ksft-perfmon-report",
     "summarize, compare and plot KTAP metric lines", [author], 1),
]
man_show_urls = False

# as the kernel's own conf.py declares them to Sphinx's C domain
c_id_attributes = ["__init", "__exit", "__always_inline", "__must_check"]
smartquotes = False   # "--ifname" stays two hyphens in the man pages
