"""Samples the CPU (user+sys) of the PostgreSQL backends serving one database, every INTERVAL s,
until the file STOP exists and no such backend is left; then prints the sum of the last value seen
for each backend, in seconds. A backend's CPU after its last sample is missed (<= INTERVAL each).

Usage: pgcpu_sampler.py POSTMASTER_PID DBNAME STOPFILE [INTERVAL]"""

import os
import sys
import time

postmaster, db, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
hz = os.sysconf("SC_CLK_TCK")
needle = (" %s " % db).encode()
last = {}  # pid -> ticks


def children():
    try:
        with open("/proc/%d/task/%d/children" % (postmaster, postmaster)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


deadline = None
while True:
    mine = 0
    for pid in children():
        try:
            if pid not in last:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if needle not in f.read().replace(b"\0", b" "):
                        continue
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            last[pid] = int(fields[11]) + int(fields[12])
            mine += 1
        except OSError:
            pass
    if os.path.exists(stop):
        if deadline is None:
            deadline = time.monotonic() + 10
        if mine == 0 or time.monotonic() > deadline:
            break
    time.sleep(interval)
print("%.2f %d" % (sum(last.values()) / hz, len(last)))
