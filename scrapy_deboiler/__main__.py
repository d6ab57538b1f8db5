from ._cli import entry

entry()
