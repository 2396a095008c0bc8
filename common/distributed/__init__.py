"""Multi-process training: the collectives (``collectives``, the only module that calls them), where a process
stands in its job (``env``) and the per-node launcher (``launch``)."""
