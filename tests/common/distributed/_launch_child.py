"""A rank started by common.distributed.launch in the launcher's tests. argv: out_dir mode (env | fail | signal)."""
import json
import os
import signal
import sys
import time
from pathlib import Path

out, mode = Path(sys.argv[1]), sys.argv[2]
rank = int(os.environ["RANK"])
if mode == "env":
    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS", "XLING_LAUNCHER")
    (out / f"rank{rank}.json").write_text(json.dumps({k: os.environ.get(k) for k in keys}))
elif mode == "fail":
    if rank == 1:
        sys.exit(3)
    time.sleep(120)  # stopped by the launcher long before this
elif mode == "signal":
    got = []
    signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
    (out / f"ready{rank}").touch()
    deadline = time.time() + 60
    while not got and time.time() < deadline:
        time.sleep(0.05)
    (out / f"usr1_{rank}").write_text(str(bool(got)))
