"""Per-paper code: each subpackage holds one paper's method, configs and workflow."""
