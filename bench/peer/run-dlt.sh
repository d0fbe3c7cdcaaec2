#!/usr/bin/env bash
# Peer benchmark: one full backfill of the sandbox's AI-governance history into PostgreSQL by dlt.
#
#   bench/peer/run-dlt.sh N [default|best]
#
# Starts a fresh sandbox of N entries (from this checkout's build in dist/), creates a fresh database, runs
# bench/peer/pipeline.py under /usr/bin/time -v with a fresh dlt data dir and a fresh working
# directory (no state, no .dlt config carried over), prints ONE JSON line on stdout, then drops the
# database and stops the sandbox. Diagnostics go to stderr; the run's files are kept in $KEEP_DIR if
# set (else deleted).
#
# Variants:
#   default  dlt as documented, its default settings (insert_values, 1 normalize process, ...)
#   best     NORMALIZE__WORKERS=2 plus the documented settings that made it faster here
#            (see BEST_ENV below and bench/peer/README.md)
# Any dlt setting already in the environment (e.g. DATA_WRITER__BUFFER_MAX_ITEMS=...) is passed
# through as well and shows in the JSON's "settings".
set -euo pipefail

N=${1:?usage: run-dlt.sh N [default|best]}
VARIANT=${2:-default}
PEER=$(cd "$(dirname "$0")" && pwd)
MAIN=${MAIN_DIR:-$(cd "$PEER/../.." && pwd)}
# the Python that has dlt (a virtualenv with `pip install 'dlt[postgres]==1.26.0'`)
PY=${DLT_PYTHON:-python3}
PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres
export PGHOST PGPORT PGUSER

# The "best" settings (documented in dlt's "Optimizing dlt" page and the postgres destination page).
BEST_ENV=(
  NORMALIZE__WORKERS=2                 # normalize in a pool of 2 processes ...
  SOURCES__DATA_WRITER__FILE_MAX_ITEMS=$(( N / 2 > 1000 ? N / 2 : 1000 )) # ... fed 2 extract files
  DATA_WRITER__DISABLE_COMPRESSION=true  # no gzip of intermediary / load files
  DATA_WRITER__BUFFER_MAX_ITEMS=50000  # bigger write buffers (default 5000)
  # loader file format: dlt's default insert_values. csv (postgres COPY) was tried: less PostgreSQL
  # CPU but more dlt CPU and no faster at 10 000 entries (README.md); PEER_LOADER_FILE_FORMAT=csv
  # in the caller's environment selects it.
)

# always: no anonymous telemetry calls out of this machine (and none timed)
BASE_ENV=(RUNTIME__DLTHUB_TELEMETRY=false)

case $VARIANT in
  default) VARIANT_ENV=() ;;
  best) VARIANT_ENV=("${BEST_ENV[@]}") ;;
  *) echo "unknown variant: $VARIANT (default|best)" >&2; exit 2 ;;
esac
# a setting the caller exported wins over the variant's (for experiments)
KEPT=()
for kv in "${VARIANT_ENV[@]}"; do key=${kv%%=*}; [[ -n ${!key+x} ]] || KEPT+=("$kv"); done
VARIANT_ENV=("${KEPT[@]}")

WORK=$(mktemp -d /tmp/peer-dlt-run.XXXXXX)
DB=peer_dlt_$$_$(date +%s)
SANDBOX_PID=
cleanup() {
  set +e
  [[ -n ${SAMPLER_PID:-} ]] && kill "$SAMPLER_PID" 2>/dev/null
  if [[ -n $SANDBOX_PID ]] && kill -0 "$SANDBOX_PID" 2>/dev/null; then
    kill -TERM "$SANDBOX_PID"; wait "$SANDBOX_PID" 2>/dev/null
  fi
  dropdb --if-exists "$DB" 2>/dev/null
  if [[ -n ${KEEP_DIR:-} ]]; then mkdir -p "$KEEP_DIR" && cp -r "$WORK"/. "$KEEP_DIR"/; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the sandbox -----------------------------------------------------------------------------
# the project's own node (as its benchmarks use), else the system's
NODE=$MAIN/node_modules/node/bin/node; [[ -x $NODE ]] || NODE=node
(cd "$MAIN" && exec "$NODE" dist/src/main.js sandbox --json --entries "$N") >"$WORK/sandbox.json" 2>"$WORK/sandbox.err" &
SANDBOX_PID=$!
for _ in $(seq 1 1200); do   # seeding a large history takes a while: up to 10 min
  [[ -s $WORK/sandbox.json ]] && break
  kill -0 "$SANDBOX_PID" 2>/dev/null || { echo "sandbox died:" >&2; cat "$WORK/sandbox.err" >&2; exit 1; }
  sleep 0.5
done
[[ -s $WORK/sandbox.json ]] || { echo "sandbox did not start" >&2; exit 1; }
read -r BASE_URL CLIENT_ID CLIENT_SECRET SERVED < <(/usr/bin/python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).readline())
c = d["credentials"]["secret"]
print(d["baseUrl"], c["clientId"], c["clientSecret"], d["entries"])' "$WORK/sandbox.json")
[[ $SERVED == "$N" ]] || echo "warning: sandbox serves $SERVED entries, asked for $N" >&2

# --- the database ----------------------------------------------------------------------------
createdb "$DB"
PGDATA_DIR=$(psql -d "$DB" -Atc 'show data_directory')
POSTMASTER_PID=$(head -1 "$PGDATA_DIR/postmaster.pid" 2>/dev/null || true)

