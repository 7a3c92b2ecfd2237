-- Track4Run (issue 19): runs that organisers (third parties) create and people join. A runner's positions
-- reach spectators only through the single request the run sends them on its day (R38–R41), which they
-- accept (R46/R47): `run_participants.request_id`.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- A run. Its state is computed from time (upcoming, live, finished) unless it was cancelled. The path is
-- kept as parallel arrays of degrees: it is read whole (to draw it, to find its start, middle and finish)
-- and never queried by point.
CREATE TABLE runs (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organiser_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
    starts_at        timestamptz NOT NULL,
    duration_minutes integer NOT NULL CHECK (duration_minutes BETWEEN 10 AND 1440),
    max_participants integer NOT NULL CHECK (max_participants BETWEEN 1 AND 10000),
    path_latitudes   double precision[] NOT NULL,
    path_longitudes  double precision[] NOT NULL,
    path_metres      double precision NOT NULL,
    cancelled_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (cardinality(path_latitudes) = cardinality(path_longitudes) AND cardinality(path_latitudes) >= 2)
);
-- split
CREATE INDEX runs_by_start ON runs (starts_at);
-- split
CREATE INDEX runs_by_organiser ON runs (organiser_id, starts_at);
-- split

-- A runner of a run. `bib` is their public name on the spectator page unless they chose a display name;
-- their account's name and fiscal code are never shown. `request_id` is the run's single request to them,
-- sent on the run's day. `removed_at`: not checked in by the start (R48). Progress along the path is kept
-- incrementally: `seen_arrival` is the last of their positions looked at, `halfway_at` when they passed the
-- path's middle (so a loop's finish is not reached at the start), `finished_at` when they reached the finish.
CREATE TABLE run_participants (
    run_id             uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    user_id            uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    bib                integer NOT NULL,
    display_name       text CHECK (length(display_name) BETWEEN 1 AND 40),
    joined_at          timestamptz NOT NULL DEFAULT now(),
    request_id         uuid REFERENCES single_requests (id) ON DELETE SET NULL,
    checked_in_at      timestamptz,
    removed_at         timestamptz,
    seen_arrival       bigint NOT NULL DEFAULT 0,
    halfway_at         timestamptz,
    finished_at        timestamptz,
    -- Where the runner's track is hidden on the spectator page (their home, say), and how far around it.
    zone_latitude      double precision,
    zone_longitude     double precision,
    zone_metres        integer CHECK (zone_metres BETWEEN 100 AND 1000),
    PRIMARY KEY (run_id, user_id),
    UNIQUE (run_id, bib)
);
-- split
CREATE INDEX run_participants_by_user ON run_participants (user_id);
