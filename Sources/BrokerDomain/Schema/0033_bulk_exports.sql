-- A company's FHIR bulk export (`BulkExportService`, the Bulk Data Access IG's system-level `$export`). The
-- kick-off writes the export and one file row per accepted single request of the company; a background
-- planner (`BulkExportPlanner`, `FOR UPDATE SKIP LOCKED` over the file rows, so several instances share the
-- work) fixes each file's arrival range and its count. Nothing is materialised: a file's GET streams that
-- request's released samples in the recorded range, through the download's own release rules.
CREATE TABLE bulk_exports (
    id               uuid PRIMARY KEY,
    third_party_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status           text NOT NULL DEFAULT 'planning' CHECK (status IN ('planning', 'complete')),
    -- The database's time at the kick-off, to the millisecond (the manifest's `transactionTime`): every file
    -- holds the samples whose upload batch was received at or before it, and none received after.
    transaction_time timestamptz NOT NULL,
    -- `_type` as granted (today only 'Observation'), `_since` as asked, and the earlier export of the same
    -- company whose `transactionTime` `_since` named: each file then starts at that export's bound.
    types            text NOT NULL,
    since            timestamptz,
    since_export     uuid REFERENCES bulk_exports (id) ON DELETE SET NULL,
    request_url      text NOT NULL,
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    planned          integer NOT NULL DEFAULT 0 CHECK (planned >= 0),
    total            integer NOT NULL CHECK (total >= 0),
    CHECK (planned <= total),
    CHECK ((status = 'complete') = (planned = total))
);
-- split
-- One export planning per company at a time, across instances (a second kick-off is a 429).
CREATE UNIQUE INDEX bulk_exports_one_planning_per_company ON bulk_exports (third_party_id) WHERE status = 'planning';
-- split
-- The `_since` look-up (an earlier export of the company by its transactionTime).
CREATE INDEX bulk_exports_by_company ON bulk_exports (third_party_id, transaction_time);
-- split
-- The sweep of expired exports.
CREATE INDEX bulk_exports_expiry ON bulk_exports (expires_at);
-- split
-- One NDJSON file per single request: samples with arrival in (cursor, bound], `count` of them when
-- planned. `bound` is NULL until the planner has fixed the range.
CREATE TABLE bulk_export_files (
    export_id  uuid NOT NULL REFERENCES bulk_exports (id) ON DELETE CASCADE,
    n          integer NOT NULL CHECK (n >= 1),
    request_id uuid NOT NULL REFERENCES single_requests (id) ON DELETE CASCADE,
    cursor     bigint NOT NULL DEFAULT 0,
    bound      bigint,
    count      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (export_id, n),
    UNIQUE (export_id, request_id)
);
-- split
-- The planner's queue: the files not yet planned.
CREATE INDEX bulk_export_files_unplanned ON bulk_export_files (export_id) WHERE bound IS NULL;
