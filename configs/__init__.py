"""Per-task configs. Importing this package registers the built-in tasks: every module of the package is imported
(a new task family's ``configs/<family>.py`` registers its tasks without an edit here)."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
