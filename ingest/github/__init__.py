"""`ask ingest github OWNER/REPO`: keep a local copy of a repository's issues and their comments,
and turn it into index units so answers can list similar reports.

    ask ingest github sgl-project/sglang                  sync from the REST API (token: $GITHUB_TOKEN)
    ask ingest github sgl-project/sglang --full           re-list everything; drop deleted / transferred issues
    ask ingest github sgl-project/sglang --from-export F  import `gh issue list --json ...` or REST JSON

What is stored, under <kb_dir>/github/<owner>__<repo>/:
    issues.jsonl   the raw cache: one line per fetched issue, {"number", "updated_at", "issue": <REST issue>,
                   "comments": [<REST comment>, ...]}, appended as fetched (the last line of a number wins),
                   or a tombstone {"number", "gone": reason}; rewritten compactly after each finished sync
    state.json     the checkpoint: the `since` cursor of the last finished sync, and the listing page in
                   progress, so an interrupted sync resumes where it stopped

The modules, each one step:
    errors   GitHubError and the resumable Interrupted / RateLimited
    client   the REST client: pagination, retries of transient errors, rate limits honoured
    store    IssueStore: the raw cache and the checkpoint of one repository; every stored issue as units
    sync     the incremental sync from the API, checkpointed per listing page
    export   importing `gh issue list --json` / REST JSON exports instead of calling the API
    units    one issue thread -> one index unit (thread cap, bots and noise dropped, signatures)
    command  the `ask ingest github` command line
"""
