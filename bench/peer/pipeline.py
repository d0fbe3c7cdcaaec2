"""Peer benchmark: dlt's rest_api source loading the sandbox's AI-governance settings history
into PostgreSQL (a full backfill), written the way dlt's documentation shows it.

Inputs (argument, else environment):
  --base-url       SANDBOX_BASE_URL       e.g. http://127.0.0.1:41234
  --client-id      SANDBOX_CLIENT_ID
  --client-secret  SANDBOX_CLIENT_SECRET
  --database-url   DATABASE_URL           e.g. postgresql://postgres@127.0.0.1:5432/peer_dlt_1
  --write-disposition append|merge        (PEER_WRITE_DISPOSITION, default append)
  --loader-file-format insert_values|csv  (PEER_LOADER_FILE_FORMAT, default: dlt's default for
                                           postgres, i.e. insert_values)

Everything else (normalize workers, buffer sizes, ...) is dlt configuration and is read by dlt
itself from the environment (NORMALIZE__WORKERS, DATA_WRITER__BUFFER_MAX_ITEMS, ...) or from
.dlt/config.toml, as documented.
"""

import argparse
import os
import sys
from urllib.parse import urlsplit, urlunsplit

# dlt sends anonymous usage telemetry by default; this machine has no outside network, and a
# benchmark should not time it: off unless the caller set it.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

import dlt
from dlt.sources.helpers.rest_client.auth import OAuth2ClientCredentials
from dlt.sources.helpers.rest_client.paginators import JSONResponseCursorPaginator
from dlt.sources.rest_api import rest_api_source

HISTORY_PATH = "api/v1/settings/ai-governance/history"


def history_source(base_url: str, client_id: str, client_secret: str, write_disposition: str):
    base_url = base_url.rstrip("/")
    resource = {
        "name": "history",
        "endpoint": {
            "path": HISTORY_PATH,
            "params": {"page_size": 100},
            "data_selector": "list",
        },
        "write_disposition": write_disposition,
    }
    if write_disposition == "merge":
        # the entry id lives at metadata.id; dlt flattens it to the column metadata__id
        resource["primary_key"] = "metadata__id"
    return rest_api_source(
        {
            "client": {
                "base_url": base_url + "/",
                "auth": OAuth2ClientCredentials(
                    access_token_url=base_url + "/auth/v1/token",
                    client_id=client_id,
                    client_secret=client_secret,
                ),
                "paginator": JSONResponseCursorPaginator(
                    cursor_path="nextPageToken", cursor_param="page_token"
                ),
            },
            "resources": [resource],
        },
        name="govtrail",
    )


def with_password(database_url: str) -> str:
    """dlt's PostgresCredentials require a password; the benchmark server uses trust auth, which
    ignores it, so a URL without one gets a placeholder."""
    u = urlsplit(database_url)
    if u.password is None and u.username:
        host = u.hostname + (":%d" % u.port if u.port else "")
        u = u._replace(netloc="%s:unused@%s" % (u.username, host))
    return urlunsplit(u)


def main() -> int:
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--base-url", default=env("SANDBOX_BASE_URL"))
    p.add_argument("--client-id", default=env("SANDBOX_CLIENT_ID"))
    p.add_argument("--client-secret", default=env("SANDBOX_CLIENT_SECRET"))
    p.add_argument("--database-url", default=env("DATABASE_URL"))
    p.add_argument("--dataset-name", default=env("PEER_DATASET_NAME", "govtrail"))
    p.add_argument("--pipeline-name", default=env("PEER_PIPELINE_NAME", "govtrail_history"))
    p.add_argument(
        "--write-disposition",
        choices=["append", "merge"],
        default=env("PEER_WRITE_DISPOSITION", "append"),
    )
    p.add_argument(
        "--loader-file-format",
        choices=["insert_values", "csv"],
        default=env("PEER_LOADER_FILE_FORMAT") or None,
    )
    args = p.parse_args()
    missing = [
        n
        for n in ("base_url", "client_id", "client_secret", "database_url")
        if not getattr(args, n)
    ]
    if missing:
        p.error("missing: " + ", ".join(missing))

    pipeline = dlt.pipeline(
        pipeline_name=args.pipeline_name,
        destination=dlt.destinations.postgres(credentials=with_password(args.database_url)),
        dataset_name=args.dataset_name,
    )
    source = history_source(args.base_url, args.client_id, args.client_secret, args.write_disposition)
    load_info = pipeline.run(source, loader_file_format=args.loader_file_format)
    print(load_info, file=sys.stderr)
    row_counts = pipeline.last_trace.last_normalize_info.row_counts
    steps = {
        st.step: round((st.finished_at - st.started_at).total_seconds(), 2)
        for st in pipeline.last_trace.steps
    }
    print("step seconds: %s" % steps, file=sys.stderr)
    print("normalized row counts: %s" % dict(sorted(row_counts.items())), file=sys.stderr)
    load_info.raise_on_failed_jobs()
    return 0


if __name__ == "__main__":
    sys.exit(main())