# CPU seconds (user+sys) a process has reaped from its exited children (PostgreSQL: the
# postmaster collects the CPU of every backend that ended), or its own CPU.
ticks() { awk -v f="$2" '{ sub(/^.*\) /, ""); if (f == "children") print $14 + $15; else print $12 + $13 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
backends_of_db() { for p in $(pgrep -P "$POSTMASTER_PID" 2>/dev/null); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q " $DB " && echo "$p"; done; true; }

# --- the run ---------------------------------------------------------------------------------
mkdir -p "$WORK/dlt-data" "$WORK/cwd"
PG_BEFORE=$( [[ -n $POSTMASTER_PID ]] && ticks "$POSTMASTER_PID" children || echo 0 )
API_BEFORE=$(ticks "$SANDBOX_PID" self)
LOAD1=$(cut -d' ' -f1 /proc/loadavg)
SAMPLER_PID=
if [[ -n $POSTMASTER_PID ]]; then
  /usr/bin/python3 "$PEER/pgcpu_sampler.py" "$POSTMASTER_PID" "$DB" "$WORK/stop" 0.05 >"$WORK/pgcpu.txt" &
  SAMPLER_PID=$!
fi
set +e
(
  cd "$WORK/cwd"
  env "${BASE_ENV[@]}" "${VARIANT_ENV[@]}" \
    DLT_DATA_DIR="$WORK/dlt-data" \
    SANDBOX_BASE_URL="$BASE_URL" SANDBOX_CLIENT_ID="$CLIENT_ID" SANDBOX_CLIENT_SECRET="$CLIENT_SECRET" \
    DATABASE_URL="postgresql://postgres@127.0.0.1:5432/$DB" \
    /usr/bin/time -v -o "$WORK/time.txt" "$PY" "$PEER/pipeline.py"
) >"$WORK/pipeline.out" 2>"$WORK/pipeline.err"
RC=$?
set -e
# the backends of the run end just after the client: wait for them so their CPU is reaped
touch "$WORK/stop"
for _ in $(seq 1 100); do [[ -z $(backends_of_db) ]] && break; sleep 0.1; done
[[ -n $SAMPLER_PID ]] && { wait "$SAMPLER_PID" || true; SAMPLER_PID=; }
read -r PG_SAMPLED PG_BACKENDS < <(cat "$WORK/pgcpu.txt" 2>/dev/null || echo "null 0")
PG_AFTER=$( [[ -n $POSTMASTER_PID ]] && ticks "$POSTMASTER_PID" children || echo 0 )
API_AFTER=$(ticks "$SANDBOX_PID" self)
if [[ $RC -ne 0 ]]; then
  echo "pipeline failed (rc=$RC):" >&2; tail -40 "$WORK/pipeline.err" >&2
fi
cat "$WORK/pipeline.err" >&2

count() { psql -d "$DB" -Atc "select count(*) from govtrail.$1" 2>/dev/null || echo null; }
ROWS=$(count history)
ANN=$(count history__metadata__annotations)
ACT=$(count history__snapshot__allowed_client_types)

SETTINGS=$(env "${BASE_ENV[@]}" "${VARIANT_ENV[@]}" env | grep -E '^(NORMALIZE|EXTRACT|LOAD|DATA_WRITER|SOURCES|DESTINATION|RUNTIME|DLT_USE_JSON|PEER_)[A-Z_]*=' | sort || true)

/usr/bin/python3 - "$WORK/time.txt" <<EOF
import json, re, sys
t = open(sys.argv[1]).read()
def field(name):
    m = re.search(r"^\s*" + re.escape(name) + r": (.*)$", t, re.M)
    return m.group(1).strip() if m else None
wall = 0.0
for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
    wall = wall * 60 + float(part)
user, sys_ = float(field("User time (seconds)")), float(field("System time (seconds)"))
rss_kib = int(field("Maximum resident set size (kbytes)"))
settings = dict(l.split("=", 1) for l in """$SETTINGS""".splitlines() if "=" in l)
def num(s):
    return None if s in ("", "null") else int(s)
print(json.dumps({
    "tool": "dlt", "variant": "$VARIANT", "entries": $N,
    "wallS": round(wall, 2), "cpuS": round(user + sys_, 2), "peakRssMiB": round(rss_kib / 1024, 1),
    "rows": num("$ROWS"),
    "childRows": {"history__metadata__annotations": num("$ANN"),
                  "history__snapshot__allowed_client_types": num("$ACT")},
    "userS": user, "sysS": sys_,
    # PostgreSQL: CPU of this run's backends, sampled every 50 ms (a lower bound) ...
    "pgCpuS": $PG_SAMPLED, "pgBackends": $PG_BACKENDS,
    # ... and CPU of all backends of the server that ended during the run (an upper bound: it also
    # counts other sessions' backends that ended meanwhile)
    "pgCpuReapedS": round(($PG_AFTER - $PG_BEFORE) / $HZ, 2) if "$POSTMASTER_PID" else None,
    "apiCpuS": round(($API_AFTER - $API_BEFORE) / $HZ, 2),
    "load1": $LOAD1, "exitCode": $RC, "settings": settings,
}))
EOF
[[ $RC -eq 0 && $ROWS == "$N" ]]
