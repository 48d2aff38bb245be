"""Entry point for ``python -m archive``.

A finished build leaves without the interpreter's teardown: unloading MuPDF's bindings
takes 0.12-0.16 s, a fixed cost of every run (about 2% of a 300-page build). The exit
handlers still run and the streams are flushed; an exception leaves the usual way.
"""

import atexit
import os
import sys

from archive.cli import main

code = main()
atexit._run_exitfuncs()
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except (OSError, ValueError):  # a closed pipe or stream: nothing left to say there
        pass
os._exit(code)
