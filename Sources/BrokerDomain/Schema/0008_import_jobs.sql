-- Apple Health imports too large to answer in one request run as jobs (`ImportJobs`): the request answers
-- 202 with the job's URL, and the person polls it. Live progress is kept in memory by the instance running
-- the import; this table keeps what must outlive it: who owns the job, and how it ended. Success is
-- recorded inside the import's own transaction (atomic with the data); failure in a short transaction after
-- it rolled back. An instance that starts marks the jobs whose import is gone (no transaction holds their
-- row lock) as failed: their transaction rolled back with the process that ran it.
CREATE TABLE import_jobs (
    id           uuid PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status       text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed')),
    bytes_total  bigint NOT NULL CHECK (bytes_total >= 0),
    -- The final progress figures (while running, the live ones are in the running instance's memory).
    bytes_read   bigint NOT NULL DEFAULT 0,
    records_read bigint NOT NULL DEFAULT 0,
    stored       bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    -- The import's result (succeeded) or its problem document (failed), as the API shows them.
    result       jsonb,
    problem      jsonb,
    CHECK ((status = 'running') = (finished_at IS NULL)),
    CHECK ((status = 'succeeded') = (result IS NOT NULL)),
    CHECK ((status = 'failed') = (problem IS NOT NULL))
);
-- split
-- One running import per person, across instances: a second one would only queue behind the first's
-- lock on the person's arrival counter.
CREATE UNIQUE INDEX import_jobs_one_running_per_person ON import_jobs (user_id) WHERE status = 'running';
