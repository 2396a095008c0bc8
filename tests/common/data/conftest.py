from .mirror import server  # noqa: F401  (the fixture, for every test of this package)
