"""The rehearsal of the paper scale on a CPU: a local HTTP mirror of every download (tiny files in the real
formats, tiny random checkpoints in the Hub's layout) and the server that serves it, with the faults a real
download meets (a 503, a connection cut mid-file) so retry and resume run too."""
